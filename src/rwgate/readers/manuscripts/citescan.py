"""Where citations are written in a manuscript's text: each cited key with its line and columns.

The build's readers say *which* keys a document cites but not *where*: the LSP and SARIF need a
line for each. A key found here counts only when the build's reader found it too, so a false find
is harmless and a miss only loses a place, never a verdict.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rwgate.contract.models import CitedDocument, Location

_LATEX = (".tex", ".ltx")


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
# (:.#$%&-+?<>~/) only when followed by a key character. ``@{...}`` holds any key. The "@"
# comes first, its lookbehind after it, so the engine searches for the "@" (six times faster).
_MD_KEY = re.compile(
    r"@(?<![\w@]@)(?:\{(?P<braced>[^{}\s]+)\}|(?P<plain>[\w](?:[\w]|[:.#$%&\-+?<>~/](?=[\w]))*))"
)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")

# LaTeX: \cite, \citep, \parencite, \textcite, \footcite, \autocite, \nocite, \cites{a}{b}...
_TEX_CITE = re.compile(r"\\[A-Za-z]*cite[A-Za-z]*\*?")
_TEX_OPTION = re.compile(r"\s*\[[^\]]*\]")
_TEX_GROUP = re.compile(r"\s*\{([^{}]*)\}")
_TEX_COMMENT = re.compile(r"(?<!\\)%")


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
    found = _TEX_COMMENT.search(line)
    return line if found is None else line[: found.start()].ljust(len(line))


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


def cited_places(doc: CitedDocument, text: str) -> dict[str, list[Location]]:
    """Every line of ``doc``'s text (its file, ``text``) where each key it cites is written,
    keyed by the reader's key (a scanned key that is not one of them is dropped). LaTeX's
    reader knows the first place of a key in an included file too: it comes first."""
    from rwgate.contract.models import Location
    from rwgate.readers.keys import resolve_key

    file = str(Path(doc.path))
    latex = Path(doc.path).suffix.lower() in _LATEX
    keys = set(doc.keys)
    folded: dict[str, str] = {}
    if latex or doc.bibtex_keys:  # one work under any case: its places under its first key
        for first in doc.keys:
            folded.setdefault(first.casefold(), first)

    def canonical(key: str) -> str | None:
        exact = resolve_key(key, keys)
        return folded.get((exact or key).casefold(), exact)

    places: dict[str, list[Location]] = {}
    found = list(doc.key_locations.items())
    found += [(s.key, Location(file=file, line=s.line + 1)) for s in citation_spans(text, latex)]
    for key, here in found:
        cited = canonical(key)
        if cited is None:
            continue
        known = places.setdefault(cited, [])
        if all((str(Path(p.file)), p.line) != (str(Path(here.file)), here.line) for p in known):
            known.append(here)
    return places
