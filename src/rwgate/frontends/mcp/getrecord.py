"""``rw_get_record``: a work's (or a notice's) record, from Crossref or from the snapshot.

Crossref's record when it can answer; the snapshot's when Crossref cannot (offline, down) or does
not know the DOI (a work only the Retraction Watch rows list), and for a Retraction Watch record
id, which only the snapshot has. ``sources`` says which answered and how old its data is. A work
neither holds is ``found: false`` only when a registry said so (Crossref, or a snapshot of the
whole export); otherwise the call fails in one line saying why neither could answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rwgate.contract.doi import try_normalize
from rwgate.contract.evidence import crossref_date, first_text
from rwgate.contract.models import SourceInfo
from rwgate.frontends.door import (
    TTL_WORK,
    CrossrefQuery,
    Snapshot,
    SnapshotError,
    SourceUnavailable,
)
from rwgate.frontends.mcp import offline, safety
from rwgate.frontends.mcp.models import Record
from rwgate.frontends.mcp.records import author_names, update_entry
from rwgate.frontends.mcp.safety import BadArgument, one_line
from rwgate.settings.config import Settings


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
            with offline.opened(settings) as snap:
                held = offline.record(snap, canonical, None) if snap is not None else None
                info = [snap.info()] if snap is not None and held is not None else []
        except SnapshotError:
            held, info = None, []
        note = "does not know the DOI"
        sources = [offline.crossref_source(settings, note), *info]
        return (held or Record(found=False, doi=canonical)).model_copy(update={"sources": sources})
    return _crossref_record(canonical, item, offline.crossref_answered(settings))


def _by_record_id(settings: Settings, record_id: str) -> Record:
    given = safety.short_text(record_id, "record_id", 40) or ""
    digits = given.upper().removeprefix("RW#").removeprefix("RW:").strip()
    if not digits.isdigit() or int(digits) == 0:
        raise BadArgument(f"record_id: {record_id!r} is not a record id (e.g. 4036)")
    rid = str(int(digits))

    def ask(snap: Snapshot) -> Record | None:
        return _held_or_refused(snap, offline.record(snap, None, rid), f"record {rid}", "")

    why = "Crossref has no Retraction Watch record ids"
    found, sources = offline.answer(settings, why, ask)
    return (found or Record(found=False, doi=None)).model_copy(
        update={"sources": sources[1:]}  # the snapshot alone was asked
    )


def _from_snapshot(settings: Settings, doi: str, reason: str) -> Record:
    def ask(snap: Snapshot) -> Record | None:
        return _held_or_refused(snap, offline.record(snap, doi, None), doi, reason)

    found, sources = offline.answer(settings, reason, ask)
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
