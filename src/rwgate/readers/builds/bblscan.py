"""Finding the entries of a ``.bbl``: ``\\bibitem[label]{KEY}`` as TeX reads it. Shared by the
reader (:mod:`.bbl`) and the annotator (:mod:`rwgate.frontends.latex.bbl`), and imports nothing
beyond ``re``: the LaTeX hooks' reuse path annotates without loading Pydantic.
"""

from __future__ import annotations

import re

BIBITEM = re.compile(r"\\bibitem(?![A-Za-z@])")
END_BIB = re.compile(r"\\end\{thebibliography\}")
_STRAY = {0xDC00 + b: b for b in range(0x80, 0x100)}  # a surrogateescape byte -> Latin-1
_COMMENT = re.compile(r"(?<!\\)(?:\\\\)*%")
_SKIPPED = re.compile(r"(?:\s|%[^\n]*\n?)*")


def bibitems(text: str) -> list[re.Match[str]]:
    """The ``\\bibitem``s TeX reads: not those after a ``%`` on their line (a commented-out
    entry is not printed). Linear: the text between two lines' matches is looked at once."""
    found = []
    line_end, comment = -1, 0
    for match in BIBITEM.finditer(text):
        if match.start() > line_end:  # on a new line: where it starts, ends, and its comment
            line = text.rfind("\n", line_end + 1, match.start()) + 1 or line_end + 1
            end = text.find("\n", match.start())
            line_end = len(text) if end < 0 else end
            hit = _COMMENT.search(text, line, line_end)
            comment = hit.end() if hit else line_end + 1
        if match.start() < comment:
            found.append(match)
    return found


def balanced(text: str, start: int, open_: str, close: str) -> int:
    """Index just after the group opened at ``text[start]``; braces nest inside ``[...]`` too."""
    depth = 0
    braces = 0
    i = start
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "{" and open_ != "{":
            braces += 1
        elif char == "}" and open_ != "{":
            braces -= 1
        elif char == open_ and braces == 0:
            depth += 1
        elif char == close and braces == 0:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def group(text: str, at: int) -> tuple[str, int] | None:
    """The ``{...}`` group starting at ``at`` (after white space): its inside and its end."""
    while at < len(text) and text[at].isspace():
        at += 1
    if at >= len(text) or text[at] != "{":
        return None
    end = balanced(text, at, "{", "}")
    return (text[at + 1 : end - 1], end) if end > 0 else None


def _skip_space(text: str, i: int) -> int:
    """Past white space and ``%`` comments (TeX skips both between a macro's arguments)."""
    skipped = _SKIPPED.match(text, i)
    return skipped.end() if skipped else i


def bibitem_key(text: str, pos: int) -> tuple[str, int] | None:
    """The key of the ``\\bibitem`` whose name ends at ``pos``, and where its body starts."""
    i = _skip_space(text, pos)
    if i < len(text) and text[i] == "[":
        i = balanced(text, i, "[", "]")
        if i < 0:
            return None
        i = _skip_space(text, i)
    if i >= len(text) or text[i] != "{":
        return None
    end = balanced(text, i, "{", "}")
    if end < 0:
        return None
    # The annotator reads the .bbl with surrogateescape (to write its bytes back unchanged):
    # a key BibTeX copied byte for byte from a Latin-1 .bib (m\xfcller2010) is then read as the
    # .bib and .aux readers read it, one Latin-1 character per stray byte, and gets its note.
    return text[i + 1 : end - 1].strip().translate(_STRAY), end
