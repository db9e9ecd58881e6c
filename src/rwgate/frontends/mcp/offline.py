"""The search tools' records: Crossref's, read as the check reads them, or the local snapshot's
when Crossref cannot give them.

``rw_check_author``, ``rw_search``, ``rw_recent_retractions`` and ``rw_get_record`` ask Crossref
first. When it cannot answer (offline with nothing cached, or down), the snapshot answers in the
same shapes and ``sources`` says so (Crossref with its reason, the snapshot with its path and data
date); when neither can, the call is refused in one line naming both. A Retraction Watch record id
is the snapshot's alone to answer. A work neither holds is ``found: false`` only when a registry
said so (Crossref, or a snapshot of the whole export).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from rwgate.contract.doi import try_normalize
from rwgate.contract.evidence import crossref_date, crossref_notice, first_text
from rwgate.contract.models import Notice, SourceInfo
from rwgate.frontends.door import (
    TTL_WORK,
    CrossrefQuery,
    Snapshot,
    SnapshotError,
    SourceUnavailable,
    author_names,
)
from rwgate.frontends.door import snapshot_queries as queries
from rwgate.frontends.mcp import safety
from rwgate.frontends.mcp.models import NoticeRecord, Record, Update
from rwgate.frontends.mcp.safety import BadArgument, one_line
from rwgate.settings.config import Settings
from rwgate.settings.paths import default_snapshot_path

AUTHOR_SELECT = "DOI,title,author,container-title,issued,published,type,updated-by"
NOTICE_SELECT = "DOI,title,container-title,issued,published,type,update-to"
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


# --- Crossref records, as the check reads them (rwgate.contract.evidence.crossref_notice) -----


def _fold(text: str) -> str:
    """Case- and accent-insensitive form of a name part (``Müller`` == ``muller``)."""
    return queries.fold(text).strip(". ")


def _name_parts(name: str) -> tuple[str, str]:
    """(family, first initial) of ``Given Family`` or ``Family, Given``."""
    if "," in name:
        family, _, given = name.partition(",")
    else:
        *given_parts, family = name.split()
        given = " ".join(given_parts)
    return _fold(family), _fold(given)[:1]


def author_matches(name: str, authors: Any) -> bool:
    """Does the record list an author with this family name (and first initial, if given)?"""
    family, initial = _name_parts(name)
    for person in authors if isinstance(authors, list) else []:
        if person.get("family"):
            if _fold(str(person["family"])) != family:
                continue
            if not initial or _fold(str(person.get("given") or ""))[:1] in ("", initial):
                return True
        elif person.get("name") and _fold(str(person["name"])) == _fold(name):
            return True
    return False


def name_matches(name: str, full_name: str) -> bool:
    """Is ``full_name`` (``Given Family``, as a Retraction Watch row names an author) the
    searched ``name``: the same family name (its last words), and first initial if given?"""
    family, initial = _name_parts(name)
    tokens = _fold(full_name).split()
    wanted = family.split()
    if not wanted or tokens[-len(wanted) :] != wanted:
        return False
    given = tokens[: -len(wanted)]
    return not initial or not given or given[0][:1] == initial


def update_entry(entry: Mapping[str, Any]) -> Update:
    """One ``update-to``/``updated-by`` entry, its type and date read as the check reads them."""
    notice = crossref_notice(entry)  # read as the check reads it
    return Update(
        doi=notice.doi or entry.get("DOI"),
        type=notice.type,
        label=notice.label,
        source=entry.get("source"),
        date=notice.date,
        record_id=notice.record_id,
    )


def notice_record(item: Mapping[str, Any]) -> NoticeRecord:
    """A notice's own record: what it updates, and when (its newest update's date)."""
    updates = [update_entry(u) for u in item.get("update-to") or [] if isinstance(u, Mapping)]
    dates = [u.date for u in updates if u.date is not None]
    return NoticeRecord(
        notice_doi=str(item.get("DOI") or "").lower(),
        title=first_text(item.get("title")),
        journal=first_text(item.get("container-title")),
        date=max(dates) if dates else None,
        updates=updates,
    )


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


def record(held: queries.WorkRecord | None) -> Record | None:
    """A work as the snapshot holds it (:func:`queries.work_record`, :func:`queries.record_of`);
    None when it holds nothing about it."""
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


# --- rw_get_record -------------------------------------------------------------------------


def get_record(
    query: CrossrefQuery, settings: Settings, doi: str | None, record_id: str | None
) -> Record:
    """The record of ``doi`` or of Retraction Watch record ``record_id`` (exactly one)."""
    if (doi is None) == (record_id is None):
        raise BadArgument("give exactly one of doi or record_id")
    if record_id is not None:
        return _by_record_id(settings, record_id)
    canonical = try_normalize(safety.short_text(doi, "doi"))
    if canonical is None:
        raise BadArgument(f"doi: {doi!r} is not a DOI (e.g. 10.1038/nature12373)")
    try:
        item = query.work(canonical, TTL_WORK)
    except SourceUnavailable as exc:
        return _from_snapshot(settings, canonical, one_line(exc))
    if item is None:  # Crossref does not know it: the Retraction Watch rows may
        try:
            with opened(settings) as snap:
                held = record(queries.work_record(snap, canonical)) if snap is not None else None
                info = [snap.info()] if snap is not None and held is not None else []
        except SnapshotError:
            held, info = None, []
        sources = [crossref_source(settings, "does not know the DOI"), *info]
        return (held or Record(found=False, doi=canonical)).model_copy(update={"sources": sources})
    return _crossref_record(canonical, item, crossref_answered(settings))


def _by_record_id(settings: Settings, record_id: str) -> Record:
    given = safety.short_text(record_id, "record_id", 40) or ""
    digits = given.upper().removeprefix("RW#").removeprefix("RW:").strip()
    if not digits.isdigit() or int(digits) == 0:
        raise BadArgument(f"record_id: {record_id!r} is not a record id (e.g. 4036)")
    rid = str(int(digits))

    def ask(snap: Snapshot) -> Record | None:
        return _held_or_refused(snap, record(queries.record_of(snap, rid)), f"record {rid}", "")

    why = "Crossref has no Retraction Watch record ids"
    found, sources = answer(settings, why, ask)
    return (found or Record(found=False, doi=None)).model_copy(
        update={"sources": sources[1:]}  # the snapshot alone was asked
    )


def _from_snapshot(settings: Settings, doi: str, reason: str) -> Record:
    def ask(snap: Snapshot) -> Record | None:
        return _held_or_refused(snap, record(queries.work_record(snap, doi)), doi, reason)

    found, sources = answer(settings, reason, ask)
    return (found or Record(found=False, doi=doi)).model_copy(update={"sources": sources})


def _held_or_refused(snap: Snapshot, held: Record | None, what: str, reason: str) -> Record | None:
    """What the snapshot holds; not holding it is an answer only from a whole export."""
    if held is not None or snap.is_registry:
        return held
    day = snap.info().as_of
    when = f", data as of {day.date()}" if day else ""
    prefix = f"{reason}; " if reason else ""
    raise BadArgument(
        f"{prefix}the snapshot ({snap.path}{when}) holds no {what}, and holds no full Retraction"
        " Watch export to say it does not exist"
    )


def _crossref_record(doi: str, item: Mapping[str, Any], sources: list[SourceInfo]) -> Record:
    """A Crossref work record trimmed to what matters for integrity and citing."""
    issued = crossref_date(item.get("issued")) or crossref_date(item.get("published"))
    return Record(
        found=True,
        doi=doi,
        type=item.get("type"),
        title=first_text(item.get("title")),
        journal=first_text(item.get("container-title")),
        publisher=item.get("publisher"),
        year=issued.year if issued else None,
        authors=author_names(item.get("author")),
        url=item.get("URL"),
        updated_by=[update_entry(u) for u in item.get("updated-by") or []],
        update_to=[update_entry(u) for u in item.get("update-to") or []],
        sources=sources,
    )
