"""Questions the MCP tools ask the snapshot when Crossref cannot answer them (offline, or down):
works by author name, notices by words, journal, years, type and date, and one work's or one
Retraction Watch record's data.

A row is read as the look-ups read it (:func:`rwgate.sources.snapshot.rows.notice`), so a notice
found here is the notice a check shows. Nothing here judges a work: the tools judge what these
find through the core.
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rwgate.contract.evidence import normalize_type
from rwgate.contract.models import Lookup
from rwgate.sources.snapshot import rows as snapshot_rows
from rwgate.sources.snapshot.rows import NOTICE_COLUMNS, iso_date

if TYPE_CHECKING:
    from rwgate.sources.snapshot.source import Snapshot

_UPDATE_COLUMNS = "n.work_doi, n.type, n.label, n.source, n.date, n.record_id, n.title"


def fold(text: str) -> str:
    """Case- and accent-insensitive form (``Müller`` == ``muller``), for names and words."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def _names(text: str | None) -> list[str]:
    return [n.strip() for n in (text or "").split(";") if n.strip()]


@dataclass
class AuthoredWork:
    """A work the snapshot holds with its author names (from a Retraction Watch row or a
    recorded Crossref record)."""

    doi: str
    authors: list[str]
    title: str | None = None
    year: int | None = None


def works_by_author(
    snap: Snapshot,
    matches: Callable[[str], bool],
    year_min: int | None = None,
    year_max: int | None = None,
) -> list[AuthoredWork]:
    """Works (by DOI) of which one author name satisfies ``matches``, newest first.

    The family name decides, so every name is tested here (folded for accents) rather than
    with SQL ``LIKE``, which folds ASCII only: ``Muller`` must find ``Müller``.
    """
    bounds = "".join(
        [" AND year >= :lo" if year_min else "", " AND year <= :hi" if year_max else ""]
    )
    params = {"lo": year_min, "hi": year_max}
    sql = (
        "SELECT work_doi, authors, title, year FROM notices WHERE work_doi IS NOT NULL"
        f" AND authors IS NOT NULL{bounds}"
        f" UNION ALL SELECT doi, authors, title, year FROM works WHERE authors IS NOT NULL{bounds}"
    )
    found: dict[str, AuthoredWork] = {}
    for doi, authors, title, year in snap.read(sql, params):
        if doi in found:
            continue
        names = _names(authors)
        if any(matches(n) for n in names):
            found[doi] = AuthoredWork(doi, names, title, year)
    return sorted(found.values(), key=lambda w: (-(w.year or 0), w.doi))


@dataclass
class NoticeUpdate:
    """One work a notice is about, as the snapshot's rows say (sources merged)."""

    work_doi: str | None
    type: str
    label: str | None
    sources: list[str]
    date: dt.date | None
    record_id: str | None
    title: str | None


def _update(row: Sequence[Any]) -> NoticeUpdate:
    """A notice row read as :data:`_UPDATE_COLUMNS`."""
    work, kind, label, source, date, record_id, title = row
    return NoticeUpdate(work, kind, label, source.split(";"), iso_date(date), record_id, title)


@dataclass
class FoundNotice:
    """A notice (by its DOI, else by its Retraction Watch record) and the works it updates."""

    notice_doi: str | None
    title: str | None
    journal: str | None
    date: dt.date | None
    updates: list[NoticeUpdate] = field(default_factory=list)
    score: int = 0


@dataclass(frozen=True)
class NoticeFilter:
    """What ``rw_search``/``rw_recent_retractions`` ask, in the snapshot's terms."""

    words: Sequence[str] = ()
    journal: str | None = None
    year_min: int | None = None
    year_max: int | None = None
    types: Sequence[str] = ()
    since: dt.date | None = None


def find_notices(snap: Snapshot, wanted: NoticeFilter) -> list[FoundNotice]:
    """Every notice that passes ``wanted``; with words, the ones whose text (the work's title,
    the notice's own recorded title, the journal) holds the most of them first; then newest
    first by notice date."""
    clauses, params = _notice_clauses(wanted)
    rows = snap.read(
        f"SELECT n.notice_doi, n.journal, w.title, {_UPDATE_COLUMNS} FROM notices n"
        f" LEFT JOIN works w ON w.doi = n.notice_doi WHERE {' AND '.join(clauses)}"
        " ORDER BY n.date DESC, n.rowid",
        params,
    )
    journal = fold(wanted.journal).strip() if wanted.journal else None
    words = [fold(w) for w in wanted.words]
    found: dict[str, FoundNotice] = {}
    for row in rows:
        notice_doi, venue, own = row[:3]
        if journal is not None and fold(venue or "") != journal:
            continue
        update = _update(row[3:])
        key = notice_doi or f"rw:{update.record_id}"
        item = found.get(key)
        if item is None:
            item = found[key] = FoundNotice(notice_doi, own, venue, update.date)
        _add_update(item, update)
    if words:
        for item in found.values():
            item.score = _score(words, item)
        kept = [n for n in found.values() if n.score]
        return sorted(kept, key=lambda n: -n.score)  # stable: newest first within a score
    return list(found.values())


def _notice_clauses(wanted: NoticeFilter) -> tuple[list[str], dict[str, Any]]:
    clauses = ["1 = 1"]
    params: dict[str, Any] = {}
    if wanted.year_min:
        clauses.append("n.date >= :lo")
        params["lo"] = f"{wanted.year_min:04d}-01-01"
    if wanted.year_max:
        clauses.append("n.date < :hi")
        params["hi"] = f"{wanted.year_max + 1:04d}-01-01"
    if wanted.since:
        clauses.append("n.date >= :since")
        params["since"] = wanted.since.isoformat()
    types = sorted({normalize_type(t) for t in wanted.types})
    if types:
        names = [f":t{i}" for i in range(len(types))]
        clauses.append(f"n.type IN ({', '.join(names)})")
        params.update({f"t{i}": t for i, t in enumerate(types)})
    return clauses, params


def _add_update(item: FoundNotice, update: NoticeUpdate) -> None:
    """One more row of a notice: the same update from another source is merged into it."""
    for known in item.updates:
        if (known.work_doi, known.type, known.date) == (update.work_doi, update.type, update.date):
            known.sources += [s for s in update.sources if s not in known.sources]
            known.record_id = known.record_id or update.record_id
            known.title = known.title or update.title
            return
    item.updates.append(update)
    if update.date and (item.date is None or update.date > item.date):
        item.date = update.date


def _score(words: Iterable[str], item: FoundNotice) -> int:
    """How many of the query's words the notice's text holds (whole words, folded)."""
    texts = [item.title, item.journal, *(u.title for u in item.updates)]
    held = set(fold(" ".join(t for t in texts if t)).replace("-", " ").split())
    held |= {w.strip(".,;:!?()[]'\"") for w in held}
    return sum(1 for w in dict.fromkeys(words) if w in held)


@dataclass
class WorkRecord:
    """What the snapshot holds of one work: the look-up a check makes (notices, title,
    journal, year, works it is a notice for), its authors, and the notices it itself is."""

    lookup: Lookup
    authors: list[str]
    notice_of: list[NoticeUpdate]


def work_record(snap: Snapshot, doi: str) -> WorkRecord | None:
    """The work ``doi`` as the snapshot holds it; ``None`` when it holds nothing about it."""
    lookup = snap.query(doi)
    if lookup.outcome != "found":
        return None
    key = lookup.doi or doi
    authors = snap.read(
        "SELECT authors FROM works WHERE doi = :doi AND authors IS NOT NULL UNION ALL"
        " SELECT authors FROM notices WHERE work_doi = :doi AND authors IS NOT NULL LIMIT 1",
        {"doi": key},
    )
    return WorkRecord(lookup, _names(authors[0][0]) if authors else [], find_notices_of(snap, key))


def find_notices_of(snap: Snapshot, notice_doi: str) -> list[NoticeUpdate]:
    """The works ``notice_doi`` is a notice for (its ``update-to``), sources merged."""
    holder = FoundNotice(notice_doi, None, None, None)
    for row in snap.read(
        f"SELECT {_UPDATE_COLUMNS} FROM notices n WHERE n.notice_doi = :doi"
        " AND n.work_doi IS NOT NULL AND n.work_doi != :doi ORDER BY n.date, n.rowid",
        {"doi": notice_doi},
    ):
        _add_update(holder, _update(row))
    return holder.updates


def record_of(snap: Snapshot, record_id: str) -> WorkRecord | None:
    """The work a Retraction Watch record is about, as :func:`work_record` gives it (a work
    without a DOI: that record's row alone); ``None`` when the snapshot has no such record."""
    rows = snap.read(
        f"SELECT n.work_doi, n.authors, {NOTICE_COLUMNS} FROM notices n WHERE n.record_id = :id"
        " ORDER BY n.key LIKE 'rw:%' DESC",
        {"id": record_id},
    )
    if not rows:
        return None
    doi, authors = rows[0][:2]
    if doi:
        return work_record(snap, doi)
    info = snap.info()
    lookup = snapshot_rows.lookup("", [rows[0][2:]], None, None, snap.name, info.as_of)
    return WorkRecord(lookup, _names(authors), [])
