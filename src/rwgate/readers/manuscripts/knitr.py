"""Code chunks of R Markdown and Quarto sources, found as knitr finds them, made inert for pandoc.

knitr (and Quarto) replaces each chunk by its output before pandoc reads anything; read raw, a
chunk's ``# see [@lacour2014]`` is a citation and a closing fence can swallow the prose after it.
So every chunk becomes blank lines, one per line it had (``file:line`` still points at the
source), by knitr's own rules (``all_patterns$md`` in ``R/pattern.R``, ``group_indices`` in
``R/parser.R``, knitr 1.42 to 1.51; Quarto adds ``.`` to engine names). Prose engines keep their
text; captions and a literal ``child`` take the chunk's place. Options come from the header (R
expressions, knitr's ``parse_params``) and ``#|`` lines (YAML or R); only literal values are known,
anything else is :class:`Computed`, and what code would print is :attr:`Chunks.unseen`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

CHUNK_BEGIN = re.compile(r"^([\t >]*`{3,})\s*\{([a-zA-Z0-9_][a-zA-Z0-9_.]*)( *[ ,].*)?\}\s*$")
CHUNK_END = re.compile(r"^[\t >]*`{3,}\s*$")
LOOKAHEAD = 2000
NEWLINE = re.compile(r"\r\n|\r|\n")

PROSE_ENGINES = frozenset(
    {
        *("asis", "block", "block2"),
        # bookdown's theorem and proof engines (bookdown::: eng_theorem, eng_proof)
        *("theorem", "lemma", "corollary", "proposition", "conjecture", "definition"),
        *("example", "exercise", "hypothesis", "proof", "remark", "solution"),
    }
)
"""Engines whose chunk text is Markdown that knitr writes into the document."""

CAPTIONS = (
    *("fig.cap", "fig.scap", "fig.subcap", "tab.cap"),  # knitr, bookdown, flextable
    *("fig-cap", "fig-scap", "fig-subcap", "tbl-cap", "tbl-subcap", "lst-cap"),  # Quarto
)
"""Chunk options whose text is Markdown in the page (a caption is rendered as Markdown)."""

Child = Callable[[str, int], list[str] | None]
"""Reads the child document named (with the chunk's line): its text as lines, or None when it
could not be read (the reader says why)."""


@dataclass(frozen=True)
class Computed:
    """An option whose value is code (its text kept for the message)."""

    code: str


Value = list[str] | bool | Computed | None
"""An option's value: strings (one or several), a logical, code, or None (absent, or a literal
that is neither, such as a number)."""

_OPTION_PREFIX = re.compile(r"^[\t >]*(?:#|//|--)\|\s?")
_R_ASSIGNMENT = re.compile(r"^\s*[A-Za-z_.][\w.-]*\s*=")
_R_STRING = re.compile(r"""^(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')$""", re.S)
_R_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}


def _split_top(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside quotes and brackets (R argument lists)."""
    parts: list[str] = []
    depth, quote, start, i = 0, "", 0, 0
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "\"'`":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _r_string(text: str) -> str | None:
    """The value of an R string literal, or None when ``text`` is not one."""
    match = _R_STRING.match(text.strip())
    if match is None:
        return None
    body = match.group(1) if match.group(1) is not None else match.group(2)
    return re.sub(r"\\(.)", lambda m: _R_ESCAPES.get(m.group(1), m.group(1)), body, flags=re.S)


def r_value(text: str) -> Value:
    """An R expression as a :data:`Value`: strings, ``c(...)`` of strings, a logical, else code."""
    text = text.strip()
    single = _r_string(text)
    if single is not None:
        return [single]
    if text in ("TRUE", "T", "FALSE", "F"):
        return text.startswith("T")
    if text == "NULL" or re.fullmatch(r"-?[\d.]+L?", text):
        return None
    inner = re.fullmatch(r"c\s*\((.*)\)", text, re.S)
    if inner:
        items = [_r_string(item) for item in _split_top(inner.group(1))]
        if all(item is not None for item in items):
            return [item for item in items if item is not None]
    return Computed(text)


def r_options(text: str) -> dict[str, Value]:
    """``label, key=value, ...`` (a header's text after the engine, or ``#|`` lines in R syntax):
    each named option's value; unnamed ones (the label) are left out."""
    found: dict[str, Value] = {}
    for part in _split_top(text):
        name, equals, value = part.partition("=")
        if equals and re.fullmatch(r"[A-Za-z_.][\w.-]*", name.strip()):
            found[name.strip()] = r_value(value)
    return found


class _Loader(yaml.SafeLoader):
    """YAML with Quarto's ``!expr`` tag (an R or Python expression) kept as :class:`Computed`."""


_Loader.add_constructor(
    "!expr",
    lambda loader, node: Computed(str(loader.construct_scalar(node))),  # type: ignore[arg-type]
)


def _yaml_value(value: Any) -> Value:
    if isinstance(value, Computed | bool):
        return value
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        if any(isinstance(item, Computed) for item in value):
            return Computed(", ".join(str(i) for i in value))
        return [str(item) for item in value if isinstance(item, str)]
    return None


def pipe_options(lines: list[str]) -> dict[str, Value]:
    """The options of the ``#|`` lines at the top of a chunk's body (YAML or R syntax); an
    unparsable block gives none (Quarto and knitr stop on it: there is no output to check)."""
    block = []
    for line in lines:
        prefix = _OPTION_PREFIX.match(line)
        if prefix is None:
            break
        block.append(line[prefix.end() :])
    if not block:
        return {}
    if _R_ASSIGNMENT.match(block[0]):
        return r_options(", ".join(block))
    try:
        data = yaml.load("\n".join(block), Loader=_Loader)  # a SafeLoader, plus !expr
    except yaml.YAMLError:
        return {}
    return {str(k): _yaml_value(v) for k, v in data.items()} if isinstance(data, dict) else {}


def chunk_options(header: str, body: list[str]) -> dict[str, Value]:
    """A chunk's options: its header's (the text after the engine name), then its ``#|`` lines',
    which win (knitr and Quarto merge them so)."""
    return {**r_options(header), **pipe_options(body)}


@dataclass
class Chunks:
    """A source with its chunks blanked, and what was seen on the way."""

    text: str
    count: int = 0
    children: list[tuple[str, int]] = field(default_factory=list)
    """``child=`` documents a chunk names literally (name, line)."""
    mismatched: list[int] = field(default_factory=list)
    """Lines of closing fences that do not match their opening (knitr ≥ 1.46 refuses these)."""
    unseen: list[tuple[str, int]] = field(default_factory=list)
    """What a chunk would print that is not known without running it (message, line)."""


def _prefix(line: str) -> str:
    """A chunk line's blockquote/indent prefix, kept so a chunk in a list or quote stays there."""
    return line[: len(line) - len(line.lstrip("\t >"))].rstrip(" \t")


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


def _off(value: Value) -> bool:
    """Whether a logical option is literally false (``eval=FALSE``, ``include: false``)."""
    return value is False or value == ["false"]


def _strings(value: Value) -> list[str]:
    return value if isinstance(value, list) else []


def _printed(options: dict[str, Value], engine: str, line: int, out: Chunks) -> list[str]:
    """The Markdown a chunk puts in the page that rwgate can read (its captions); what it would
    print that cannot be known is noted in ``out.unseen``."""
    if _off(options.get("eval")) or _off(options.get("include")):
        return []  # nothing runs, or nothing of it is shown
    captions: list[str] = []
    for name in CAPTIONS:
        value = options.get(name)
        if isinstance(value, Computed):
            out.unseen.append((f"a caption computed by code ({name}: {value.code})", line))
        captions += [" ".join(text.split()) for text in _strings(value) if text.strip()]
    results = [options.get("results"), options.get("output")]
    if engine.lower() not in PROSE_ENGINES:
        if any(_strings(value) == ["asis"] for value in results):
            out.unseen.append(("a chunk whose output is Markdown printed by code (asis)", line))
        elif any(isinstance(value, Computed) for value in results):
            out.unseen.append(("a chunk whose output format is computed by code", line))
    return captions


def _children(options: dict[str, Value], line: int, out: Chunks, child: Child | None) -> list[str]:
    """The lines of the ``child`` documents a chunk names (knitr's ``sc_split``: a string may
    name several, separated by ``,`` or ``;``)."""
    value = options.get("child")
    if _off(options.get("eval")) or value is None or isinstance(value, bool):
        return []
    if isinstance(value, Computed):
        out.unseen.append((f"a child document named by code ({value.code})", line))
        return []
    found: list[str] = []
    for name in [n.strip() for text in value for n in re.split(r"[;,]", text) if n.strip()]:
        out.children.append((name, line))
        text = child(name, line) if child else None
        found += ["", *text, ""] if text is not None else []
    return found


def _replacement(
    lines: list[str], span: tuple[int, int, str], out: Chunks, child: Child | None, unclosed: bool
) -> list[str]:
    """What a chunk's lines become: blank lines (or its body, for a prose engine, or when
    ``unclosed`` is read as prose), with its captions and child documents in its place."""
    first, last, engine = span
    header = CHUNK_BEGIN.match(lines[first])
    options = chunk_options(header.group(3) or "" if header else "", lines[first + 1 : last + 1])
    closed = last > first and CHUNK_END.match(lines[last]) is not None
    if closed and header and lines[last].rstrip() != header.group(1):  # unlike its opening
        out.mismatched.append(last + 1)
    keep_body = engine.lower() in PROSE_ENGINES or (unclosed and not closed)
    new = []
    for number in range(first, last + 1):
        blank = not keep_body or number == first or (number == last and closed)
        new.append(_prefix(lines[number]) if blank else lines[number])
    prefix = _prefix(lines[first])
    added = [
        f"{prefix}{text}"
        for caption in _printed(options, engine, first + 1, out)
        for text in ("", caption, "")
    ]
    added += [
        f"{prefix}{text}" if text else prefix for text in _children(options, first + 1, out, child)
    ]
    if keep_body or not added:
        return new + added
    return added + new[len(added) :] if len(added) <= len(new) else added


_INLINE_CODE = re.compile(r"`(?:r|\{r\})[ \t]+([^`]+)`")
_PRINTS_CITATIONS = re.compile(
    r"\b(?:[Cc]ite[pt]?|[Cc]itation|(?:Auto|Text|Paren|Foot)[Cc]ite|cite_\w+)\s*\(|[\"'\[]@"
)


def _inline_citations(lines: list[str], spans: list[tuple[int, int, str]], out: Chunks) -> None:
    """Inline code (`` `r expr` ``) that may print a citation: a call of a citation function
    (knitcitations' ``citep``, RefManageR's ``Citet``...) or a string that opens with ``@``. Its
    output is not known without running it (unseen); inline code that prints numbers is not."""
    inside = {i for first, last, _ in spans for i in range(first, last + 1)}
    for i, line in enumerate(lines):
        if "`" not in line or i in inside:
            continue
        for match in _INLINE_CODE.finditer(line):
            if _PRINTS_CITATIONS.search(match.group(1)):
                said = f"inline code that may print a citation (`r {match.group(1).strip()}`)"
                out.unseen.append((said, i + 1))


def blank_chunks(text: str, child: Child | None = None, keep_unclosed: bool = False) -> Chunks:
    """``text`` with every code chunk turned into blank lines (prose engines keep their body),
    its captions and (with ``child``) its child documents in its place. ``keep_unclosed``: the
    body of a chunk still open at the end is kept too (Quarto's Jupyter engine reads it as
    Markdown)."""
    lines = NEWLINE.split(text)
    out = Chunks(text=text)
    spans = _spans(lines)
    _inline_citations(lines, spans, out)
    if not spans:
        return out
    result: list[str] = []
    done = 0
    for span in spans:
        result += lines[done : span[0]]
        unclosed = keep_unclosed and span[1] == len(lines) - 1
        result += _replacement(lines, span, out, child, unclosed)
        done = span[1] + 1
    result += lines[done:]
    out.count = len(spans)
    out.text = "\n".join(result)
    return out
