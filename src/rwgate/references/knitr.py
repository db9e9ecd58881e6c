"""Code chunks of R Markdown and Quarto sources, found as knitr finds them, made inert for pandoc.

pandoc does not take a chunk header such as ```` ```{r setup, include=FALSE} ```` as a fence: read
raw, a chunk's text is prose (``# see [@lacour2014]`` in an R comment becomes a citation) and,
after a chunk that holds a blank line, its closing fence opens a code block that swallows the
citations up to the next chunk. knitr (and Quarto, whose knitr and Jupyter engines find chunks
the same way) replaces each chunk by its output before pandoc reads anything, so rwgate does what
knitr does, minus running code: every chunk becomes blank lines, one per line it had, so that
pandoc's ``file:line`` locations still point at the source.

The rules are knitr's own (``all_patterns$md`` in ``R/pattern.R`` and ``group_indices`` in
``R/parser.R``, the same in knitr 1.42, Debian 12's, and 1.51): a chunk opens on a line
``^[\\t >]*```+\\s*\\{engine( *[ ,].*)?\\}\\s*$`` and closes on the next line that is exactly its
opening prefix (indent or blockquote) and backticks; a header with the same prefix and backticks
inside an open chunk starts the next chunk; a closing line with other backticks ends the chunk when
no exact one follows (knitr 1.42 to 1.45 warn, 1.46 and later refuse the file). Quarto's cell
regex adds ``.`` to engine names, which is accepted too. ``{=html}`` is a pandoc raw block, not a
chunk.

Chunks whose engine writes its text into the document as Markdown (``asis``, ``block``,
``block2``, bookdown's theorem and proof environments) keep their text: the citations inside are
printed. Inline code (`` `r expr` ``, `` `{r} expr` ``) is already code to pandoc. What code
would print when run (``results='asis'``, inline values) is not known: nothing is executed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

CHUNK_BEGIN = re.compile(r"^([\t >]*`{3,})\s*\{([a-zA-Z0-9_][a-zA-Z0-9_.]*)( *[ ,].*)?\}\s*$")
CHUNK_END = re.compile(r"^[\t >]*`{3,}\s*$")
LOOKAHEAD = 2000
_NEWLINE = re.compile(r"\r\n|\r|\n")
_CHILD = re.compile(
    r"""\bchild\s*=\s*(?:c\(\s*)?["']([^"']+)["']|^[\t >]*#\|\s*child:\s*["']?([^"'\s]+)"""
)

PROSE_ENGINES = frozenset(
    {
        "asis",
        "block",
        "block2",
        # bookdown's theorem and proof engines (bookdown::: eng_theorem, eng_proof)
        "theorem",
        "lemma",
        "corollary",
        "proposition",
        "conjecture",
        "definition",
        "example",
        "exercise",
        "hypothesis",
        "proof",
        "remark",
        "solution",
    }
)
"""Engines whose chunk text is Markdown that knitr writes into the document."""


@dataclass
class Chunks:
    """A source with its chunks blanked, and what was seen on the way."""

    text: str
    count: int = 0
    children: list[tuple[str, int]] = field(default_factory=list)
    """``child=`` documents a chunk names (name, line): knitr reads them, rwgate does not."""
    mismatched: list[int] = field(default_factory=list)
    """Lines of closing fences that do not match their opening (knitr ≥ 1.46 refuses these)."""


def _prefix(line: str) -> str:
    """A chunk line's blockquote/indent prefix, kept so a chunk in a list or quote stays there."""
    match = re.match(r"[\t >]*", line)
    return match.group(0).rstrip(" \t") if match else ""


def _closes(fence: str, lines: list[str], i: int) -> bool:
    """Whether the closing-fence line ``i`` ends the chunk opened by ``fence`` (knitr's
    ``match_chunk_end``): an exact match does; another does only when no exact one follows
    before the next header of this chunk's kind (looked for up to :data:`LOOKAHEAD` lines on: a
    crafted file of mismatched fences must not take quadratic time)."""
    if re.fullmatch(re.escape(fence) + r"\s*", lines[i]):
        return True
    for later in lines[i + 1 : i + 1 + LOOKAHEAD]:
        if re.fullmatch(re.escape(fence) + r"\s*", later):
            return False
        if re.match(re.escape(fence) + r"`*\{", later):
            break
    return True


def _spans(lines: list[str]) -> list[tuple[int, int, str]]:
    """(first, last, engine) of every chunk, ``last`` included; an unclosed one runs to the end."""
    spans: list[tuple[int, int, str]] = []
    fence = ""
    start, engine = -1, ""
    for i, line in enumerate(lines):
        begin = CHUNK_BEGIN.match(line)
        if start >= 0:
            if begin and line.startswith(fence + "{"):  # the next chunk, this one left open
                spans.append((start, i - 1, engine))
                start, engine = i, begin.group(2)
            elif not begin and CHUNK_END.match(line) and _closes(fence, lines, i):
                spans.append((start, i, engine))
                start = -1
        elif begin:
            start, fence, engine = i, begin.group(1), begin.group(2)
    if start >= 0:
        spans.append((start, len(lines) - 1, engine))
    return spans


def _notice(lines: list[str], first: int, last: int, out: Chunks) -> None:
    """Record the ``child`` documents a chunk names and a closing fence unlike its opening."""
    for number in range(first, last + 1):
        line = lines[number]
        if number == first or line.lstrip(" \t>").startswith("#|"):
            child = _CHILD.search(line)
            if child:
                out.children.append((child.group(1) or child.group(2), number + 1))
    fence = CHUNK_BEGIN.match(lines[first])
    end = lines[last]
    if last > first and fence and CHUNK_END.match(end) and end.rstrip() != fence.group(1):
        out.mismatched.append(last + 1)


def blank_chunks(text: str) -> Chunks:
    """``text`` with every code chunk turned into blank lines (prose engines keep their body)."""
    lines = _NEWLINE.split(text)
    out = Chunks(text=text)
    spans = _spans(lines)
    if not spans:
        return out
    for first, last, engine in spans:
        _notice(lines, first, last, out)
        closed = last > first and CHUNK_END.match(lines[last]) is not None
        keep_body = engine.lower() in PROSE_ENGINES
        for number in range(first, last + 1):
            if not keep_body or number == first or (number == last and closed):
                lines[number] = _prefix(lines[number])
    out.count = len(spans)
    out.text = "\n".join(lines)
    return out
