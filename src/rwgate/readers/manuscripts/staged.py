"""The Markdown Quarto or knitr hands to pandoc, built from a source without running anything.

Quarto and knitr rewrite a source before pandoc reads it; rwgate does the same, minus running
code, by quarto-cli 1.11's and knitr's rules: Quarto's ``{{< include file >}}`` lines expanded
first (``expandIncludes``, paths as ``resolvePath`` takes them), then knitr's chunks
(:mod:`rwgate.readers.manuscripts.knitr`; an unclosed Quarto cell is prose, as ``breakQuartoMd``
reads it), then Quarto's reader's fences (``readqmd.lua``, ``escape_invalid_tags``). What cannot
be resolved is :attr:`Staged.unseen`: the caller reports it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rwgate.readers.locate import Allowed
from rwgate.readers.manuscripts.knitr import NEWLINE, blank_chunks

DEPTH = 16
"""Includes and child documents nested deeper than this are not followed (a loop guard besides
the check for a file that includes itself)."""

_SHORTCODE = re.compile(r"^\s*\{\{< (?!/\*)(.+?)(?<!\*/) >\}\}\s*$")
_PARAM = re.compile(r"""\s*(?:"([^"]*)"|'([^']*)'|([^"'\s]+))""")
_QUARTO_TAG_FIRST = re.compile(r"^([ \t\f\v]*`{3,}[ \t\f\v]*)(\{+[^.=\n\r]*\}+)")
_QUARTO_TAG = re.compile(r"^([ \t\f\v]*`{3,}[ \t\f\v]*)(\{+[^.=\n\r]+\}+)")


@dataclass
class Staged:
    """The Markdown pandoc is to read, and what could not be seen on the way."""

    text: str
    count: int = 0
    mismatched: list[tuple[Path, int]] = field(default_factory=list)
    unseen: list[tuple[str, Path, int]] = field(default_factory=list)
    """(message, file, line) of what is not read: includes, children, code that prints."""


@dataclass
class _Context:
    document: Path
    root: Path
    allowed: Allowed | None
    quarto: bool
    out: Staged
    stack: list[Path] = field(default_factory=list)


def include_target(line: str) -> str | None:
    """The file an ``{{< include file >}}`` line names ("" for none), or None for another line."""
    match = _SHORTCODE.match(line)
    if match is None:
        return None
    words = match.group(1).split(None, 1)
    if not words or words[0].lower() != "include":
        return None
    param = _PARAM.match(words[1]) if len(words) > 1 else None
    return next((g for g in param.groups() if g is not None), "") if param else ""


Rewrite = Callable[[list[str], Path, _Context], list[str]]


def _nested(
    name: str, kind: str, where: tuple[Path, int], ctx: _Context, rewrite: Rewrite
) -> list[str] | None:
    """An include or child file's lines, rewritten as the document's are (``rewrite``), or None
    (why: in ``ctx.out.unseen``)."""
    file, line = where
    base = ctx.root if name.startswith("/") else ctx.document.parent
    path = (base / name.lstrip("/")).resolve() if name else base
    said = f"{kind} not read (its citations are not checked): {name or '(no file named)'}"
    if len(ctx.stack) >= DEPTH or path in ctx.stack:
        ctx.out.unseen.append((f"{said}; it includes itself, or nests over {DEPTH} deep", *where))
        return None
    if ctx.allowed is not None and not ctx.allowed(path):
        ctx.out.unseen.append((f"a {kind} lies outside the allowed roots; refused", file, line))
        return None
    try:
        text = path.read_bytes().decode("utf-8", "surrogateescape")
    except OSError as exc:
        ctx.out.unseen.append((f"{said} ({exc.strerror or 'not a file'})", file, line))
        return None
    ctx.stack.append(path)
    try:
        return rewrite(NEWLINE.split(text.removeprefix("\ufeff")), path, ctx)
    finally:
        ctx.stack.pop()


def _expand(lines: list[str], file: Path, ctx: _Context) -> list[str]:
    """``lines`` of ``file`` with each include line replaced by its file's (expanded) lines."""
    out: list[str] = []
    for number, line in enumerate(lines, start=1):
        name = include_target(line)
        if name is None:
            out.append(line)
            continue
        found = _nested(name, "included file", (file, number), ctx, _expand)
        out += [""] if found is None else [*found, ""]
    return out


def _knit(lines: list[str], file: Path, ctx: _Context) -> list[str]:
    """knitr's reading of ``lines``: chunks blanked, captions and child documents in place."""

    def child(name: str, line: int) -> list[str] | None:
        return _nested(name, "child document", (file, line), ctx, _knit)

    chunks = blank_chunks("\n".join(lines), child, keep_unclosed=ctx.quarto)
    ctx.out.count += chunks.count
    ctx.out.mismatched += [(file, line) for line in chunks.mismatched]
    ctx.out.unseen += [(message, file, line) for message, line in chunks.unseen]
    return chunks.text.split("\n")


def quarto_fences(lines: list[str]) -> list[str]:
    """Quarto's reader's rule: a fence line's braced tag with no ``.`` or ``=`` becomes a class
    (rwgate writes ``q``s of the same length: only the code block matters here)."""
    out = []
    for index, line in enumerate(lines):
        match = (_QUARTO_TAG_FIRST if index == 0 else _QUARTO_TAG).match(line)
        if match:
            line = match.group(1) + "q" * len(match.group(2)) + line[match.end() :]
        out.append(line)
    return out


def stage(
    path: Path,
    text: str,
    *,
    quarto: bool,
    knitr: bool,
    root: Path | None = None,
    allowed: Allowed | None = None,
) -> Staged:
    """What pandoc reads of ``path`` (whose text is ``text``) once Quarto (``quarto``: includes,
    its reader's fences) and knitr (``knitr``: chunks) have rewritten it."""
    out = Staged(text=text)
    ctx = _Context(path, root or path.parent, allowed, quarto, out, [path.resolve()])
    lines = NEWLINE.split(text)
    if quarto:
        lines = _expand(lines, path, ctx)
    if knitr:
        lines = _knit(lines, path, ctx)
    if quarto:
        lines = quarto_fences(lines)
    out.text = "\n".join(lines)
    return out
