"""Putting the annotations into the document, whichever stage of the build the filter runs at
(the rule: :mod:`rwgate.frontends.pandoc.filter`): into each flagged rendered entry, else after
each citation, and in LaTeX also into shadow .bib files (:mod:`.shadowbib`). A work whose notice
the output cannot show is left out of the :data:`Placed` answer. Placing needs neither the
references nor bibtexparser (writing the shadows does): a rebuild answered from the verdict memo
places the remembered shadows with the same :func:`place`.

Every string from outside (notice DOIs, what a user template prints) becomes a ``Str`` or a
``Link`` URL, never raw HTML or LaTeX, so each pandoc writer escapes it for its own format.
After ``--citeproc`` each entry is a ``Div#ref-KEY``; numeric styles split it into
``csl-left-margin`` and ``csl-right-inline`` spans, and the annotation goes in the latter (the
entry's text column). Ids renamed by filters (``KEY--2``, ``cites:KEY``) are matched to their key
by :func:`rwgate.readers.keys.resolve_key`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Container, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import panflute as pf
from panflute.elements import from_json

from rwgate.contract.doi import url as doi_url
from rwgate.frontends.pandoc.log import BIBLIOGRAPHY_FORMATS, line, say
from rwgate.readers.keys import resolve_key
from rwgate.render.annotation import Annotation
from rwgate.settings import recorded

if TYPE_CHECKING:
    from rwgate.contract.models import Reference

LATEX_FORMATS = frozenset({"latex", "beamer"})
Mode = Literal["entries", "shadow", "markers"]
NOTICE_CLASS = "rw-notice"
MARKER_CLASS = "rw-marker"
DOCX_STYLE = "Retraction Notice"
STYLED_FORMATS = frozenset({"docx", "odt"})
"""Writers that honour ``custom-style``; elsewhere the attribute would only be noise (HTML's
``data-custom-style``)."""
_SPACE = re.compile(r"(\s+)")


@dataclass(frozen=True)
class Shadowing:
    """The shadow bibliographies written for one document: ``names``, the new ``bibliography``
    list; ``keys``, the works annotated in a shadow; ``files``, each shadow file written (relative
    to the working directory, and in the run's record: a memo hit replays only while they hold).
    """

    names: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def _relative(path: Path) -> str:
    """The path as pandoc/BibTeX will see it: relative to the working directory when possible."""
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive on Windows
        return path.as_posix()


def write_shadows(
    annotations: Mapping[str, Annotation],
    refs: Mapping[str, Reference],
    files: list[tuple[str, str]],
) -> tuple[Shadowing, bool]:
    """Write shadow copies of the .bib files holding flagged entries; (result, all written)."""
    from rwgate.frontends.pandoc.shadowbib import ShadowError, write_shadow
    from rwgate.readers.bibliographies.registry import by_name

    notes_by_file: dict[str, dict[str, str]] = {}
    for key, annotation in annotations.items():
        ref = refs.get(key)
        if ref is None or ref.location is None:
            continue
        if Path(ref.location.file).suffix.lower() in by_name("bibtex").suffixes:
            notes_by_file.setdefault(ref.location.file, {})[key] = annotation.text
    shadows: dict[str, Path] = {}
    done: set[str] = set()
    complete = True
    for file, notes in notes_by_file.items():
        try:
            target, keys = write_shadow(Path(file), notes, Path.cwd())
        except ShadowError as exc:
            say("WARNING", str(exc))
            complete = False
            continue
        shadows[file] = target
        done |= keys
    if not shadows:
        return Shadowing(), complete
    names = [_relative(shadows[found]) if found in shadows else name for name, found in files]
    for shadow in shadows.values():  # re-checked by the memo like every file the run read
        recorded.note_file(shadow, shadow.read_bytes())
    return Shadowing(names, sorted(done), [_relative(p) for p in shadows.values()]), complete


def load(source: bytes, fmt: str) -> pf.Doc:
    """The pandoc JSON as a panflute document."""
    doc = json.loads(source, object_hook=from_json)
    doc.format = fmt
    return doc


def placement_mode(doc: pf.Doc, fmt: str) -> Mode:
    """Where annotations go in this document (see the module docstring)."""
    if has_rendered_bibliography(doc):
        return "entries"
    return "shadow" if fmt in LATEX_FORMATS else "markers"


def _words(text: str) -> list[pf.Inline]:
    """Plain text as ``Str``/``Space`` inlines (what pandoc's own readers would produce)."""
    return [pf.Space() if part.isspace() else pf.Str(part) for part in _SPACE.split(text) if part]


def annotation_inlines(annotation: Annotation) -> list[pf.Inline]:
    """The annotation text with its notice DOI as a link (where the text mentions the DOI)."""
    doi = annotation.notice_doi
    text = annotation.text
    if not doi or doi not in text:
        return _words(text)
    before, _, after = text.partition(doi)
    link = pf.Link(pf.Str(doi), url=doi_url(doi))
    return [*_words(before), link, *_words(after)]


def _span(annotation: Annotation, kind: str, inlines: list[pf.Inline], styled: bool) -> pf.Span:
    return pf.Span(
        *inlines,
        classes=[kind, f"rw-{annotation.status}"],
        attributes={"custom-style": DOCX_STYLE} if styled else {},
    )


def _styled(doc: pf.Doc) -> bool:
    return doc.format.split("+")[0] in STYLED_FORMATS


def notice_span(annotation: Annotation, styled: bool = False) -> pf.Span:
    """The annotation appended to a bibliography entry, in bold so a reader cannot miss it (as
    the LaTeX hooks set it with ``\\textbf``); HTML can restyle ``span.rw-notice``."""
    return _span(annotation, NOTICE_CLASS, [pf.Strong(*annotation_inlines(annotation))], styled)


def marker_span(annotation: Annotation, key: str | None = None, styled: bool = False) -> pf.Span:
    """The bracketed annotation put after a citation; ``key`` names the work in a multi-cite."""
    lead = [pf.Str(f"{key}:"), pf.Space()] if key else []
    inlines = annotation_inlines(annotation)
    return _span(annotation, MARKER_CLASS, [pf.Str("["), *lead, *inlines, pf.Str("]")], styled)


def _divs(doc: pf.Doc) -> Iterator[pf.Div]:
    """Every ``Div`` of the document, visiting block containers only (panflute's ``walk`` would
    visit, and rebuild, every inline of a long document: more than the rest of the filter)."""
    stack: list[pf.Element] = list(reversed(doc.content))
    while stack:
        block = stack.pop()
        if isinstance(block, pf.Div):
            yield block
        if isinstance(block, (pf.Div, pf.BlockQuote)):
            stack.extend(reversed(block.content))
        elif isinstance(block, (pf.BulletList, pf.OrderedList)):
            for item in reversed(block.content):
                stack.extend(reversed(item.content))


def _entry_divs(doc: pf.Doc, keys: Container[str]) -> dict[str, list[pf.Div]]:
    """Key -> citeproc's entry ``Div#ref-ID.csl-entry``s for it (a user's own ``#ref-x`` is not
    one). A key may have several: section-bibliographies renders ``ref-KEY--1``, ``ref-KEY--2``."""
    found: dict[str, list[pf.Div]] = {}
    for div in _divs(doc):
        if div.identifier.startswith("ref-") and "csl-entry" in div.classes:
            key = resolve_key(div.identifier[4:], keys)
            if key is not None:
                found.setdefault(key, []).append(div)
    return found


def has_rendered_bibliography(doc: pf.Doc) -> bool:
    """Whether citeproc has already run: it gives ``Div#refs`` the class ``csl-bib-body``
    (an author's empty ``::: {#refs}`` placeholder is there before citeproc too)."""
    return any("csl-bib-body" in d.classes for d in _divs(doc))


def _entry_target(div: pf.Div) -> pf.Element | None:
    """The inline container the annotation is appended to: csl-right-inline, else the last para."""
    right: list[pf.Span] = []

    def look(elem: pf.Element, _doc: pf.Doc | None) -> None:
        if isinstance(elem, pf.Span) and "csl-right-inline" in elem.classes:
            right.append(elem)

    div.walk(look)
    if right:
        return right[-1]
    for block in reversed(div.content):
        if isinstance(block, (pf.Para, pf.Plain)):
            return block
    return None


def annotate_entries(doc: pf.Doc, annotations: Mapping[str, Annotation]) -> set[str]:
    """Append each annotation to its ``Div#ref-KEY``; returns the keys that found their entry."""
    divs = _entry_divs(doc, annotations)
    placed: set[str] = set()
    for key, annotation in annotations.items():
        for div in divs.get(key, []):
            target = _entry_target(div)
            span = notice_span(annotation, _styled(doc))
            if target is None:
                div.content.append(pf.Plain(span))
            else:
                target.content.extend([pf.Space(), span])
            placed.add(key)
    return placed


def mark_citations(doc: pf.Doc, annotations: Mapping[str, Annotation]) -> set[str]:
    """Put a marker after every citation of an annotated work; returns the keys that got one
    (a work cited only through ``nocite`` has no citation to follow)."""
    marked: set[str] = set()

    def mark(elem: pf.Element, _doc: pf.Doc) -> list[pf.Element] | None:
        if not isinstance(elem, pf.Cite):
            return None
        resolved = (resolve_key(c.id, annotations) for c in elem.citations)
        keys = [k for k in dict.fromkeys(resolved) if k is not None]
        if not keys:
            return None
        several = len(elem.citations) > 1
        out: list[pf.Element] = [elem]
        for key in keys:
            marker = marker_span(annotations[key], key if several else None, _styled(doc))
            out.extend([pf.Space(), marker])
        marked.update(keys)
        return out

    for block in doc.content:
        block.walk(mark, doc)
    return marked


Placed = dict[str, str]
"""Key -> where its notice went, in words for the report line (``after each citation``); a key
that is not there has no visible notice."""


@dataclass
class Placement:
    """What :func:`place` did: the document as pandoc JSON, where each notice went, and the
    warnings about it (said by the caller: a memo hit has them among its remembered lines)."""

    output: bytes
    placed: Placed
    messages: list[str] = field(default_factory=list)


def _no_list_reason(doc: pf.Doc, mode: Mode) -> str:
    """Why the notice is not in a rendered entry, said as it is."""
    if mode == "entries":
        return "no rendered bibliography entry"
    if doc.get_metadata("suppress-bibliography", False) is True:
        return "no rendered bibliography (suppress-bibliography is set)"
    return "no rendered bibliography (rw-filter ran before --citeproc, or without it)"


def _where(in_entry: bool, marked: bool, shadowed: bool) -> str | None:
    parts = ["in its bibliography entry"] if in_entry else []
    if marked:
        parts.append("after each citation")
        if shadowed:
            parts.append("in the shadow .bib's note")
    return " and ".join(parts) or None


def place(
    doc: pf.Doc,
    mode: Mode,
    annotations: Mapping[str, Annotation],
    shadowing: Shadowing | None = None,
    inline: bool = False,
) -> Placement:
    """Put the annotations into ``doc``. A notice not in a rendered entry follows each citation
    of its work even where a shadow .bib carries it too (a style may drop ``note``)."""
    if doc.format.split("+")[0] in BIBLIOGRAPHY_FORMATS:
        return Placement(json.dumps(doc.to_json()).encode("utf-8"), {})
    in_entries = annotate_entries(doc, annotations) if mode == "entries" else set()
    shadowed = set(shadowing.keys) if shadowing is not None else set()
    jats = doc.format.startswith("jats")
    to_mark = {key: a for key, a in annotations.items() if inline or jats or key not in in_entries}
    # A walk through every inline: only when a notice must follow citations (never on the
    # common path, every notice in its rendered entry).
    marked = mark_citations(doc, to_mark) if to_mark else set()
    messages: list[str] = []
    if shadowing is not None and shadowing.files:
        doc.metadata["bibliography"] = pf.MetaList(*(pf.MetaString(n) for n in shadowing.names))
        messages.append(
            f"{_no_list_reason(doc, mode)}: bibliography now points at "
            f"{', '.join(shadowing.files)}, whose flagged entries carry the notice in 'note'; "
            "a .bst that prints no note (PLOS's plos2015.bst) or a CSL style drops it, so the "
            "notice also follows each citation (rw-latexmk checks the bibliography BibTeX or "
            "biber writes)",
        )
    rest = [k for k in annotations if k in marked and k not in in_entries and k not in shadowed]
    if rest:
        messages.append(
            f"{_no_list_reason(doc, mode)} for {', '.join(rest)}: "
            "a notice follows each citation instead",
        )
    if jats and not inline and annotations:
        # -t jats+element_citations builds <element-citation> from metadata, not from the
        # rendered entries, and a filter is not told the writer's extensions: so in JATS the
        # notice also follows every citation, whichever way the list is written.
        messages.append("JATS output: a notice also follows each citation of a flagged work "
            "(element citations are built from metadata and cannot carry it)")  # fmt: skip
    wheres = {key: _where(key in in_entries, key in marked, key in shadowed) for key in annotations}
    placed: Placed = {key: where for key, where in wheres.items() if where is not None}
    out = json.dumps(doc.to_json(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Placement(out, placed, [line("WARNING", m) for m in messages])
