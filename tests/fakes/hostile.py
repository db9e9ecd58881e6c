"""A hostile or broken Crossref on 127.0.0.1: raw sockets, one fault per server.

Independent of :mod:`fakes.crossref` (which is well-behaved): this one writes HTTP by hand so it can
misbehave the way real servers, proxies and attackers do: answers that do not validate (status
failed, an empty message, a record of another DOI, duplicates, wrong shapes, an HTML page), a
redirect to another host, headers or a body dripped a byte at a time, a gzip bomb, a body cut
short.
Every answer is built from the recorded Wakefield record (tests/fixtures/crossref).
"""

from __future__ import annotations

import contextlib
import copy
import json
import socketserver
import threading
import time
import urllib.parse
import zlib
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "crossref"
WAKEFIELD = "10.1016/s0140-6736(97)11096-0"
CLEAN = "10.1038/nature12373"

FAULTS = (
    "status_failed",
    "empty_message",
    "other_doi",
    "duplicates",
    "updated_by_object",
    "notice_without_type",
    "wrong_message_type",
    "html_page",
    "json_array",
    "items_not_list",
    "cross_host_redirect",
    "drip",
    "drip_headers",
    "stall",
    "gzip_bomb",
    "huge_length",
    "truncated",
)


_BOMB: list[bytes] = []


def gzip_bomb(size: int = 400 * 1024 * 1024) -> bytes:
    """``size`` bytes of spaces, gzipped (~400 kB), made without holding them in memory."""
    if not _BOMB:
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip container
        block = b" " * (1024 * 1024)
        parts = [packer.compress(block) for _ in range(size // len(block))]
        _BOMB.append(b"".join(parts) + packer.flush())
    return _BOMB[0]


def _record(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data["message"]


class _Handler(socketserver.StreamRequestHandler):
    server: HostileCrossref.Server

    def handle(self) -> None:
        line = self.rfile.readline(65537).decode("latin-1")
        while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
            pass
        target = line.split(" ")[1] if line.count(" ") >= 2 else "/"
        self.server.owner.requests += 1
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.server.owner.respond(self, target)


class HostileCrossref:
    """``with HostileCrossref("drip") as bad: bad.url`` — one fault for every request."""

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True
        owner: HostileCrossref

    def __init__(self, fault: str) -> None:
        assert fault in FAULTS, fault
        self.fault = fault
        self.requests = 0
        self.tick = 0.01
        """Seconds between two bytes of a drip (at least: a busy machine sends fewer bytes)."""
        self.drip_limit = 6000
        """About how many header bytes ``drip_headers`` sends before the blank line (a minute)."""
        self.sent = 0
        """Bytes a drip has sent so far: how long the client listened, counted without a clock."""
        self.wakefield = _record("wakefield-1998-lancet.json")
        self.clean = _record("clean-2013-nature.json")
        self._server = self.Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> HostileCrossref:
        serve = self._server.serve_forever  # polled every 50 ms: shutdown() waits for one poll
        threading.Thread(target=serve, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --- answers -----------------------------------------------------------------------------

    def _message(self, single: bool) -> Any:
        """The answer's ``message`` for the fault, a list's or a single work's."""
        wakefield = copy.deepcopy(self.wakefield)
        if self.fault == "updated_by_object":
            wakefield["updated-by"] = wakefield["updated-by"][-1]
        elif self.fault == "notice_without_type":
            for entry in wakefield["updated-by"]:
                entry.pop("type", None)
        if self.fault == "empty_message":
            return {} if single else {"items": []}
        if self.fault == "other_doi":
            return self.clean if single else {"items": [self.clean]}
        if self.fault == "duplicates":
            bare = {k: v for k, v in wakefield.items() if k != "updated-by"}
            return wakefield if single else {"items": [bare, wakefield]}
        if self.fault == "items_not_list":
            return wakefield if single else {"items": {"0": wakefield}}
        return wakefield if single else {"items": [wakefield]}

    def _body(self, target: str) -> dict[str, Any] | list[Any]:
        path = urllib.parse.urlsplit(target).path
        single = path.startswith("/works/")
        if single:
            asked = urllib.parse.unquote(path[len("/works/") :]).lower()
            if asked != WAKEFIELD and self.fault not in ("other_doi",):
                return {"status": "ok", "message-type": "__404__", "message": None}
        kind = "work" if single else "work-list"
        if self.fault == "wrong_message_type":
            kind = "work" if not single else "work-list"
        status = "failed" if self.fault == "status_failed" else "ok"
        if self.fault == "json_array":
            return [self._message(single)]
        return {"status": status, "message-type": kind, "message": self._message(single)}

    def respond(self, handler: _Handler, target: str) -> None:
        write = handler.wfile.write
        if self.fault == "cross_host_redirect":
            where = f"http://localhost:{self.port}{target}"
            write(f"HTTP/1.1 302 Found\r\nLocation: {where}\r\nContent-Length: 0\r\n\r\n".encode())
            return
        if self.fault == "html_page":
            page = b"<html><body>Sign in to continue</body></html>"
            head = f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(page)}\r\n"
            write(head.encode() + b"Connection: close\r\n\r\n" + page)
            return
        body = self._body(target)
        if isinstance(body, dict) and body.get("message-type") == "__404__":
            text = b"Resource not found."
            head = "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n"
            write(f"{head}Content-Length: {len(text)}\r\nConnection: close\r\n\r\n".encode() + text)
            return
        data = json.dumps(body).encode()
        head = "HTTP/1.1 200 OK\r\nContent-Type: application/json;charset=utf-8\r\n"
        if self.fault == "drip_headers":
            padding = b"X-Pad: " + b"a" * 60 + b"\r\n"
            lines = padding * max(1, self.drip_limit // len(padding))
            self._drip(handler, f"{head}Content-Length: {len(data)}\r\n".encode() + lines)
            write(b"\r\n" + data)
            return
        if self.fault == "gzip_bomb":
            bomb = gzip_bomb()
            write(f"{head}Content-Encoding: gzip\r\nContent-Length: {len(bomb)}\r\n\r\n".encode())
            write(bomb)
            return
        if self.fault == "huge_length":
            write(f"{head}Content-Length: {50 * 1024 * 1024 * 1024}\r\n\r\n".encode() + data)
            return
        if self.fault == "truncated":
            write(f"{head}Content-Length: {len(data)}\r\n\r\n".encode() + data[: len(data) // 2])
            return
        write(f"{head}Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode())
        if self.fault == "stall":
            time.sleep(60)
            return
        if self.fault == "drip":
            self._drip(handler, data)
            return
        write(data)

    def _drip(self, handler: _Handler, data: bytes) -> None:
        """``data`` a byte every :attr:`tick` seconds, counted in :attr:`sent`."""
        for byte in data:
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            self.sent += 1
            time.sleep(self.tick)
