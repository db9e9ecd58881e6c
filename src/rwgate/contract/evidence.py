"""Evidence rules: from upstream notices to one status per work.

Crossref's ``updated-by`` is what decides; ``update-to`` points the other way (from a notice to the
work it updates) and counts only where a record names its own DOI. The same notice often arrives
twice (Retraction Watch and the publisher both deposit it, or the CSV snapshot and Crossref both
list it), so notices are merged before they are counted.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from rwgate.contract.doi import try_normalize
from rwgate.contract.models import Citation, Lookup, Notice, Status
from rwgate.contract.vocab import FLAGGED_STATUSES

# Spellings seen upstream (Crossref, Retraction Watch, older tools) -> DESIGN.md types.
_ALIASES = {
    "withdrawn": "withdrawal",
    "retracted": "retraction",
    "removed": "removal",
    "reinstated": "reinstatement",
    "errata": "erratum",
    "retraction_and_replacement": "retract_and_replace",
}
_TYPE_STATUS: dict[str, Status] = {
    "retraction": "retracted",
    "withdrawal": "withdrawn",
    "removal": "removed",
    "partial_retraction": "partially_retracted",
    "retract_and_replace": "replaced",
    "expression_of_concern": "expression_of_concern",
    "correction": "corrected",
    "erratum": "corrected",
    "corrigendum": "corrected",
    "addendum": "amended",
    "clarification": "amended",
    "new_version": "amended",
    "new_edition": "amended",
}
# Most severe first (DESIGN.md's order); ``reinstated`` is no severity: it ends a history.
SEVERITY: tuple[Status, ...] = (
    *(s for s in FLAGGED_STATUSES if s != "reinstated"),
    "clean",
)
# Notices a reinstatement lifts. DESIGN.md names retraction, withdrawal and expression of concern;
# removal and partial retraction are the same kind of "do not rely on this" and are lifted too.
_LIFTABLE = {"retracted", "withdrawn", "removed", "partially_retracted", "expression_of_concern"}


def normalize_type(raw: str) -> str:
    """Lower-case snake case, known aliases folded; unknown types are kept (in that spelling)."""
    text = "_".join(raw.strip().lower().replace("-", " ").split())
    return _ALIASES.get(text, text)


def status_of_type(notice_type: str) -> Status | None:
    """The work status a notice type implies; ``None`` for reinstatement.

    A missing or unrecognised type (kept verbatim in the notice) is ``unknown_notice``: never
    silent (annotated by default, a failure under strict), since it may be a retraction spelt in
    a way rwgate does not know yet.
    """
    if notice_type == "reinstatement":
        return None
    return _TYPE_STATUS.get(notice_type, "unknown_notice")


def _severity(status: Status | None) -> int:
    return SEVERITY.index(status) if status in SEVERITY else len(SEVERITY)


def _same_notice(a: Notice, b: Notice) -> bool:
    if a.record_id and b.record_id:
        return a.record_id == b.record_id
    if a.doi and b.doi:
        return a.doi == b.doi and status_of_type(a.type) == status_of_type(b.type)
    return a.type == b.type and a.date == b.date


def _absorb(into: Notice, other: Notice) -> Notice:
    """One notice from two assertions: every source kept, the more severe type wins."""
    more_severe = _severity(status_of_type(other.type)) < _severity(status_of_type(into.type))
    return into.model_copy(
        update={
            "type": other.type if more_severe else into.type,
            "doi": into.doi or other.doi,
            "date": into.date or other.date,
            "source": list(dict.fromkeys([*into.source, *other.source])),
            "label": into.label or other.label,
            "record_id": into.record_id or other.record_id,
            "reasons": list(dict.fromkeys([*into.reasons, *other.reasons])),
        }
    )


def _date_key(notice: Notice) -> tuple[dt.date, bool, str]:
    # On the same day a reinstatement goes first: it lifts only what is dated strictly before
    # it, so a same-day (or year-only) retraction stays in force whatever its type is called.
    return (notice.date or dt.date.min, notice.type != "reinstatement", notice.type)


def merge_notices(notices: Iterable[Notice]) -> list[Notice]:
    """De-duplicate notices asserted by several sources and put them in date order."""
    merged: list[Notice] = []
    for notice in notices:
        for i, seen in enumerate(merged):
            if _same_notice(seen, notice):
                merged[i] = _absorb(seen, notice)
                break
        else:
            merged.append(notice)
    return sorted(merged, key=_date_key)


# Retraction Watch Reasons that end an expression of concern dated before the notice carrying them.
_LIFTS_CONCERN = ("upgrade/update of prior notice", "eoc lifted", "expression of concern lifted")
_CONCERN = ("expression_of_concern",)
_REPLACED = ("retracted", "expression_of_concern")  # what a retract-and-replace ends


def _before(notice: Notice, when: dt.date, statuses: Collection[str]) -> bool:
    return bool(status_of_type(notice.type) in statuses and notice.date and notice.date < when)


def status_from_notices(notices: list[Notice]) -> Status:
    """The most severe notice still in force; a reinstatement lifts the ones dated before it,
    and a notice whose Retraction Watch Reason lifts or upgrades an expression of concern ("EOC
    Lifted", "Upgrade/Update of Prior Notice(s)") ends the expressions of concern before it.

    A notice without a date cannot be shown to precede a reinstatement, so it stays in force,
    and a work with a retraction (or the like) still in force is never called ``reinstated``.
    """
    in_force: list[Notice] = []
    for notice in sorted(notices, key=_date_key):
        when = notice.date
        if when is not None:
            if any(r.lower().startswith(_LIFTS_CONCERN) for r in notice.reasons):
                in_force = [n for n in in_force if not _before(n, when, _CONCERN)]
            if notice.type == "retract_and_replace":
                # The retraction of a retract-and-replace is its first half: the work is replaced.
                in_force = [n for n in in_force if not _before(n, when, _REPLACED)]
            if notice.type == "reinstatement":
                in_force = [n for n in in_force if not _before(n, when, _LIFTABLE)]
        in_force.append(notice)
    statuses = [status_of_type(n.type) for n in in_force]
    worst: Status = min((s for s in statuses if s), key=_severity, default="clean")
    if in_force and in_force[-1].type == "reinstatement" and worst not in _LIFTABLE:
        return "reinstated"
    return worst


# --- Crossref records -------------------------------------------------------------------------


def crossref_date(value: Mapping[str, Any] | None) -> dt.date | None:
    """A Crossref date object (``date-parts``) as a date; missing month/day become 1."""
    if not value:
        return None
    parts = (value.get("date-parts") or [[None]])[0]
    if not parts or parts[0] is None:
        return None
    year, month, day = ([*list(parts), 1, 1])[:3]
    try:
        return dt.date(int(year), int(month or 1), int(day or 1))
    except (TypeError, ValueError):
        return None


def crossref_notice(entry: Mapping[str, Any]) -> Notice:
    """One ``updated-by``/``update-to`` entry of a Crossref record as a Notice (every reader of
    Crossref records uses this one, so they cannot read the same entry differently)."""
    return Notice(
        type=normalize_type(str(entry.get("type") or "unknown")),
        doi=try_normalize(entry.get("DOI")),
        date=crossref_date(entry.get("updated")),
        source=[f"crossref:{entry.get('source') or 'publisher'}"],
        label=entry.get("label"),
        record_id=str(entry["record-id"]) if entry.get("record-id") else None,
    )


def first_text(value: Any) -> str | None:
    """Crossref's one-element lists (``title``, ``container-title``) as their first string."""
    if isinstance(value, list):
        return str(value[0]) if value else None
    return str(value) if value else None


def crossref_year(message: Mapping[str, Any]) -> int | None:
    """The year of a Crossref record: ``issued``, else the first ``published*`` date."""
    for name in ("issued", "published", "published-print", "published-online"):
        when = crossref_date(message.get(name))
        if when is not None:
            return when.year
    return None


def lookup_from_crossref(message: Mapping[str, Any], source: str = "crossref") -> Lookup:
    """Read one Crossref work record (the ``message`` of ``/works/{doi}`` or a list item)."""
    own = try_normalize(message.get("DOI")) or ""
    notices = [crossref_notice(e) for e in message.get("updated-by") or []]
    notice_for: list[str] = []
    for entry in message.get("update-to") or []:
        target = try_normalize(entry.get("DOI"))
        if target == own:
            notices.append(crossref_notice(entry))
        elif target and target not in notice_for:
            notice_for.append(target)
    return Lookup(
        doi=own,
        outcome="found",
        source=source,
        notices=merge_notices(notices),
        title=first_text(message.get("title")),
        journal=first_text(message.get("container-title")),
        year=crossref_year(message),
        notice_for=notice_for,
    )


def deciding_notice(citation: Citation) -> Notice | None:
    """The newest notice whose type gives the work its status (a retracted work: its retraction)."""
    matching = [n for n in citation.notices if status_of_type(n.type) == citation.status]
    if citation.status == "reinstated":
        matching = [n for n in citation.notices if n.type == "reinstatement"]
    return matching[-1] if matching else None
