"""A loopback fake of arXiv: the Atom API (``/api/query``) and OAI-PMH ``arXivRaw`` (``/oai``).

A real HTTP server on 127.0.0.1 (a free port), so the client runs its real network path. It renders
the records of ``tests/fixtures/arxiv/papers.json`` in arXiv's layouts (see PROVENANCE.md there):
``id_list`` answers one entry per id in order, an empty ``<entry>`` for an id it does not know;
``GetRecord`` and ``ListRecords`` (``from=``, pages of :attr:`FakeArxiv.page_size` with a
``resumptionToken``) answer ``arXivRaw``. It misbehaves on demand (:meth:`FakeArxiv.fail_next`):
``429`` with ``Retry-After``, ``503``, ``html`` (a web page with status 200), ``empty`` (a feed with
no entries at all), ``badtoken`` (OAI ``badResumptionToken``); ``pass`` answers normally (to
fault a later request). Every request is recorded.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "arxiv"
FAULTS = ("pass", "429", "503", "html", "empty", "badtoken")
_HTML = b"<!DOCTYPE html><html><head><title>arXiv</title></head><body>Rate exceeded.</body></html>"


@dataclass(frozen=True)
class Seen:
    path: str
    query: dict[str, list[str]]
    time: float


def load_papers() -> dict[str, dict[str, Any]]:
    data = json.loads((FIXTURES / "papers.json").read_text(encoding="utf-8"))
    return {p["id"]: p for p in data["papers"]}


def live_paper(ident: str, title: str, doi: str | None = None) -> dict[str, Any]:
    """A live (never withdrawn) arXiv paper in the fixture's shape; with ``doi``, published as
    that journal article (``journal_ref`` filled in, as arXiv gives it)."""
    return {
        "id": ident,
        "title": title,
        "authors": "A. Author",
        "comments": None,
        "doi": doi,
        "journal_ref": "Lancet 351, 637 (1998)" if doi else None,
        "datestamp": "2023-01-02",
        "versions": [{"date": "Mon, 2 Jan 2023 09:00:00 GMT", "size": "100kb", "source_type": "D"}],
    }


class LoopbackServer:
    """Start/stop, fault queue and request log shared by the preprint fakes."""

    def __init__(self) -> None:
        self.requests: list[Seen] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self._faults: deque[tuple[str, float | None]] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def start(self) -> Any:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                seen = Seen(parts.path, parse_qs(parts.query), time.monotonic())
                fault = owner._enter(seen)
                try:
                    status, ctype, body, headers = owner.answer(seen, fault)
                finally:
                    owner._leave()
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def fail_next(self, kind: str, times: int = 1, retry_after: float | None = None) -> None:
        for _ in range(times):
            self._faults.append((kind, retry_after))

    def requests_to(self, path: str) -> list[Seen]:
        return [r for r in self.requests if r.path == path]

    def _enter(self, seen: Seen) -> tuple[str, float | None] | None:
        with self._lock:
            self.requests.append(seen)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            return self._faults.popleft() if self._faults else None

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def answer(
        self, seen: Seen, fault: tuple[str, float | None] | None
    ) -> tuple[int, str, bytes, dict[str, str]]:
        raise NotImplementedError

    @staticmethod
    def common_fault(
        fault: tuple[str, float | None] | None,
    ) -> tuple[int, str, bytes, dict[str, str]] | None:
        if fault is None:
            return None
        kind, retry_after = fault
        if kind == "429":
            headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
            return 429, "text/plain", b"Too Many Requests", headers
        if kind == "503":
            return 503, "text/plain", b"Service Unavailable", {}
        if kind == "html":
            return 200, "text/html; charset=utf-8", _HTML, {}
        return None


class FakeArxiv(LoopbackServer):
    """The fake arXiv (see the module docstring)."""

    def __init__(self, papers: dict[str, dict[str, Any]] | None = None, page_size: int = 2) -> None:
        super().__init__()
        self.papers = load_papers() if papers is None else papers
        self.page_size = page_size

    @property
    def api_url(self) -> str:
        return f"{self.url}/api/query"

    @property
    def oai_url(self) -> str:
        return f"{self.url}/oai"

    def add_paper(self, paper: dict[str, Any]) -> None:
        self.papers[paper["id"]] = paper

    def answer(
        self, seen: Seen, fault: tuple[str, float | None] | None
    ) -> tuple[int, str, bytes, dict[str, str]]:
        failed = self.common_fault(fault)
        if failed is not None:
            return failed
        kind = fault[0] if fault else None
        if seen.path == "/api/query":
            return 200, "application/atom+xml; charset=utf-8", self._atom(seen, kind), {}
        if seen.path == "/oai":
            return 200, "text/xml; charset=utf-8", self._oai(seen, kind), {}
        return 404, "text/plain", b"not found", {}

    # --- Atom ----------------------------------------------------------------------------------

    def _atom(self, seen: Seen, kind: str | None) -> bytes:
        ids = [i for i in seen.query.get("id_list", [""])[0].split(",") if i]
        entries = [] if kind == "empty" else [self._entry(i) for i in ids]
        total = 0 if kind == "empty" else len(ids)
        ns = 'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"'
        head = (
            '<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n'
            f'  <title type="html">ArXiv Query: id_list={escape(",".join(ids))}</title>\n'
            "  <id>http://arxiv.org/api/fake</id>\n"
            f"  <opensearch:totalResults {ns}>{total}</opensearch:totalResults>\n"
            f"  <opensearch:startIndex {ns}>0</opensearch:startIndex>\n"
        )
        return (head + "".join(entries) + "</feed>\n").encode()

    def _entry(self, ident: str) -> str:
        paper = self.papers.get(re.sub(r"v\d+$", "", ident))
        ax = 'xmlns:arxiv="http://arxiv.org/schemas/atom"'
        if paper is None:
            return (
                f'  <entry>\n    <arxiv:primary_category {ax} term=""'
                ' scheme="http://arxiv.org/schemas/atom"/>\n  </entry>\n'
            )
        latest = len(paper["versions"])
        extras = ""
        if paper.get("comments"):
            extras += f"    <arxiv:comment {ax}>{escape(paper['comments'])}</arxiv:comment>\n"
        if paper.get("doi"):
            extras += f"    <arxiv:doi {ax}>{escape(paper['doi'])}</arxiv:doi>\n"
        if paper.get("journal_ref"):
            extras += (
                f"    <arxiv:journal_ref {ax}>{escape(paper['journal_ref'])}</arxiv:journal_ref>\n"
            )
        return (
            "  <entry>\n"
            f"    <id>http://arxiv.org/abs/{paper['id']}v{latest}</id>\n"
            f"    <updated>{_iso(paper['versions'][-1]['date'])}</updated>\n"
            f"    <published>{_iso(paper['versions'][0]['date'])}</published>\n"
            f"    <title>{escape(paper['title'])}</title>\n"
            f"    <summary>Abstract.</summary>\n{extras}"
            f'    <link href="http://arxiv.org/abs/{paper["id"]}v{latest}" rel="alternate"'
            ' type="text/html"/>\n'
            "  </entry>\n"
        )

    # --- OAI-PMH -------------------------------------------------------------------------------

    def _oai(self, seen: Seen, kind: str | None) -> bytes:
        verb = seen.query.get("verb", [""])[0]
        if kind == "badtoken":
            return _oai_doc(verb, '<error code="badResumptionToken">expired</error>')
        if verb == "GetRecord":
            ident = seen.query.get("identifier", [""])[0].removeprefix("oai:arXiv.org:")
            paper = self.papers.get(ident)
            if paper is None:
                return _oai_doc(verb, '<error code="idDoesNotExist">no such id</error>')
            return _oai_doc(verb, f"<GetRecord>{_record(paper)}</GetRecord>")
        if verb == "ListRecords":
            return self._list(seen)
        return _oai_doc(verb, '<error code="badVerb">illegal verb</error>')

    def _list(self, seen: Seen) -> bytes:
        token = seen.query.get("resumptionToken", [None])[0]
        if token is not None:
            since, _, start_text = token.partition("|")
            start = int(start_text)
        else:
            since, start = seen.query.get("from", [""])[0], 0
        chosen = sorted(
            (p for p in self.papers.values() if p["datestamp"] >= since),
            key=lambda p: (p["datestamp"], p["id"]),
        )
        if not chosen:
            return _oai_doc("ListRecords", '<error code="noRecordsMatch">none</error>')
        page = chosen[start : start + self.page_size]
        following = start + self.page_size
        more = following < len(chosen)
        resume = (
            f'<resumptionToken cursor="{start}" completeListSize="{len(chosen)}">'
            f"{escape(since)}|{following}</resumptionToken>"
            if more
            else f'<resumptionToken cursor="{start}" completeListSize="{len(chosen)}"/>'
        )
        body = "".join(_record(p) for p in page)
        return _oai_doc("ListRecords", f"<ListRecords>{body}{resume}</ListRecords>")


def _iso(rfc2822: str) -> str:
    import email.utils

    return email.utils.parsedate_to_datetime(rfc2822).strftime("%Y-%m-%dT%H:%M:%SZ")


def _oai_doc(verb: str, inner: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"'
        ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
        "<responseDate>2025-01-01T00:00:00Z</responseDate>\n"
        f'<request verb="{escape(verb)}">http://export.arxiv.org/oai2</request>\n'
        f"{inner}\n</OAI-PMH>\n"
    ).encode()


def _record(paper: dict[str, Any]) -> str:
    versions = "".join(
        f'<version version="v{n}"><date>{escape(v["date"])}</date><size>{v["size"]}</size>'
        f"<source_type>{v['source_type']}</source_type></version>"
        for n, v in enumerate(paper["versions"], start=1)
    )
    optional = ""
    for tag, key in (("comments", "comments"), ("doi", "doi"), ("journal-ref", "journal_ref")):
        if paper.get(key):
            optional += f"<{tag}>{escape(paper[key])}</{tag}>"
    return (
        "<record><header>"
        f"<identifier>oai:arXiv.org:{paper['id']}</identifier>"
        f"<datestamp>{paper['datestamp']}</datestamp></header><metadata>"
        '<arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/">'
        f"<id>{paper['id']}</id><submitter>Someone</submitter>{versions}"
        f"<title>{escape(paper['title'])}</title><authors>{escape(paper['authors'])}</authors>"
        f"<categories>math</categories>{optional}<abstract>Abstract.</abstract>"
        "</arXivRaw></metadata></record>"
    )
