"""Entries without a DOI, matched offline by title against the registry's works.

A real bibliography leaves DOIs out (and 8.7 % of the Retraction Watch rows have none), so an
entry that would be ``no_doi`` is looked up by its normalised title
(:func:`rwgate.titles.title_key`) in every source that holds titles (the snapshot's title
index), without the network. A row of that title is the entry's work when
:func:`rwgate.identity.title_agrees` says so (the year within one, or the journal; both for a
short title); the entry is then judged as that work, by its DOI or PubMed id as every source
knows it (Crossref too, when online), and ``basis`` ends with ``title``. When several works of
the registry fit, the more severe verdict decides (fail closed). No fitting row: ``no_doi``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rwgate.identity import title_agrees, title_match_note
from rwgate.judge import Evidence, by_pmid, judge, more_severe
from rwgate.models import Reference
from rwgate.sources import Answers, OpenSources
from rwgate.sources.interface import IntegritySource
from rwgate.titles import TitleRow, title_key

BASIS = "title"
"""What ``basis`` names for a verdict reached through a title match."""


@dataclass
class _Work:
    """One registry work an entry's title fits: its identifiers, and the rows that name it."""

    source: IntegritySource
    doi: str | None
    pmid: str | None
    rows: list[TitleRow] = field(default_factory=list)


def _works(ref: Reference, held: list[tuple[IntegritySource, list[TitleRow]]]) -> list[_Work]:
    """The distinct works (by DOI, else PubMed id, else the source's id-less rows) of the rows
    under the entry's title that fit it."""
    works: dict[tuple[str, str], _Work] = {}
    for source, rows in held:
        for row in rows:
            if not title_agrees(ref, row):
                continue
            ident = ("doi", row.doi) if row.doi else ("pmid", row.pmid) if row.pmid else None
            key = ident or ("rows", source.name)
            work = works.setdefault(key, _Work(source, row.doi, None if row.doi else row.pmid))
            work.rows.append(row)
    return list(works.values())


def _candidates(
    refs: Sequence[Reference], evs: Sequence[Evidence], srcs: OpenSources
) -> dict[int, list[_Work]]:
    """For each entry still ``no_doi`` with a title: the registry works its title fits."""
    keys = {
        i: key
        for i, (ref, ev) in enumerate(zip(refs, evs, strict=True))
        if ev.status == "no_doi" and not ref.missing and (key := title_key(ref.title))
    }
    if not keys:
        return {}
    held: dict[str, list[tuple[IntegritySource, list[TitleRow]]]] = {}
    for source, rows in srcs.titles(sorted(set(keys.values()))):
        held.setdefault(rows[0].key, []).append((source, rows))
    found = {i: _works(refs[i], held.get(key, [])) for i, key in keys.items()}
    return {i: works for i, works in found.items() if works}


def _judged(work: _Work, said: Answers, offline: bool) -> Evidence:
    if work.doi:
        ev = judge(said.get(("doi", work.doi), []), offline)
        ev.doi = work.doi
        return ev
    if work.pmid:
        return by_pmid(work.pmid, said.get(("pmid", work.pmid), []), offline)
    lookup = work.source.title_lookup(work.rows)
    if lookup is None:
        return Evidence("unverified", reason=f"{work.source.title} cannot say more of this work")
    return judge([(work.source, lookup)], offline)


def match_titles(
    refs: Sequence[Reference], evs: list[Evidence], srcs: OpenSources, offline: bool
) -> None:
    """Replace, in ``evs``, the ``no_doi`` verdict of every entry whose title the registry
    holds for a fitting work with that work's verdict (module docstring)."""
    found = _candidates(refs, evs, srcs)
    if not found:
        return
    works = [w for ws in found.values() for w in ws]
    said = srcs.ask(
        {
            "doi": sorted({w.doi for w in works if w.doi}),
            "pmid": sorted({w.pmid for w in works if w.pmid}),
        }
    )
    for i, fitting in found.items():
        verdicts = [_judged(w, said, offline) for w in fitting]
        ev = verdicts[0]
        for other in verdicts[1:]:
            ev = more_severe(ev, other)
        work = fitting[verdicts.index(ev)]
        note = title_match_note(work.rows, ev.doi or work.doi)
        ev.reason = f"{note}; {ev.reason}" if ev.reason else note
        ev.basis = [*ev.basis, BASIS]
        evs[i] = ev
