"""Reading arXiv's two XML answers: the Atom feed of the API and OAI-PMH ``arXivRaw`` records.

Both are validated first: an answer that is not the expected document (an HTML error page, a
proxy's notice, a truncated body) raises :class:`XMLShapeError`, an ``error`` look-up, never a
record. A document type declaration is refused outright (arXiv sends none; an entity
declaration is how an XML bomb starts).

The Atom API answers ``id_list`` with one ``<entry>`` per id asked; an id arXiv does not know
gets an empty ``<entry>`` (no ``<id>``). In ``arXivRaw`` a withdrawn version has size ``0kb``
and/or an ``I`` ("ignore") in its source type, the flags arXiv's own browse code reads.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from rwgate.contract.doi import try_normalize
from rwgate.sources.preprint_ids import ArxivId, parse_arxiv

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
OAI = "{http://www.openarchives.org/OAI/2.0/}"
RAW = "{http://arxiv.org/OAI/arXivRaw/}"
_REASON_MAX = 300
_HINT = re.compile(r"withdraw", re.IGNORECASE)


class XMLShapeError(ValueError):
    """The answer is not the document it should be; the message is a one-line reason."""


def _root(body: bytes, expected: str, what: str) -> ET.Element:
    head = body[:4096].lower()
    if b"<!doctype" in head or b"<!entity" in body.lower():
        raise XMLShapeError(f"answer is not {what} (it declares a document type)")
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise XMLShapeError(f"answer is not {what} (unreadable XML: {exc})") from None
    if root.tag != expected:
        raise XMLShapeError(f"answer is not {what} (root element {root.tag[-40:]!r})")
    return root


def _text(element: ET.Element | None) -> str | None:
    if element is None or element.text is None:
        return None
    text = " ".join(element.text.split())
    return text or None


def _date(text: str | None) -> dt.date | None:
    """An ISO date-time (Atom) or an RFC 2822 date (``arXivRaw``'s ``Mon, 2 Apr 2007 ...``)."""
    if not text:
        return None
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        pass
    try:
        return email.utils.parsedate_to_datetime(text).date()
    except (TypeError, ValueError, IndexError):
        return None


# --- the Atom API --------------------------------------------------------------------------------


@dataclass(frozen=True)
class AtomEntry:
    """The latest version of one paper, as the Atom API describes it."""

    arxiv: ArxivId
    title: str | None
    published: dt.date | None
    comment: str | None
    journal_ref: str | None
    doi: str | None

    @property
    def hints_withdrawal(self) -> bool:
        """Whether the comment speaks of a withdrawal (then ``arXivRaw`` is asked for the flag)."""
        return bool(self.comment and _HINT.search(self.comment))


@dataclass
class AtomFeed:
    total: int
    entries: list[AtomEntry] = field(default_factory=list)
    empty: int = 0
    """Entries without an id: ids arXiv does not know."""


def parse_atom(body: bytes) -> AtomFeed:
    """An API answer; raises :class:`XMLShapeError` when it is not an arXiv Atom feed."""
    root = _root(body, f"{ATOM}feed", "an arXiv Atom feed")
    total_text = _text(root.find(f"{OPENSEARCH}totalResults"))
    if total_text is None or not total_text.isdigit():
        raise XMLShapeError("answer is not an arXiv Atom feed (no opensearch:totalResults)")
    feed = AtomFeed(total=int(total_text))
    for entry in root.findall(f"{ATOM}entry"):
        ident = _text(entry.find(f"{ATOM}id"))
        if ident is None:
            feed.empty += 1
            continue
        if "/api/errors" in ident:
            summary = _text(entry.find(f"{ATOM}summary")) or "error"
            raise XMLShapeError(f"arXiv API error: {summary[:120]}")
        arxiv = parse_arxiv(ident)
        if arxiv is None or arxiv.version is None:
            raise XMLShapeError(f"entry id {ident[:80]!r} is not a versioned arXiv id")
        feed.entries.append(
            AtomEntry(
                arxiv=arxiv,
                title=_text(entry.find(f"{ATOM}title")),
                published=_date(_text(entry.find(f"{ATOM}published"))),
                comment=_text(entry.find(f"{ARXIV}comment")),
                journal_ref=_text(entry.find(f"{ARXIV}journal_ref")),
                doi=try_normalize(_text(entry.find(f"{ARXIV}doi"))),
            )
        )
    return feed


# --- OAI-PMH arXivRaw ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RawVersion:
    number: int
    date: dt.date | None
    size: str
    source_type: str

    @property
    def withdrawn(self) -> bool:
        return self.size.strip().lower() == "0kb" or "I" in self.source_type


@dataclass(frozen=True)
class RawRecord:
    """One paper in ``arXivRaw``: every version, its comments and the published version's DOI."""

    arxiv: ArxivId
    versions: tuple[RawVersion, ...]
    comments: str | None
    title: str | None
    doi: str | None

    def withdrawal(self) -> Withdrawal | None:
        """The withdrawal in force: the latest version withdrawn (None when it is not)."""
        if not self.versions or not self.versions[-1].withdrawn:
            return None
        last = self.versions[-1]
        reason = (self.comments or "")[:_REASON_MAX] or None
        return Withdrawal(self.arxiv.id, last.number, last.date, reason)


@dataclass(frozen=True)
class Withdrawal:
    """A withdrawn preprint: which, the withdrawing version, when, and why (its own words)."""

    ident: str
    version: int | None
    date: dt.date | None
    reason: str | None


@dataclass
class OAIPage:
    records: list[RawRecord] = field(default_factory=list)
    token: str | None = None
    missing: bool = False
    """``idDoesNotExist``: the record asked for is not there."""


def parse_oai(body: bytes) -> OAIPage:
    """A ``GetRecord`` or ``ListRecords`` answer in ``arXivRaw``; ``noRecordsMatch`` is an empty
    page (nothing changed since ``from``). Raises :class:`XMLShapeError` for anything else."""
    root = _root(body, f"{OAI}OAI-PMH", "an OAI-PMH answer")
    page = OAIPage()
    error = root.find(f"{OAI}error")
    if error is not None:
        code = error.get("code", "")
        if code == "noRecordsMatch":
            return page
        if code == "idDoesNotExist":
            page.missing = True
            return page
        raise XMLShapeError(f"OAI-PMH error {code[:40]}: {(_text(error) or '')[:120]}")
    verb = root.find(f"{OAI}GetRecord")
    if verb is None:
        verb = root.find(f"{OAI}ListRecords")
    if verb is None:
        raise XMLShapeError("answer is neither GetRecord nor ListRecords")
    for record in verb.findall(f"{OAI}record"):
        header = record.find(f"{OAI}header")
        if header is not None and header.get("status") == "deleted":
            continue
        raw = record.find(f"{OAI}metadata/{RAW}arXivRaw")
        if raw is None:
            raise XMLShapeError("record without arXivRaw metadata")
        page.records.append(_raw_record(raw))
    page.token = _text(verb.find(f"{OAI}resumptionToken"))
    return page


def _raw_record(raw: ET.Element) -> RawRecord:
    arxiv = parse_arxiv(_text(raw.find(f"{RAW}id")))
    if arxiv is None:
        raise XMLShapeError("arXivRaw record without a readable id")
    versions = []
    for version in raw.findall(f"{RAW}version"):
        label = version.get("version", "")
        if not re.fullmatch(r"v\d{1,3}", label):
            raise XMLShapeError(f"arXivRaw version {label[:20]!r} of {arxiv.id} unreadable")
        versions.append(
            RawVersion(
                number=int(label[1:]),
                date=_date(_text(version.find(f"{RAW}date"))),
                size=_text(version.find(f"{RAW}size")) or "",
                source_type=_text(version.find(f"{RAW}source_type")) or "",
            )
        )
    if not versions:
        raise XMLShapeError(f"arXivRaw record of {arxiv.id} lists no version")
    versions.sort(key=lambda v: v.number)
    return RawRecord(
        arxiv=arxiv,
        versions=tuple(versions),
        comments=_text(raw.find(f"{RAW}comments")),
        title=_text(raw.find(f"{RAW}title")),
        doi=try_normalize(_text(raw.find(f"{RAW}doi"))),
    )
