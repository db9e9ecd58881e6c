"""What the filter says about each work it annotates, once the notices are placed.

One rule holds for every pandoc pipeline: a flagged work that the output shows carries its notice,
or the build stops. :func:`rwgate.frontends.pandoc.render.place` answers where each notice went (a
rendered
entry, after each citation, a shadow .bib's ``note``); this module says so, one line per work, and
stops the build for a work whose notice went nowhere the output shows it, with the pipeline that
would show it. An allowed work is never failed: it is said as a warning instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rwgate.frontends.pandoc.log import say

if TYPE_CHECKING:
    from rwgate.contract.models import Citation


def _how(fmt: str, mode: str) -> str:
    """How to get the notice, for a work the output would show without it."""
    from rwgate.frontends.pandoc.render import BIBLIOGRAPHY_FORMATS

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


def announce(citations: Sequence[Citation], placed: Mapping[str, str], fmt: str, mode: str) -> bool:
    """One line per annotated work saying where its notice went; True when the build must stop
    (a work that is not allowed and whose notice the output cannot show: an ERROR line)."""
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
        if citation.allowed:
            say("WARNING", message)
        else:
            say("ERROR", message)
            stop = True
    return stop
