"""Where keys are written in an editor's buffer: citations in a manuscript, entries in a
bibliography.

The build's readers say *which* keys a document cites (pandoc's AST, LaTeX's ``.aux``) but not
*where*: an editor needs a line and a column for each. These scanners find the places in the
text as it is in the buffer, saved or not. They never decide what is cited on their own: a key
they find is judged only when it names an entry of the document's bibliographies (or is cited
in the saved document, as the build reads it), so a false find is harmless and a miss only
loses a squiggle, never a verdict (the server places a verdict without a place on its first
citation's line). The citation scanners are the build's (:mod:`rwgate.readers.manuscripts.citescan`,
which the SARIF report's places come from too); the entry finder is the editor's.
"""

from __future__ import annotations

from rwgate.readers.manuscripts.citescan import Span, citation_spans, latex_spans, markdown_spans

__all__ = ["Span", "citation_spans", "key_on_line", "latex_spans", "markdown_spans", "span_at"]


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


def span_at(spans: list[Span], line: int, column: int) -> Span | None:
    """The span under the cursor, if any."""
    for span in spans:
        if span.contains(line, column):
            return span
    return None
