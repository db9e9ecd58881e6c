"""Where an annotation goes in a pandoc document, built from AST elements only.

Every string from outside (notice DOIs, what a user template prints) becomes a ``Str`` or a
``Link`` URL, never raw HTML or LaTeX, so each pandoc writer escapes it for its own format.
After ``--citeproc`` each entry is a ``Div#ref-KEY``; numeric styles split it into
``csl-left-margin`` and ``csl-right-inline`` spans, and the annotation goes in the latter (the
entry's text column). Ids renamed by filters (``KEY--2``, ``cites:KEY``) are matched to their key
by :func:`rwgate.readers.keys.resolve_key`.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterator, Mapping

import panflute as pf

from rwgate.contract.doi import url as doi_url
from rwgate.readers.keys import resolve_key
from rwgate.render.annotation import Annotation

NOTICE_CLASS = "rw-notice"
MARKER_CLASS = "rw-marker"
DOCX_STYLE = "Retraction Notice"
STYLED_FORMATS = frozenset({"docx", "odt"})
"""Writers that honour ``custom-style``; elsewhere the attribute would only be noise (HTML's
``data-custom-style``)."""
_SPACE = re.compile(r"(\s+)")


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
    return str(getattr(doc, "format", "")).split("+")[0] in STYLED_FORMATS


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
