"""arXiv as an integrity source: withdrawals, with the author's reason, never called retractions.

Many of the ~14,000 withdrawn arXiv papers were withdrawn for benign reasons (a duplicate, a merge,
an error the authors found), so a withdrawn version is a ``withdrawal`` notice (status
``withdrawn``) labelled with arXiv's comment, the reason in the authors' words.

Asked at arXiv's pace (:class:`~rwgate.sources.net.ratelimit.Pacer`): first the Atom API,
``id_list=`` with up to :data:`BATCH` ids a request (the latest version, its comment, and the
published version's ``arxiv:doi``/``journal_ref``, reported as
:attr:`~rwgate.contract.models.Lookup.published_doi`); then, only where the comment hints at a
withdrawal, OAI-PMH ``arXivRaw``, whose per-version flags decide (the wording does not).

A paper whose latest version is not withdrawn is found with no notices (vouched); an id arXiv
does not know is ``not_found``; an answer that does not validate is an ``error`` look-up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar, TypeVar

from rwgate.contract.models import Lookup, Notice
from rwgate.sources.arxiv_xml import (
    AtomEntry,
    AtomFeed,
    OAIPage,
    RawRecord,
    Withdrawal,
    XMLShapeError,
    parse_atom,
    parse_oai,
)
from rwgate.sources.interface import IdKind, Progress
from rwgate.sources.net.http import Failure, GaveUp, Run
from rwgate.sources.net.ratelimit import Pacer, arxiv_pacer
from rwgate.sources.paced import PacedSource, now
from rwgate.sources.preprint_ids import ArxivId, arxiv_of_doi, parse_arxiv

if TYPE_CHECKING:
    import httpx

BATCH = 100
"""Ids per Atom request (arXiv's manual: keep result sets small; 100 answers in one page)."""
NAME = "arxiv"
T = TypeVar("T")


def withdrawal_notice(withdrawn: Withdrawal) -> Notice:
    """The ``withdrawal`` notice of a withdrawn arXiv version: the reason is its label."""
    ident, version = withdrawn.ident, withdrawn.version
    return Notice(
        type="withdrawal",
        date=withdrawn.date,
        source=[NAME],
        label=withdrawn.reason or "withdrawn (arXiv gives no reason)",
        record_id=f"arXiv:{ident}v{version}" if version else f"arXiv:{ident}",
    )


class ArxivSource(PacedSource):
    """arXiv's Atom API and OAI-PMH ``arXivRaw`` (see the module docstring)."""

    name = NAME
    title = "arXiv"
    answers = frozenset({"arxiv", "doi"})
    settings = frozenset({"arxiv_url", "arxiv_oai_url", "timeout", "max_total_seconds", "offline"})
    absence = "unknown"
    vouches = True  # the latest version's flags are the paper's whole withdrawal state
    servers = frozenset({"arXiv"})
    url_setting = "arxiv_url"
    arg_settings: ClassVar[dict[str, str]] = {"api_url": "arxiv_url", "oai_url": "arxiv_oai_url"}

    def __init__(
        self,
        api_url: str = "https://export.arxiv.org/api/query",
        oai_url: str = "https://oaipmh.arxiv.org/oai",
        timeout: float = 30.0,
        max_total_seconds: float = 120.0,
        max_attempts: int = 4,
        pacer: Pacer | None = None,
        batch_size: int = BATCH,
    ) -> None:
        if not 1 <= batch_size <= 2000:
            raise ValueError(f"arxiv batch_size must be 1..2000, not {batch_size}")
        self.api_url = api_url.rstrip("/")
        self.oai_url = oai_url.rstrip("/")
        self.batch_size = batch_size
        self.pacer = pacer or arxiv_pacer()
        super().__init__(self.api_url, self.pacer, timeout, max_total_seconds, max_attempts)

    def takes(self, kind: IdKind, ident: str) -> bool:
        """arXiv ids, and of DOIs only arXiv's DataCite ones (every other DOI is not arXiv's)."""
        return kind == "arxiv" or (kind == "doi" and arxiv_of_doi(ident) is not None)

    def query(self, ident: str, kind: IdKind = "arxiv") -> Lookup:
        return self.query_all([ident], kind=kind)[ident]

    def query_all(
        self, idents: Sequence[str], progress: Progress | None = None, kind: IdKind = "arxiv"
    ) -> dict[str, Lookup]:
        """One Lookup per distinct identifier (arXiv ids in any spelling, or arXiv DataCite
        DOIs with ``kind="doi"``); failures are ``error`` look-ups, never exceptions."""
        wanted = list(dict.fromkeys(idents))
        answers: dict[str, Lookup] = {}
        parsed: dict[str, ArxivId] = {}
        for ident in wanted:
            found = arxiv_of_doi(ident) if kind == "doi" else parse_arxiv(ident)
            if found is None:
                said = f"arxiv: {ident[:60]!r} is no arXiv id"
                answers[ident] = self._answer(ident, "error", said)
            else:
                parsed[ident] = found
        papers = list(dict.fromkeys(a.id for a in parsed.values()))
        if papers:
            by_paper = self._ask(papers, progress, len(wanted))
            for ident, arxiv in parsed.items():
                answers[ident] = by_paper[arxiv.id].model_copy(update={"doi": ident})
        self._tally(answers.values())
        return {ident: answers[ident] for ident in wanted}

    def _ask(self, papers: list[str], progress: Progress | None, total: int) -> dict[str, Lookup]:
        run = self.run()  # one connection, as arXiv asks
        results: dict[str, Lookup] = {}
        for start in range(0, len(papers), self.batch_size):
            batch = papers[start : start + self.batch_size]
            results.update(self._batch(run, batch))
            if progress is not None:
                progress(min(start + len(batch), total), total)
        return results

    def _batch(self, run: Run, batch: list[str]) -> dict[str, Lookup]:
        params = {"id_list": ",".join(batch), "max_results": str(len(batch)), "start": "0"}
        try:
            feed = self.http.get(run, self.api_url, params, _atom)
        except GaveUp as exc:
            return {p: self._answer(p, "error", str(exc)) for p in batch}
        entries = {e.arxiv.id: e for e in feed.entries}
        out: dict[str, Lookup] = {}
        unknown_ok = len(feed.entries) + feed.empty >= len(batch)
        for paper in batch:
            entry = entries.get(paper)
            if entry is not None:
                out[paper] = self._judge(run, entry)
            elif unknown_ok and feed.empty:
                out[paper] = self._answer(paper, "not_found")
            else:  # left out without an empty entry in its place: no proof of absence
                out[paper] = self._answer(paper, "error", "arxiv: the answer left this id out")
        return out

    def _judge(self, run: Run, entry: AtomEntry) -> Lookup:
        """Found; with a withdrawal notice when ``arXivRaw`` flags the latest version."""
        found = Lookup(
            doi=entry.arxiv.id,
            outcome="found",
            source=NAME,
            title=entry.title,
            journal=entry.journal_ref,
            year=entry.published.year if entry.published else None,
            published_doi=entry.doi,
            as_of=now(),
        )
        if not entry.hints_withdrawal:
            return found
        record = self.raw_record(run, entry.arxiv.id)
        if isinstance(record, str):
            return self._answer(entry.arxiv.id, "error", record)
        withdrawal = record.withdrawal()
        if withdrawal is None:
            return found
        return found.model_copy(update={"notices": [withdrawal_notice(withdrawal)]})

    def raw_record(self, run: Run, paper: str) -> RawRecord | str:
        """The paper's ``arXivRaw`` record, or the one-line reason there is none."""
        params = {
            "verb": "GetRecord",
            "identifier": f"oai:arXiv.org:{paper}",
            "metadataPrefix": "arXivRaw",
        }
        try:
            page = self.http.get(run, self.oai_url, params, oai_answer)
        except GaveUp as exc:
            return str(exc)
        if page.missing or not page.records:
            return f"arxiv: OAI-PMH has no arXivRaw record of {paper}"
        record = page.records[0]
        if record.arxiv.id != paper:
            return f"arxiv: OAI-PMH answered with the record of {record.arxiv.id}"
        return record


def _parsed(response: httpx.Response, parse: Callable[[bytes], T]) -> T:
    """``parse`` of the body of a 200 answer that says it is XML; :class:`Failure` otherwise."""
    if response.status_code != 200:
        raise Failure(f"HTTP {response.status_code}", retry=False)
    ctype = response.headers.get("content-type", "").lower()
    if "xml" not in ctype:
        raise Failure(f"answer is not XML (content type {ctype[:40] or 'missing'!r})")
    try:
        return parse(response.content)
    except XMLShapeError as exc:
        raise Failure(str(exc)) from None


def _atom(response: httpx.Response) -> AtomFeed:
    return _parsed(response, parse_atom)


def oai_answer(response: httpx.Response) -> OAIPage:
    """An OAI-PMH ``arXivRaw`` answer, validated (:class:`Failure` otherwise)."""
    return _parsed(response, parse_oai)
