"""The filter's stderr lines (``rw-filter: WARNING: ...``, ``rw-filter: ERROR: ...``), and what
it says about each work it annotates (:func:`announce`).

pandoc shows a filter's stderr as is; a fixed prefix lets users and CI logs grep for it, and one
line per message (whitespace folded, control characters replaced as in the terminal report) keeps
upstream text (a notice DOI, an error body) from spoofing extra lines or driving the terminal.
Every line written is also remembered, so the verdict memo can replay exactly the same lines.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rwgate.contract.models import Citation

PROG = "rw-filter"
BIBLIOGRAPHY_FORMATS = frozenset({"csljson", "bibtex", "biblatex"})
"""Writers that print the references themselves and none of the document: no notice can be put
anywhere they show it."""
_written: list[str] = []
# The core's hints name ``rwgate check``'s options; a pandoc filter takes none, so each line says
# them as the filter's settings (environment, ``rwgate:`` metadata).
_FOR_FILTER: tuple[tuple[str, str], ...] = (
    ("run with --offline (or RWGATE_OFFLINE=1)", "set RWGATE_OFFLINE=1"),
    (
        "`--recover-dois` looks them up",
        "RWGATE_RECOVER_DOIS=1 (or `rwgate: {recover-dois: true}` in the metadata) looks them up",
    ),
    ("(--no-memo, RWGATE_NO_MEMO)", "(RWGATE_NO_MEMO=1)"),
    ("(--no-cache, RWGATE_NO_CACHE)", "(RWGATE_NO_CACHE=1)"),
)


def line(level: str, message: str) -> str:
    """The finished line :func:`say` writes, its hints in the filter's words."""
    if "--" in message:
        for said, meant in _FOR_FILTER:
            message = message.replace(said, meant)
    if not message.isprintable():
        # Only text with control or format characters needs cleaning, and the module that
        # cleans it loads the core, which most runs (every memo hit) never need.
        from rwgate.render.safe import term_safe

        message = term_safe(message)
    return f"{PROG}: {level}: {' '.join(message.split())}\n"


def say(level: str, message: str) -> None:
    write_line(line(level, message))


def write_line(line: str) -> None:
    """Write one finished line (from :func:`say`, or replayed from the memo) to stderr."""
    _written.append(line)
    sys.stderr.write(line)
    sys.stderr.flush()


def mark() -> int:
    return len(_written)


def lines_since(bookmark: int) -> list[str]:
    return _written[bookmark:]


def announce(citations: Sequence[Citation], placed: Mapping[str, str], fmt: str, mode: str) -> bool:
    """One line per annotated work saying where its notice went (``placed``: what
    :func:`rwgate.frontends.pandoc.render.place` answered); True when the build must stop: a work
    not allowed whose notice the output cannot show (an ``ERROR`` line naming the pipeline that
    would show it; an allowed work gets a ``WARNING`` instead)."""
    from rwgate.frontends.kit import describe, should_annotate

    stop = False
    for citation in citations:
        if not should_annotate(citation):
            continue
        where = placed.get(citation.key)
        if where is not None:
            say("WARNING", f"{describe(citation)} (notice {where})")
            continue
        message = (
            f"{describe(citation)}: the output would show it without its notice ({_how(fmt, mode)})"
        )
        say("WARNING" if citation.allowed else "ERROR", message)
        stop = stop or not citation.allowed
    return stop


def _how(fmt: str, mode: str) -> str:
    """How to get the notice, for a work the output would show without it."""
    base = fmt.split("+")[0]
    if base in BIBLIOGRAPHY_FORMATS:
        return (
            f"-t {base} writes the references alone, with no place for a notice: convert the "
            "document itself (html, docx, latex, pdf) to get the notices"
        )
    if mode == "shadow":
        return (
            "it has no citation in the text for the notice to follow (nocite), and the .bst may "
            "never print the shadow .bib's note: run pandoc --citeproc before rw-filter, or "
            "write the .tex without rw-filter and build it with rw-latexmk, which annotates the "
            "bibliography BibTeX or biber writes"
        )
    return (
        "it has no citation in the text for the notice to follow (nocite) and no rendered "
        "bibliography entry: run --citeproc before rw-filter (or use --lua-filter "
        "filters/rwgate.lua) without suppress-bibliography, so that its entry carries the notice"
    )
