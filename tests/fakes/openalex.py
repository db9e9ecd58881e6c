"""A loopback fake of the OpenAlex API (``/works``), for tests.

A real HTTP server on 127.0.0.1 (a free port), so the client runs its real network path. Behaviour
follows OpenAlex's documentation: ``/works/doi:{doi}`` and ``/works/https://doi.org/{doi}`` answer
one work object (no envelope) or 404 with a JSON error; ``/works?search=`` answers
``{"meta": {...}, "results": [...]}`` ranked by relevance (here: the number of query words found in
the title, venue and author names; a work matching no word is left out), ``per-page`` at most 200
(else 400), ``filter=publication_year:2010-2015,doi:...`` (filters ANDed), ``select=`` keeps the
named top-level fields. Faults are injected with :meth:`FakeOpenAlex.fail_next`; every request is
recorded in :attr:`FakeOpenAlex.requests`.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "openalex"
FAULT_KINDS = ("429", "503", "malformed", "drop", "slow")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_FILTERS = ("publication_year", "doi", "is_retracted")


@dataclass(frozen=True)
class Request:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def load_works(folder: Path = FIXTURES) -> dict[str, dict[str, Any]]:
    """Work objects keyed by bare lower-case DOI."""
    works = {}
    for path in sorted(folder.glob("*.json")):
        work = json.loads(path.read_text(encoding="utf-8"))
        works[_bare(work["doi"])] = work
    return works


def _bare(doi: str) -> str:
    return doi.lower().removeprefix("https://doi.org/").removeprefix("doi:")


class FakeOpenAlex:
    """Context manager running the fake; :attr:`url` is its base URL."""

    def __init__(self, fixtures: Path = FIXTURES) -> None:
        self.works = load_works(fixtures)
        self.requests: list[Request] = []
        self.slow_seconds = 3.0
        self._faults: deque[tuple[str, str | None]] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self) -> FakeOpenAlex:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        assert self._server is not None, "FakeOpenAlex is not running"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add_work(self, work: dict[str, Any]) -> None:
        with self._lock:
            self.works[_bare(work["doi"])] = copy.deepcopy(work)

    def fail_next(self, kind: str, times: int = 1, retry_after: str | None = None) -> None:
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {kind!r}; choose from {FAULT_KINDS}")
        with self._lock:
            self._faults.extend([(kind, retry_after)] * times)

    def reset(self) -> None:
        """Forget recorded requests and pending faults."""
        with self._lock:
            self.requests.clear()
            self._faults.clear()

    def _enter(self, request: Request) -> tuple[str, str | None] | None:
        with self._lock:
            self.requests.append(request)
            return self._faults.popleft() if self._faults else None

    def _all(self) -> list[dict[str, Any]]:
        with self._lock:
            return [copy.deepcopy(w) for w in self.works.values()]


def _haystack(work: dict[str, Any]) -> set[str]:
    names = [(a.get("author") or {}).get("display_name") or "" for a in work["authorships"]]
    source = ((work.get("primary_location") or {}).get("source") or {}).get("display_name") or ""
    return _words(" ".join([work.get("title") or "", source, *names]))


def _passes(work: dict[str, Any], filters: list[tuple[str, str]]) -> bool:
    for name, value in filters:
        if name == "publication_year":
            low, _, high = value.partition("-")
            year = work.get("publication_year") or 0
            if "-" not in value:
                high = low
            if (low and year < int(low)) or (high and year > int(high)):
                return False
        elif name == "doi":
            if _bare(work["doi"]) not in {_bare(v) for v in value.split("|")}:
                return False
        elif str(work.get("is_retracted")).lower() != value.lower():  # is_retracted
            return False
    return True


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAlex
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read :attr:`FakeOpenAlex.requests`."""

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        request = Request(
            path=unquote(parts.path),
            query=parse_qs(parts.query, keep_blank_values=True),
            headers={k.lower(): v for k, v in self.headers.items()},
        )
        fault = self.fake._enter(request)
        try:
            if fault is not None:
                self._fault(request, *fault)
            elif request.path in ("/works", "/works/"):
                self._search(request)
            elif request.path.startswith("/works/"):
                self._work(request)
            else:
                self._json(404, {"error": "Not Found", "message": "no such route"})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _select(self, work: dict[str, Any], request: Request) -> dict[str, Any]:
        wanted = [s for s in ",".join(request.query.get("select", [])).split(",") if s]
        return {k: v for k, v in work.items() if k in wanted} if wanted else work

    def _work(self, request: Request) -> None:
        ident = request.path[len("/works/") :]
        if not (ident.lower().startswith("doi:") or ident.lower().startswith("https://doi.org/")):
            return self._json(404, {"error": "Not Found", "message": f"{ident} not found"})
        work = next((w for w in self.fake._all() if _bare(w["doi"]) == _bare(ident)), None)
        if work is None:
            return self._json(404, {"error": "Not Found", "message": f"{ident} not found"})
        return self._json(200, self._select(work, request))

    def _search(self, request: Request) -> None:
        per_page = request.query.get("per-page", ["25"])[-1]
        if not per_page.isdigit() or not 1 <= int(per_page) <= 200:
            message = "per-page parameter must be between 1 and 200"
            return self._json(400, {"error": "Invalid query parameters error.", "message": message})
        filters = []
        for spec in ",".join(request.query.get("filter", [])).split(","):
            if spec:
                name, _, value = spec.partition(":")
                if name not in _FILTERS:
                    message = f"{name} is not a valid field"
                    return self._json(
                        400, {"error": "Invalid query parameters error.", "message": message}
                    )
                filters.append((name, value))
        terms = _words(" ".join(request.query.get("search", [])))
        hits = []
        for work in self.fake._all():
            points = len(terms & _haystack(work)) if terms else 1
            if points and _passes(work, filters):
                hits.append((points, work))
        hits.sort(key=lambda h: -h[0])
        results = [self._select(w, request) for _, w in hits[: int(per_page)]]
        meta = {
            "count": len(hits),
            "db_response_time_ms": 3,
            "page": 1,
            "per_page": int(per_page),
            "groups_count": None,
        }
        return self._json(200, {"meta": meta, "results": results, "group_by": []})

    def _fault(self, request: Request, kind: str, retry_after: str | None) -> None:
        if kind == "drop":
            self.close_connection = True
        elif kind in ("429", "503"):
            extra = {"Retry-After": retry_after} if retry_after else {}
            self._json(int(kind), {"error": f"HTTP {kind}", "message": "injected"}, extra)
        elif kind == "malformed":
            self._send(200, b'{"meta": {"count": 1}, "results": [', "application/json")
        elif kind == "slow":
            self.fake._stopping.wait(self.fake.slow_seconds)
            self._json(200, {"meta": {"count": 0}, "results": []})

    def _json(self, status: int, body: Any, extra: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(body).encode("utf-8"), "application/json", extra)

    def _send(
        self, status: int, data: bytes, ctype: str, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
