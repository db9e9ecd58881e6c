"""The search tools' answers from the local snapshot, when Crossref cannot give them.

``rw_check_author``, ``rw_search``, ``rw_recent_retractions`` and ``rw_get_record`` ask Crossref
first (its answer covers every registered work). When Crossref cannot answer (offline with
nothing cached, or down), the snapshot answers what it holds, in the same shapes, and the answer's
``sources`` says so: Crossref with the reason it did not answer, the snapshot with its path and
the date of its data. Only when neither can answer is the call refused, in one line naming both
reasons. A Retraction Watch record id is the snapshot's alone to answer.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from rwgate.contract.models import Notice, SourceInfo
from rwgate.frontends.door import Snapshot, SnapshotError
from rwgate.frontends.door import snapshot_queries as queries
from rwgate.frontends.mcp.models import NoticeRecord, Record, Update
from rwgate.frontends.mcp.records import name_matches
from rwgate.frontends.mcp.safety import BadArgument
from rwgate.settings.config import Settings
from rwgate.settings.paths import default_snapshot_path

T = TypeVar("T")
_NO_SNAPSHOT = (
    "no snapshot to answer from at {path} (`rwgate data import --sample`, `rwgate data update`)"
)


def crossref_source(settings: Settings, note: str) -> SourceInfo:
    return SourceInfo(name="crossref", url=settings.crossref_url, note=note)


def crossref_answered(settings: Settings) -> list[SourceInfo]:
    """``sources`` of an answer Crossref gave (live, or from the cache within its TTL)."""
    return [crossref_source(settings, "answered (live, or from the cache)")]


@contextmanager
def opened(settings: Settings) -> Iterator[Snapshot | None]:
    """The snapshot the server was started with (never a document's), or None when absent."""
    path = Path(settings.snapshot or default_snapshot_path())
    if not path.is_file():
        yield None
        return
    snap = Snapshot(path, settings.max_snapshot_age_days)
    try:
        yield snap
    finally:
        snap.close()


def answer(
    settings: Settings, reason: str, ask: Callable[[Snapshot], T | None]
) -> tuple[T | None, list[SourceInfo]]:
    """``ask(snapshot)`` with the ``sources`` saying why Crossref did not answer and how old the
    snapshot's data is; a one-line refusal when there is no snapshot to ask either."""
    path = Path(settings.snapshot or default_snapshot_path())
    try:
        with opened(settings) as snap:
            if snap is None:
                raise BadArgument(f"{reason}, and {_NO_SNAPSHOT.format(path=path)}")
            found = ask(snap)
            info = snap.info()
    except SnapshotError as exc:
        raise BadArgument(f"{reason}; {exc}") from None
    note = f"not answered: {reason}" if reason else "not asked"
    return found, [crossref_source(settings, note), info]


# --- the four questions ---------------------------------------------------------------------


def authored_works(
    snap: Snapshot, name: str, limit: int, year_min: int | None, year_max: int | None
) -> tuple[list[queries.AuthoredWork], list[str]]:
    """Works of the snapshot one of whose authors is ``name``; warnings (a snapshot that kept no
    author names)."""
    if not snap.has_authors:
        return [], [
            f"the snapshot (schema {snap.schema_version}) keeps no author names: only Crossref was"
            " searched by name; `rwgate data update` (or importing again) adds them"
        ]
    found = queries.works_by_author(snap, lambda n: name_matches(name, n), year_min, year_max)
    return found[:limit], []


def notices(
    snap: Snapshot, wanted: queries.NoticeFilter, limit: int
) -> tuple[int, list[NoticeRecord]]:
    """The snapshot's notices that match, the best matches (or the newest) first."""
    found = queries.find_notices(snap, wanted)
    return len(found), [_notice_record(n) for n in found[:limit]]


def words(text: str | None) -> list[str]:
    """A query's words, as the snapshot's title search weighs them (two letters or more)."""
    folded = queries.fold(text or "").replace("-", " ")
    return [w for w in (w.strip(".,;:!?()[]'\"") for w in folded.split()) if len(w) > 1]


def since_date(text: str | None) -> dt.date | None:
    """``posted_since`` (YYYY, YYYY-MM or YYYY-MM-DD, checked already) as its first day."""
    if not text:
        return None
    parts = [int(p) for p in text.split("-")] + [1, 1]
    return dt.date(parts[0], parts[1], parts[2])


def record(snap: Snapshot, doi: str | None, record_id: str | None) -> Record | None:
    """The work ``doi`` (or the work of Retraction Watch record ``record_id``) as the snapshot
    holds it; None when it holds nothing about it."""
    if record_id is not None:
        held = queries.record_of(snap, record_id)
    else:
        held = queries.work_record(snap, doi or "")
    if held is None:
        return None
    lookup = held.lookup
    return Record(
        found=True,
        doi=lookup.doi or None,
        title=lookup.title,
        journal=lookup.journal,
        year=lookup.year,
        authors=held.authors,
        url=f"https://doi.org/{lookup.doi}" if lookup.doi else None,
        updated_by=[_update(n) for n in lookup.notices],
        update_to=[_update(u) for u in held.notice_of],
    )


def _update(link: Notice | queries.NoticeUpdate) -> Update:
    """One update link as the tools answer it: a work's notice (its ``doi`` is the notice's) or
    a notice's work (``work_doi``); the sources that state it, merged into one string."""
    if isinstance(link, Notice):
        doi, sources = link.doi, link.source
    else:
        doi, sources = link.work_doi, link.sources
    return Update(
        doi=doi,
        type=link.type,
        label=link.label,
        source=";".join(sources),
        date=link.date,
        record_id=link.record_id,
    )


def _notice_record(found: queries.FoundNotice) -> NoticeRecord:
    return NoticeRecord(
        notice_doi=found.notice_doi,
        title=found.title,
        journal=found.journal,
        date=found.date,
        updates=[_update(u) for u in found.updates],
    )
