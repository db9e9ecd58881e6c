"""A chapter's main document: where the bibliography of a ``.tex`` fragment is named.

A chapter file (``\\input``, ``\\include``d or a ``subfiles`` part, with no ``\\documentclass``
of its own) cites works whose bibliography its main document names. The pre-commit hook is
handed only the staged files, so ``rwgate check chapters/intro.tex`` must judge the chapter's
citations with its main document's bibliography: read alone it names none, and "cannot judge
from the sources" (exit 2) would block every commit of a chapter.

The main document is the one the magic comment ``% !TEX root = ../main.tex`` names (TeXShop,
TeXstudio, VS Code's LaTeX Workshop write it), else the one ``.tex`` file with a
``\\documentclass`` in the fragment's folder, or up to :data:`LEVELS` folders above, whose sources
include the fragment. None when there is none or more than one in the nearest folder that has
any: a guess between two documents could pick the wrong bibliography, so the fragment is then
"cannot judge" as before. Files outside the allowed roots (MCP) are never read.
"""

from __future__ import annotations

import re
from pathlib import Path

from rwgate.readers.builds.latexread import Allowed, LatexError, read_tex

_ROOT_COMMENT = re.compile(
    r"^[ \t]*%[ \t]*!TEX[ \t]+root[ \t]*=[ \t]*(\S[^\r\n]*?)[ \t]*$", re.I | re.M
)
_CLASS = re.compile(r"^[^%\n]*\\documentclass\b", re.M)
LEVELS = 2
MAX_CANDIDATES = 40
"""``.tex`` files looked at per folder: a folder of hundreds of generated files is not searched."""


def is_fragment(text: str) -> bool:
    """A file with no ``\\documentclass`` outside comments: part of another document."""
    return _CLASS.search(text) is None


def main_document(tex: Path, text: str, allowed: Allowed | None = None) -> Path | None:
    """The main document of the fragment ``tex`` (whose text is ``text``), or None."""
    named = _ROOT_COMMENT.search(text[:8192])
    if named:
        root = (tex.parent / named.group(1).strip()).resolve()
        if root.suffix == "":
            root = root.with_suffix(".tex")
        if root != tex.resolve() and root.is_file() and (allowed is None or allowed(root)):
            return root
        return None
    from rwgate.readers.builds.texscan import scan_tex

    me = tex.resolve()
    folder = me.parent
    for _ in range(LEVELS + 1):
        found = []
        for candidate in sorted(folder.glob("*.tex"))[:MAX_CANDIDATES]:
            if candidate.resolve() == me or (allowed is not None and not allowed(candidate)):
                continue
            try:
                if is_fragment(read_tex(candidate, allowed)):
                    continue
                files = scan_tex(candidate, allowed).files
            except LatexError:
                continue
            if me in {f.resolve() for f in files}:
                found.append(candidate)
        if found:
            return found[0] if len(found) == 1 else None
        if folder.parent == folder:
            return None
        folder = folder.parent
    return None
