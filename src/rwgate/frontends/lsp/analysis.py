"""One pass over one document: the build's verdicts, placed where the keys are written.

The editor must never disagree with the build, so nothing here judges: the manuscript is read by
the build's reader from the saved file, with the build's settings, and judged by
:func:`rwgate.frontends.kit.judge_document`. The unsaved buffer changes only *which keys are
cited* (:func:`cited_keys`). A bibliography opened on its own is parsed from the buffer's text and
judged whole, as ``rwgate check refs.bib`` does. *Where* keys are written the readers do not say:
the build's citation scanners (:mod:`rwgate.readers.manuscripts.citescan`) find them in the
buffer; a scanned key is judged only when it names an entry (or the saved document cites it), so
a false find is harmless and a miss only loses a squiggle, never a verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rwgate.errors import RwgateError
from rwgate.readers.manuscripts.citescan import Span, citation_spans

if TYPE_CHECKING:
    from rwgate.contract.models import Citation, CitedDocument, Problem, Reference, SourceInfo
    from rwgate.frontends.kit import KeptSources
    from rwgate.settings.config import Settings
    from rwgate.verdicts.result import CheckResult

Severity = Literal["error", "warning", "information", "hint"]
SEVERITY_OF_ACTION: dict[str, Severity] = {
    "fail": "error",
    "annotate": "warning",
    "warn": "information",
}
"""What fails the build is an error; what it annotates a warning; what it warns about, news."""
STRUCK = frozenset({"retracted", "withdrawn", "removed"})
"""Statuses whose key an editor strikes through (the ``Deprecated`` tag): the work is gone."""
CANNOT_READ = "rwgate cannot read this document fully"
Lines = Callable[[str], list[str]]
"""The text of a file by path, as lines: an open buffer's, else the saved file's."""


@dataclass(frozen=True)
class Place:
    """A key written in a file (absolute path)."""

    path: str
    span: Span


Related = tuple[Place | str, str]
"""What a note relates to (another place, or a URL: the notice), and in what words."""


@dataclass
class Note:
    """One diagnostic, before the protocol: where, what, how severe, and what it relates to."""

    place: Place
    message: str
    severity: Severity
    code: str | None = None
    key: str | None = None
    struck: bool = False
    url: str | None = None
    related: list[Related] = field(default_factory=list)


@dataclass
class Verdicts:
    """What one pass over a document found: its notes, its keys' places and their verdicts."""

    path: Path
    notes: list[Note] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    resolved: dict[str, str] = field(default_factory=dict)
    citations: dict[str, Citation] = field(default_factory=dict)
    entries: dict[str, Place] = field(default_factory=dict)
    sources: list[SourceInfo] = field(default_factory=list)
    complete: bool = True
    """Whether every source answered (False: a network pass that could not reach them)."""

    def span_at(self, line: int, column: int) -> Span | None:
        """The key written under the cursor, if any."""
        return next((s for s in self.spans if s.contains(line, column)), None)

    def citation_at(self, line: int, column: int) -> Citation | None:
        """The verdict on the key under the cursor, if it has one."""
        span = self.span_at(line, column)
        return None if span is None else self.citations.get(self.resolved.get(span.key, span.key))


@dataclass
class Manuscript:
    """A manuscript as the build reads it from its saved file (re-read on open and save)."""

    path: Path
    doc: CitedDocument
    saved_text: str
    entry_keys: frozenset[str]
    saved_keys: frozenset[str] = frozenset()
    """The keys the scanner finds in the saved text (what it cannot see there stays cited)."""

    @property
    def latex(self) -> bool:
        return self.path.suffix.lower() in (".tex", ".ltx")


def notice_url(citation: Citation) -> str | None:
    """The deciding notice as a link (``https://doi.org/...``), when it has a DOI."""
    from rwgate.contract.doi import url
    from rwgate.contract.evidence import deciding_notice

    notice = deciding_notice(citation)
    return url(notice.doi) if notice is not None and notice.doi else None


def read_manuscript_file(path: Path) -> Manuscript:
    """The saved manuscript through the build's reader (raises RwgateError or OSError)."""
    from rwgate.readers.join import cited_references
    from rwgate.readers.manuscripts.manuscript import read_manuscript

    doc = read_manuscript(path)
    everything = doc.model_copy(update={"keys": [], "cite_all": True})
    entries = cited_references(everything).references
    text = path.read_bytes().decode("utf-8", "replace")
    manuscript = Manuscript(path, doc, text, frozenset(r.key for r in entries))
    manuscript.saved_keys = frozenset(s.key for s in citation_spans(text, manuscript.latex))
    return manuscript


def cited_keys(manuscript: Manuscript, text: str, spans: list[Span]) -> list[str]:
    """The keys the buffer ``text`` cites: the build's own keys while it is the saved text;
    otherwise those keys, less the ones the buffer no longer writes, plus the ones it adds that
    name an entry (a scanned key that names none waits for the save, when the build's reader
    says whether it is a citation at all: an e-mail address, a cross-reference)."""
    from rwgate.readers.keys import identifier_key, resolve_key

    saved = manuscript.doc.keys
    if text == manuscript.saved_text:
        return list(saved)
    unseen = [k for k in saved if k not in manuscript.saved_keys]  # project nocite, .aux keys
    known = set(saved)  # (a list: a key per citation of a long manuscript, each looked up)
    added = [
        k
        for k in (s.key for s in spans)
        if k in known or resolve_key(k, manuscript.entry_keys) or identifier_key(k)
    ]
    return list(dict.fromkeys([*added, *unseen]))


@dataclass
class Said:
    """What the notes say about each work of one verdict, made once per verdict: most keystrokes
    get the same verdict object again from the kept sources, and saying it was half of a pass
    over a long manuscript. It holds the last verdict (so the ids it is keyed by stay valid)."""

    verdict: object = None
    template: str | None = None
    known: dict[int, tuple[str, str | None]] = field(default_factory=dict)
    # Where each work's entry is, with the lines it was found in (the same list object while
    # the file is unchanged), and a work's notes by where it is cited and where its entry is
    # (a keystroke moves few citations; the same note objects are cheaper to send again).
    entries: dict[int, tuple[Reference, list[str], Place]] = field(default_factory=dict)
    notes: dict[tuple[object, ...], list[Note]] = field(default_factory=dict)
    room: int = 64

    def of(self, verdict: CheckResult, template: str | None) -> Said:
        """This memo, emptied unless it was made for ``verdict`` and ``template``."""
        if verdict is not self.verdict or template != self.template:
            self.verdict, self.template = verdict, template
            self.known, self.notes, self.entries = {}, {}, {}
            self.room = 4 * len(verdict.citations) + 64
        return self

    def notes_of(self, citation: Citation, uses: list[Place], entry: Place | None) -> list[Note]:
        """The notes of ``citation`` cited at ``uses`` with its entry at ``entry``."""
        where = (id(citation), *uses, entry)
        found = self.notes.get(where)
        if found is None:
            found = _notes(citation, self, uses, entry)
            if len(self.notes) > self.room:  # places of passes long gone
                self.notes.clear()
            self.notes[where] = found
        return found

    def say(self, citation: Citation) -> tuple[str, str | None]:
        found = self.known.get(id(citation))
        if found is None:
            found = (message_of(citation, self.template), notice_url(citation))
            self.known[id(citation)] = found
        return found


def judge_manuscript(
    manuscript: Manuscript,
    text: str,
    settings: Settings,
    lines: Lines,
    kept: KeptSources | None = None,
    said: Said | None = None,
) -> Verdicts:
    """The verdicts on what the buffer cites, placed in it and in its bibliography files (with
    the ``kept`` sources and the memo of what their last verdict ``said``, when given)."""
    from rwgate.frontends.kit import judge_document
    from rwgate.readers.keys import resolve_key

    spans = citation_spans(text, manuscript.latex)
    doc = manuscript.doc.model_copy(update={"keys": cited_keys(manuscript, text, spans)})
    result, refs = (kept.judge_document if kept is not None else judge_document)(doc, settings)
    memo = (said or Said()).of(result, settings.template)
    known = {c.key for c in result.citations}
    resolved = {s.key: resolve_key(s.key, known) or s.key for s in spans}
    out = _start(manuscript.path, result, spans, resolved)
    here = str(manuscript.path)
    places: dict[str, list[Place]] = {}
    for span in spans:
        places.setdefault(resolved[span.key], []).append(Place(here, span))
    where = _Resolved()
    for citation in result.citations:
        uses = places.get(citation.key, [])
        if not uses and text == manuscript.saved_text:  # a key the scanner missed
            first = doc.key_locations.get(citation.key)
            line = (first.line or 1) - 1 if first and first.file == here else 0
            uses = [Place(here, Span(citation.key, line, 0, 0))]
        entry = _entry_place(refs.get(citation.key), lines, where, memo)
        if entry is not None:
            out.entries[citation.key] = entry
        out.notes += memo.notes_of(citation, uses, entry)
    _add_problems(out, result.problems, here, lines)
    _add_warnings(out, result.warnings, here)
    return out


def judge_bibliography(
    path: Path, text: str, settings: Settings, lines: Lines, kept: KeptSources | None = None
) -> Verdicts:
    """Every entry of a bibliography buffer (``.bib``, ``.bbl``, CSL JSON/YAML, RIS), judged
    as ``rwgate check`` judges a bibliography given alone; parsed from the unsaved text."""
    from rwgate.frontends.kit import judge
    from rwgate.readers.bibliographies.registry import reader_for

    bib = reader_for(path, ["bibliography"]).read_text(text, str(path))
    result = (kept.judge if kept is not None else judge)(bib.references, settings, bib.problems)
    own = text.splitlines()
    here = str(path)
    spans = [
        key_on_line(own, r.key, r.location.line if r.location else None) for r in bib.references
    ]
    out = _start(path, result, spans, {s.key: s.key for s in spans})
    places = {s.key: Place(here, s) for s in spans}
    out.entries = {c.key: places[c.key] for c in result.citations if c.key in places}
    said = Said().of(result, settings.template)
    for citation in result.citations:
        out.notes += _notes(citation, said, [], out.entries.get(citation.key))
    _add_problems(out, result.problems, here, lambda p: own if p == here else lines(p))
    _add_warnings(out, result.warnings, here)
    return out


def unreadable(path: Path, exc: BaseException) -> Verdicts:
    """A document the server cannot read says so, as one diagnostic on its first line."""
    from rwgate.render.safe import one_line

    place = Place(str(path), Span("", 0, 0, 0))
    note = Note(place, f"{CANNOT_READ}: {one_line(exc)}", "error", code="unreadable")
    return Verdicts(path=path, notes=[note])


def key_on_line(text_lines: list[str], key: str, line: int | None) -> Span:
    """Where an entry's ``key`` is written, from the reader's line (1-based) of its entry: the
    key's columns on that line or the few after it (a CSL JSON ``id`` follows its ``{``), else
    the whole start of that line."""
    first = max((line or 1) - 1, 0)
    for number in range(first, min(first + 8, len(text_lines))):
        found = _whole(text_lines[number], key)
        if found >= 0:
            return Span(key, number, found, found + len(key))
    width = len(text_lines[first]) if first < len(text_lines) else 0
    return Span(key, first, 0, width)


def _whole(line: str, key: str) -> int:
    """The column of ``key`` in ``line`` as a whole word (not inside a longer key), or -1."""
    at = line.find(key)
    while at >= 0:
        before = line[at - 1] if at else " "
        end = at + len(key)
        after = line[end] if end < len(line) else " "
        if not (before.isalnum() or before in "_-:") and not (after.isalnum() or after in "_-:"):
            return at
        at = line.find(key, at + 1)
    return -1


def _start(
    path: Path, result: CheckResult, spans: list[Span], resolved: dict[str, str]
) -> Verdicts:
    return Verdicts(
        path=path,
        spans=spans,
        resolved=resolved,
        citations={c.key: c for c in result.citations},
        sources=list(result.sources),
        complete=result.complete,
    )


class _Resolved(dict[str, str]):
    """Absolute paths of the files readers name (each resolved once per pass)."""

    def __missing__(self, name: str) -> str:
        self[name] = str(Path(name).resolve())
        return self[name]


def _entry_place(ref: Reference | None, lines: Lines, where: _Resolved, said: Said) -> Place | None:
    """Where a reference's entry is written, when a reader gave its file and line."""
    if ref is None or ref.missing or ref.location is None or ref.location.line is None:
        return None
    path = where[ref.location.file]
    try:
        text_lines = lines(path)
    except OSError:
        return None
    known = said.entries.get(id(ref))
    if known is not None and known[0] is ref and known[1] is text_lines:
        return known[2]
    place = Place(path, key_on_line(text_lines, ref.key, ref.location.line))
    said.entries[id(ref)] = (ref, text_lines, place)
    return place


def message_of(citation: Citation, template: str | None) -> str:
    """The build's one-line note: the annotation text for a flagged work (``Retracted 2010;
    notice doi:...``), the failure line's words for a work that could not be judged."""
    from rwgate.contract.vocab import FLAGGED_STATUSES
    from rwgate.frontends.kit import describe
    from rwgate.render.annotate import annotate

    if citation.status in FLAGGED_STATUSES:
        try:
            text = annotate(citation, template).text
        except RwgateError:
            text = annotate(citation, None).text
        return f"{text} (allowed)" if citation.allowed else text
    said = describe(citation)
    prefix = f"{citation.key}: "
    return said[len(prefix) :] if said.startswith(prefix) else said


def _notes(citation: Citation, said: Said, uses: list[Place], entry: Place | None) -> list[Note]:
    """The notes of a work: at each of its citations, and at its entry."""
    severity = SEVERITY_OF_ACTION.get(citation.action)
    if severity is None:  # ignored by the policy: nothing to say
        return []
    message, url = said.say(citation)
    struck = citation.status in STRUCK

    def note(place: Place, related: list[Related]) -> Note:
        return Note(place, message, severity, citation.status, citation.key, struck, url, related)

    notice: list[Related] = [(url, f"the notice: {url}")] if url else []
    to_entry: list[Related] = [(entry, f"the entry of {citation.key}")] if entry else []
    out = [note(use, [*to_entry, *notice]) for use in uses]
    if entry is not None:
        cited: list[Related] = [(use, f"{citation.key} cited here") for use in uses[:5]]
        out.append(note(entry, [*cited, *notice]))
    return out


def _add_problems(out: Verdicts, problems: list[Problem], here: str, lines: Lines) -> None:
    """The readers' problems where they are (an unreadable input is an error saying so)."""
    for problem in problems:
        path = here
        span = Span("", 0, 0, 0)
        if problem.location is not None:
            path = str(Path(problem.location.file).resolve())
            line = max((problem.location.line or 1) - 1, 0)
            try:
                width = len(lines(path)[line])
            except (OSError, IndexError):
                width = 0
            span = Span("", line, 0, width)
        message = f"{CANNOT_READ}: {problem.message}" if problem.unreadable else problem.message
        severity: Severity = "error" if problem.severity == "error" else "warning"
        out.notes.append(Note(Place(path, span), message, severity, code="input"))


def _add_warnings(out: Verdicts, warnings: list[str], here: str) -> None:
    for warning in warnings:
        out.notes.append(Note(Place(here, Span("", 0, 0, 0)), warning, "information", code="note"))
