"""Entries without a DOI, matched offline by title against the registry's works.

A real bibliography leaves DOIs out (and 8.7 % of the Retraction Watch rows have none), so an
entry without one is looked up by its normalised title (:func:`rwgate.titles.title_key`) in every
source that holds titles, without the network; a row of that title is the entry's work when
:func:`rwgate.identify.same.title_agrees` says so. The works found are asked about with the
chunk's own identifiers, and an entry its own identifiers leave ``no_doi`` is judged as those
works (:func:`rwgate.verdicts.judge.by_title`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rwgate.contract.models import Reference
from rwgate.identify.same import title_agrees
from rwgate.sources import OpenSources
from rwgate.sources.interface import IntegritySource
from rwgate.titles import TitleRow, title_key


@dataclass
class TitleWork:
    """One registry work an entry's title fits: its identifiers, and the rows that name it."""

    source: IntegritySource
    doi: str | None
    pmid: str | None
    rows: list[TitleRow] = field(default_factory=list)


def _works(ref: Reference, held: list[tuple[IntegritySource, list[TitleRow]]]) -> list[TitleWork]:
    """The distinct works (by DOI, else PubMed id, else the source's id-less rows) of the rows
    under the entry's title that fit it."""
    works: dict[tuple[str, str], TitleWork] = {}
    for source, rows in held:
        for row in rows:
            if not title_agrees(ref, row):
                continue
            ident = ("doi", row.doi) if row.doi else ("pmid", row.pmid) if row.pmid else None
            key = ident or ("rows", source.name)
            work = works.setdefault(key, TitleWork(source, row.doi, None if row.doi else row.pmid))
            work.rows.append(row)
    return list(works.values())


def title_works(refs: Sequence[Reference], srcs: OpenSources) -> dict[int, list[TitleWork]]:
    """For each entry (by position) without a DOI and with a title: the registry works its title
    fits (one indexed query per source for the whole chunk)."""
    keys = {
        i: key
        for i, ref in enumerate(refs)
        if ref.doi is None and ref.raw_doi is None and not ref.missing
        if (key := title_key(ref.title))
    }
    if not keys:
        return {}
    held: dict[str, list[tuple[IntegritySource, list[TitleRow]]]] = {}
    for source, rows in srcs.titles(sorted(set(keys.values()))):
        held.setdefault(rows[0].key, []).append((source, rows))
    found = {i: _works(refs[i], held.get(key, [])) for i, key in keys.items()}
    return {i: works for i, works in found.items() if works}
