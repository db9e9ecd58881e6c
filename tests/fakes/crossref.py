"""A loopback fake of the Crossref REST API, for tests and benchmarks.

It is a real HTTP server (``ThreadingHTTPServer`` on 127.0.0.1, a free port) so the client code runs
its real network path: connection pool, timeouts, retries, headers. Its behaviour copies recorded
api.crossref.org exchanges (sckott/habanero cassettes): ``filter=doi:A,doi:B`` ORs DOIs
case-insensitively and silently leaves unknown ones out; ``/works/{doi}`` answers 404 ``text/plain``
``Resource not found.``; bad ``rows`` or an unknown filter give a 400 ``validation-failure`` JSON
body; every answer carries ``x-rate-limit-*``, ``x-concurrency-limit`` and ``x-api-pool``.
The list route also searches (``query*``, the update and date filters, ``sort``/``order``,
``rows``/``offset``: see :mod:`fakes.crossref_works`), and ``/works/{doi}/transform/
application/x-bibtex`` answers the record as BibTeX in Crossref's layout.

Faults are injected with :meth:`FakeCrossref.fail_next`; every request is recorded in
:attr:`FakeCrossref.requests`, and :attr:`FakeCrossref.peak_in_flight` measures concurrency.
"""

from __future__ import annotations

import copy
import json
import socket
import threading
import time
import urllib.parse
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from fakes import crossref_works as works

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "crossref"
FAULT_KINDS = ("429", "503", "400", "malformed", "slow", "drop")
BIBTEX_SUFFIX = "/transform/application/x-bibtex"
_NOT_FOUND = b"Resource not found."


@dataclass(frozen=True)
class PoolLimits:
    """What one Crossref pool advertises (values from the recorded headers)."""

    rate: int
    interval: str
    concurrency: int


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str  # percent-decoded
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names
    time: float = field(default=0.0)  # time.monotonic() on arrival
    peer: int = field(default=0)  # the client's port: one per TCP connection (kept alive)

    @property
    def polite(self) -> bool:
        return "mailto" in self.query or "mailto:" in self.headers.get("user-agent", "")


def closed_port_url() -> str:
    """An ``http://127.0.0.1:PORT`` URL where nothing listens (connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def load_fixture_records(folder: Path = FIXTURES) -> dict[str, dict[str, Any]]:
    """Work records from ``/works/{doi}`` bodies and work-list items, keyed by lower-case DOI."""
    records: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("*.json")):
        body = json.loads(path.read_text(encoding="utf-8"))
        message = body["message"]
        for record in message.get("items", [message]):
            records.setdefault(record["DOI"].lower(), record)
    return records


def synthetic_record(
    doi: str,
    updated_by: list[dict[str, Any]] | None = None,
    update_to: list[dict[str, Any]] | None = None,
    title: str | None = None,
    journal: str = "Journal of Synthetic Tests",
    year: int = 2020,
) -> dict[str, Any]:
    """A minimal Crossref work shaped like the real ones (for DOIs no fixture covers)."""
    record: dict[str, Any] = {
        "DOI": doi,
        "type": "journal-article",
        "title": [title or f"Synthetic work {doi}"],
        "container-title": [journal],
        "issued": {"date-parts": [[year]]},
        "published": {"date-parts": [[year]]},
    }
    if updated_by:
        record["updated-by"] = updated_by
    if update_to:
        record["update-to"] = update_to
    return record


class FakeCrossref:
    """Context manager running the fake on ``127.0.0.1``; :attr:`url` is its base URL."""

    def __init__(
        self, fixtures: Path = FIXTURES, latency: float = 0.0, notices: bool = False
    ) -> None:
        """``notices`` adds notice records mirrored from the works' ``updated-by`` (see
        :func:`fakes.crossref_works.mirror_notices`); off by default so a notice DOI the fixtures
        lack stays unknown, as the integrity tests expect."""
        self._fixtures = fixtures
        self._notices = notices
        self.records: dict[str, dict[str, Any]] = self._load()
        self.latency = latency
        self.slow_seconds = 3.0
        self.limits = {
            "public": PoolLimits(rate=5, interval="1s", concurrency=1),
            "polite": PoolLimits(rate=10, interval="1s", concurrency=3),
        }
        self.requests: list[RecordedRequest] = []
        self.short_dois: dict[str, str] = {"10/f8vrcz": "10.1016/S0140-6736(97)11096-0"}
        self.in_flight = 0
        self.peak_in_flight = 0
        self.meet = 0
        """When set, every request after the first waits until this many are in flight at once
        (then none waits any more): a barrier proving that a client overlaps its requests,
        whatever the machine's load, where a latency only makes overlap likely."""
        self._met = threading.Condition()
        self.arrived = threading.Event()
        """Set when a request arrives (a test waits on it instead of guessing a time)."""
        self.gate: threading.Event | None = None
        """When set, every request is answered only once it is set (at most a minute later)."""
        self._faults: deque[tuple[str, float | str | None]] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def _load(self) -> dict[str, dict[str, Any]]:
        records = load_fixture_records(self._fixtures)
        if self._notices:
            records.update(works.mirror_notices(records))
        return records

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeCrossref:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeCrossref:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeCrossref is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # --- test controls -----------------------------------------------------------------------

    def add_record(self, message: dict[str, Any]) -> None:
        """Serve ``message`` (a Crossref work record with a ``DOI``) from now on."""
        with self._lock:
            self.records[str(message["DOI"]).lower()] = copy.deepcopy(message)

    def add_synthetic(
        self, doi: str, updated_by: list[dict[str, Any]] | None = None, **kw: Any
    ) -> dict[str, Any]:
        """Add and return a :func:`synthetic_record` (keyword arguments are passed on)."""
        record = synthetic_record(doi, updated_by=updated_by, **kw)
        self.add_record(record)
        return record

    def fail_next(self, kind: str, times: int = 1, retry_after: float | str | None = None) -> None:
        """Answer the next ``times`` requests with a fault (see :data:`FAULT_KINDS`).

        ``retry_after`` (seconds or an HTTP-date string) is sent as ``Retry-After`` on 429/503.
        """
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {kind!r}; choose from {FAULT_KINDS}")
        with self._lock:
            self._faults.extend([(kind, retry_after)] * times)

    def reset(self, records: bool = False) -> None:
        """Forget requests, pending faults, latency and the concurrency peak (and, on request,
        records added at run time)."""
        with self._lock:
            self.requests.clear()
            self._faults.clear()
            self.latency = 0.0
            self.peak_in_flight = self.in_flight
            if records:
                self.records = self._load()

    @property
    def connections(self) -> int:
        """TCP connections the recorded requests came on: a client that keeps its connections
        alive asks on one (the fake keeps them open), two clients need two."""
        return len({r.peer for r in self.requests})

    def requests_to(self, path_prefix: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.startswith(path_prefix)]

    # --- used by the handler -----------------------------------------------------------------

    def _enter(self, request: RecordedRequest) -> tuple[str, float | str | None] | None:
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            first = len(self.requests) == 1
            fault = self._faults.popleft() if self._faults else None
        self.arrived.set()
        if self.meet and not first:
            with self._met:
                self._met.notify_all()
                # A client that never overlaps is answered after 30 s, and its test fails.
                self._met.wait_for(lambda: self.peak_in_flight >= self.meet, timeout=30)
        return fault

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _lookup(self, doi: str) -> dict[str, Any] | None:
        with self._lock:
            return self.records.get(doi.lower())

    def _all(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.records.values())


def _validation_failure(kind: str, value: str, message: str) -> dict[str, Any]:
    return {
        "status": "failed",
        "message-type": "validation-failure",
        "message": [{"type": kind, "value": value, "message": message}],
    }


def _terms(request: RecordedRequest) -> str | None:
    texts = [" ".join(v) for n, v in request.query.items() if n.startswith("query")]
    return " ".join(texts) or None


def _select(record: dict[str, Any], select: list[str]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k in select} if select else record


class _Handler(BaseHTTPRequestHandler):
    fake: FakeCrossref
    protocol_version = "HTTP/1.1"
    server_version = "Jetty(9.4.40.v20210413)"
    sys_version = ""
    timeout = 10

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read :attr:`FakeCrossref.requests` instead."""

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        request = RecordedRequest(
            method="GET",
            path=unquote(parts.path),
            query=parse_qs(parts.query, keep_blank_values=True),
            headers={k.lower(): v for k, v in self.headers.items()},
            time=time.monotonic(),
            peer=self.client_address[1],
        )
        fault = self.fake._enter(request)
        try:
            if self.fake.gate is not None:
                self.fake.gate.wait(60)
            if self.fake.latency:
                time.sleep(self.fake.latency)
            if fault is not None:
                self._fault(request, *fault)
            else:
                self._route(request)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up first (timeouts); nothing to do
        finally:
            self.fake._leave()

    def _route(self, request: RecordedRequest) -> None:
        if request.path in ("/works", "/works/"):
            self._works_list(request)
        elif request.path.startswith("/works/") and request.path.endswith(BIBTEX_SUFFIX):
            self._bibtex(request)
        elif request.path.startswith("/works/"):
            self._work(request)
        elif request.path.startswith("/ra/"):
            self._agencies(request)
        elif request.path.startswith("/api/handles/"):
            self._handle(request)
        else:
            self._send(404, _NOT_FOUND, "text/plain", request)

    def _handle(self, request: RecordedRequest) -> None:
        """The resolver's handle API (``/api/handles/10/abcd``): a shortDOI's ``HS_ALIAS``."""
        short = request.path[len("/api/handles/") :].lower()
        alias = self.fake.short_dois.get(short)
        if alias is None:
            self._send(404, b'{"responseCode":100}', "application/json", request)
            return
        value = {"index": 1, "type": "HS_ALIAS", "data": {"format": "string", "value": alias}}
        record = {"responseCode": 1, "handle": short, "values": [value]}
        self._send(200, json.dumps(record).encode(), "application/json", request)

    def _agencies(self, request: RecordedRequest) -> None:
        """The DOI resolver's ``/ra/DOI1,DOI2`` (the shape doi.org answers): the agency of each
        DOI; DataCite for its own prefixes (arXiv 10.48550, Zenodo 10.5281, figshare 10.6084)."""
        answer = []
        for raw in urllib.parse.unquote(request.path[len("/ra/") :]).split(","):
            doi = raw.strip()
            if doi.lower().startswith(("10.48550/", "10.5281/", "10.6084/")):
                answer.append({"DOI": doi, "RA": "DataCite"})
            elif self.fake._lookup(doi) is not None:
                answer.append({"DOI": doi, "RA": "Crossref"})
            else:
                answer.append({"DOI": doi, "status": "DOI does not exist"})
        data = json.dumps(answer).encode("utf-8")
        self._send(200, data, "application/json;charset=utf-8", request)

    def _work(self, request: RecordedRequest) -> None:
        if any(name.startswith("query") for name in request.query):
            body = _validation_failure(
                "parameter-not-allowed",
                "query.*",
                "This route does not support field query parameters",
            )
            return self._json(400, body, request)
        record = self.fake._lookup(request.path[len("/works/") :])
        if record is None:
            return self._send(404, _NOT_FOUND, "text/plain", request)
        body = {
            "status": "ok",
            "message-type": "work",
            "message-version": "1.0.0",
            "message": record,
        }
        return self._json(200, body, request)

    def _bibtex(self, request: RecordedRequest) -> None:
        record = self.fake._lookup(request.path[len("/works/") : -len(BIBTEX_SUFFIX)])
        if record is None:
            return self._send(404, _NOT_FOUND, "text/plain", request)
        data = works.bibtex(record).encode("utf-8")
        return self._send(200, data, "application/x-bibtex", request)

    def _works_list(self, request: RecordedRequest) -> None:
        rows_text = request.query.get("rows", ["20"])[-1]
        if not rows_text.isdigit() or int(rows_text) > 1000:
            text = (
                f"Integer specified as {rows_text} but must be a positive integer less than or "
                "equal to 1000. "
            )
            return self._json(
                400, _validation_failure("integer-not-valid", rows_text, text), request
            )
        offset_text = request.query.get("offset", ["0"])[-1]
        if not offset_text.isdigit() or int(offset_text) > 10000:
            text = f"Integer specified as {offset_text} but must be 0..10000. "
            return self._json(
                400, _validation_failure("integer-not-valid", offset_text, text), request
            )
        try:
            hits = self._hits(request)
        except works.BadRequest as bad:
            body = _validation_failure(bad.kind, bad.value, bad.message)
            return self._json(400, body, request)
        start = int(offset_text)
        select = [s for s in ",".join(request.query.get("select", [])).split(",") if s]
        items = [_select(r, select) for r in hits[start : start + int(rows_text)]]
        message = {
            "facets": {},
            "total-results": len(hits),
            "items": items,
            "items-per-page": int(rows_text),
            "query": {"start-index": start, "search-terms": _terms(request)},
        }
        body = {
            "status": "ok",
            "message-type": "work-list",
            "message-version": "1.0.0",
            "message": message,
        }
        return self._json(200, body, request)

    def _hits(self, request: RecordedRequest) -> list[dict[str, Any]]:
        """Filtered, queried and sorted records (raises :class:`works.BadRequest`)."""
        q = request.query
        unknown = [n for n in q if n.startswith("query") and n not in works.QUERY_FIELDS]
        if unknown:
            text = f"Field query {unknown[0]} specified but there is no such field query"
            raise works.BadRequest("unknown-field-query", unknown[0], text)
        sort, order = q.get("sort", [None])[-1], q.get("order", [None])[-1]
        works.check_sort(sort, order)
        queries = {n: " ".join(v) for n, v in q.items() if n in works.QUERY_FIELDS}
        scored = works.select_records(
            self.fake._all(), works.parse_filters(q.get("filter", [])), queries
        )
        if sort is None and queries:
            sort = "relevance"
        if sort is not None:
            scored.sort(key=works.sort_key(sort), reverse=(order or "desc") == "desc")
        return [record for _, record in scored]

    def _fault(self, request: RecordedRequest, kind: str, retry_after: float | str | None) -> None:
        extra = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        if kind == "drop":
            self.close_connection = True  # hang up without a status line
        elif kind == "429":
            self._send(429, b"Too Many Requests", "text/plain", request, extra)
        elif kind == "503":
            self._send(503, b"Service Unavailable", "text/plain", request, extra)
        elif kind == "400":
            body = _validation_failure("parameter-not-allowed", "x", "Injected validation failure")
            self._json(400, body, request)
        elif kind == "malformed":
            self._send(
                200,
                b'{"status":"ok","message-type":"work-list","message":{"items":[{"DOI":',
                "application/json",
                request,
            )
        elif kind == "slow":
            self.fake._stopping.wait(self.fake.slow_seconds)
            self._route(request)

    def _json(self, status: int, body: dict[str, Any], request: RecordedRequest) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self._send(status, data, "application/json;charset=utf-8", request)

    def _send(
        self,
        status: int,
        data: bytes,
        content_type: str,
        request: RecordedRequest,
        extra: dict[str, str] | None = None,
    ) -> None:
        pool = "polite" if request.polite else "public"
        limits = self.fake.limits[pool]
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("x-api-pool", pool)
        self.send_header("x-rate-limit-limit", str(limits.rate))
        self.send_header("x-rate-limit-interval", limits.interval)
        self.send_header("x-concurrency-limit", str(limits.concurrency))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
