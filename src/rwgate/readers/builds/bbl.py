"""A ``.bbl`` as a bibliography: the works a built document prints, read from the file LaTeX reads.

An arXiv-style bundle ships the ``.tex`` with its ``.bbl`` and no ``.bib``: then the ``.bbl`` is the
only record of what is cited. Its entries are ``\\bibitem[label]{KEY}`` blocks of a
``thebibliography`` or biblatex's ``\\entry{KEY}...\\endentry``; each DOI the entry prints is
judged, and an entry without one carries its printed title, year and journal for the title match
(:mod:`.bblentry`). A ``.tex`` with its own ``thebibliography`` is read the same way
(:func:`parse_embedded`). The scanner (:mod:`.bblscan`) is shared with the annotator
(:mod:`rwgate.frontends.latex.bbl`): what is read and what is annotated are found the same way.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from rwgate.contract.models import BibResult, Location, Reference
from rwgate.readers.builds.bblentry import read_entry
from rwgate.readers.builds.bblscan import END_BIB, bibitem_key, bibitems
from rwgate.readers.builds.texscan import THEBIBLIOGRAPHY, strip_comments

_ENTRY = re.compile(r"^\s*\\entry\{([^{}]*)\}", re.M)


def _reference(entry: Entry, where: Location) -> Reference:
    """One entry: the first DOI it prints, the others as its readings (each judged, DESIGN.md
    rule 1); without a DOI, a raw value that is none, and the printed title, year and journal."""
    said, key = read_entry(entry.block, entry.biblatex, entry.label), entry.key
    if not said.dois:
        return Reference(
            key=key,
            raw_doi=said.raw_doi,
            title=said.title,
            year=said.year,
            journal=said.journal,
            location=where,
        )
    others = [
        Reference(key=key, doi=doi, doi_origin="bbl", location=where) for doi in said.dois[1:]
    ]
    return Reference(key=key, doi=said.dois[0], doi_origin="bbl", location=where, readings=others)


@dataclass(frozen=True)
class Entry:
    """One entry of a ``.bbl``: its key, its text after the key, its ``\\bibitem[label]``,
    whether it is biber's, and where it starts."""

    key: str
    block: str
    label: str
    biblatex: bool
    pos: int


def entries(text: str) -> Iterator[Entry]:
    """The entries of a ``.bbl`` (thebibliography or biblatex), in the order LaTeX prints them."""
    items = bibitems(text)
    if items:
        end = END_BIB.search(text, items[-1].end())
        limit = end.start() if end else len(text)
        for index, match in enumerate(items):
            stop = items[index + 1].start() if index + 1 < len(items) else limit
            parsed = bibitem_key(text, match.end())
            if parsed is not None:
                key, body = parsed
                head = text[match.end() : body]
                yield Entry(key, text[body:stop], head[: head.rfind("{")], False, match.start())
        return
    found = list(_ENTRY.finditer(text))
    for index, match in enumerate(found):
        stop = found[index + 1].start() if index + 1 < len(found) else len(text)
        yield Entry(match.group(1), text[match.end() : stop], "", True, match.start())


def parse_bbl(text: str, file: str) -> BibResult:
    """A ``.bbl`` as a bibliography: each of its :func:`entries` a reference, at its line."""
    starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]
    result = BibResult()
    for entry in entries(text):
        where = Location(file=file, line=bisect.bisect_right(starts, entry.pos))
        result.references.append(_reference(entry, where))
    return result


def parse_embedded(text: str, file: str) -> BibResult:
    """The entries of the ``thebibliography`` environments of a ``.tex`` file, read as a ``.bbl``
    (comments and everything else blanked, lines kept for locations)."""
    text = strip_comments(text)
    kept: list[str] = []
    pos = 0
    for begin in THEBIBLIOGRAPHY.finditer(text):
        if begin.start() < pos:
            continue  # inside the environment just kept
        end = END_BIB.search(text, begin.end())
        stop = end.end() if end else len(text)
        kept += ["\n" * text.count("\n", pos, begin.start()), text[begin.start() : stop]]
        pos = stop
    return parse_bbl("".join(kept), file)
