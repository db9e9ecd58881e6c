"""A loopback server for the Retraction Watch CSV export, and the ways real servers get it wrong.

It serves one body with an ETag and honours ``If-None-Match`` and ``Range``/``If-Range`` like a
CDN. ``fault`` makes the next answers misbehave the way servers and networks really do:

- ``cut``: the connection drops after ``cut_after`` bytes with the Content-Length unmet;
- ``close_early``: no Content-Length, the connection closed after ``cut_after`` bytes (the end of
  the body is indistinguishable from the end of the file);
- ``refuse_range``: a ranged request gets 416 (``Content-Range: bytes */<whole>``);
- ``ignore_if_range``: ``Range`` honoured whatever ``If-Range`` says (old and new files spliced);
- ``html``: a 200 HTML page (a portal's login or error page) instead of the CSV;
- ``gzip``: the body gzip-encoded (``Content-Encoding: gzip``), Content-Length of the encoded bytes;
- ``bomb``: a small gzip body that expands to ``bomb_size`` bytes of zeros;
- ``redirect`` / ``redirect_away``: a 302 to the same path on this host / on another host name.
"""

from __future__ import annotations

import gzip
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAULTS = (
    "cut",
    "close_early",
    "refuse_range",
    "ignore_if_range",
    "html",
    "gzip",
    "bomb",
    "redirect",
    "redirect_away",
)


class CSVServer:
    """Serves ``body`` at ``url``; each request's headers are kept, lower-cased, in ``requests``."""

    def __init__(self, body: bytes, etag: str = '"v1"') -> None:
        self.body, self.etag = body, etag
        self.fault: str | None = None
        self.cut_after: int | None = None
        self.bomb_size = 64 << 20
        self.requests: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                server.requests.append({k.lower(): v for k, v in self.headers.items()})
                server.respond(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(  # polled every 50 ms: shutdown() waits for one poll
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.port}/retraction_watch.csv"

    def respond(self, handler: BaseHTTPRequestHandler) -> None:
        if self.fault in ("redirect", "redirect_away") and handler.path.endswith(".csv"):
            host = "127.0.0.1" if self.fault == "redirect" else "localhost"
            handler.send_response(302)
            handler.send_header("Location", f"http://{host}:{self.port}/moved/export.csv.txt")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        if handler.headers.get("If-None-Match") == self.etag:
            handler.send_response(304)
            handler.send_header("ETag", self.etag)
            handler.end_headers()
            return
        ranged = handler.headers.get("Range")
        if ranged and self.fault == "refuse_range":
            handler.send_response(416)
            handler.send_header("Content-Range", f"bytes */{len(self.body)}")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        start = 0
        confirmed = handler.headers.get("If-Range") == self.etag
        if ranged and (confirmed or self.fault == "ignore_if_range"):
            start = int(ranged.removeprefix("bytes=").split("-")[0])
        self._send(handler, start)

    def _send(self, handler: BaseHTTPRequestHandler, start: int) -> None:
        payload, kind, encoding = self.body[start:], "text/csv", None
        if self.fault == "html":
            payload, kind = b"<!DOCTYPE html><html><body>Please sign in</body></html>", "text/html"
        elif self.fault == "gzip":
            payload, encoding = gzip.compress(payload), "gzip"
        elif self.fault == "bomb":
            squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)
            payload = squeeze.compress(b"\0" * self.bomb_size) + squeeze.flush()
            encoding = "gzip"
        handler.send_response(206 if start else 200)
        handler.send_header("ETag", self.etag)
        handler.send_header("Content-Type", kind)
        if encoding:
            handler.send_header("Content-Encoding", encoding)
        if self.fault != "close_early":
            handler.send_header("Content-Length", str(len(payload)))
        if start:
            handler.send_header(
                "Content-Range", f"bytes {start}-{len(self.body) - 1}/{len(self.body)}"
            )
        handler.end_headers()
        if self.cut_after is not None and self.fault in (None, "cut", "close_early"):
            handler.wfile.write(payload[: self.cut_after])
            handler.wfile.flush()
            handler.close_connection = True
            self.cut_after = None
            return
        handler.wfile.write(payload)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
