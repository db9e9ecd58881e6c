"""Where keys are written in an editor's buffer: citations in a manuscript, entries in a
bibliography.

The build's readers say *which* keys a document cites (pandoc's AST, LaTeX's ``.aux``) but not
*where*: an editor needs a line and a column for each. These scanners find the places in the
text as it is in the buffer, saved or not. They never decide what is cited on their own: a key
they find is judged only when it names an entry of the document's bibliographies (or is cited
in the saved document, as the build reads it), so a false find is harmless and a miss only
loses a squiggle, never a verdict (the server places a verdict without a place on its first
citation's line).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """A key written at ``line`` (0-based), columns ``start``..``end`` (code points)."""

    key: str
    line: int
    start: int
    end: int

    def contains(self, line: int, column: int) -> bool:
        return line == self.line and self.start <= column <= self.end


# pandoc's citation key: a letter, digit or _, then key characters; internal punctuation
# (:.#$%&-+?<>~/) only when followed by a key character. ``@{...}`` holds any key.
_MD_KEY = re.compile(
    r"(?<![\w@])@(?:\{(?P<braced>[^{}\s]+)\}|(?P<plain>[\w](?:[\w]|[:.#$%&\-+?<>~/](?=[\w]))*))"
)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")

# LaTeX: \cite, \citep, \parencite, \textcite, \footcite, \autocite, \nocite, \cites{a}{b}...
_TEX_CITE = re.compile(r"\\[A-Za-z]*cite[A-Za-z]*\*?")
_TEX_OPTION = re.compile(r"\s*\[[^\]]*\]")
_TEX_GROUP = re.compile(r"\s*\{([^{}]*)\}")


def markdown_spans(text: str) -> list[Span]:
    """``@key`` and ``[@key]`` citations outside code (fenced blocks, chunks, inline code)."""
    spans: list[Span] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines()):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        visible = _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)
        for found in _MD_KEY.finditer(visible):
            group = "braced" if found.group("braced") else "plain"
            spans.append(Span(found.group(group), number, found.start(group), found.end(group)))
    return spans


def _uncommented(line: str) -> str:
    """``line`` without its TeX comment (an unescaped ``%`` to the end), same length."""
    for at, char in enumerate(line):
        if char == "%" and (at == 0 or line[at - 1] != "\\"):
            return line[:at] + " " * (len(line) - at)
    return line


def _keys_in_group(body: str, line: int, offset: int) -> Iterator[Span]:
    at = 0
    for part in body.split(","):
        key = part.strip()
        if key:
            start = offset + at + part.index(key)
            yield Span(key, line, start, start + len(key))
        at += len(part) + 1


def latex_spans(text: str) -> list[Span]:
    """Keys in ``\\cite``-family commands (natbib, biblatex, ``\\nocite``), outside comments;
    a command and its key list on one line (the usual way of writing them)."""
    spans: list[Span] = []
    for number, raw in enumerate(text.splitlines()):
        line = _uncommented(raw)
        for command in _TEX_CITE.finditer(line):
            at = command.end()
            while option := _TEX_OPTION.match(line, at):
                at = option.end()
            while group := _TEX_GROUP.match(line, at):
                spans.extend(_keys_in_group(group.group(1), number, group.start(1)))
                at = group.end()
                while option := _TEX_OPTION.match(line, at):  # \cites[a]{x}[b]{y}
                    at = option.end()
    return [s for s in spans if s.key != "*"]


def citation_spans(text: str, latex: bool) -> list[Span]:
    """The citations written in a manuscript's text."""
    return latex_spans(text) if latex else markdown_spans(text)


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
