"""Crossref work records as the MCP tools answer with them: author names and the match of a
searched author, and a notice's ``update-to``/``updated-by`` entries read as the check reads them
(:func:`rwgate.contract.evidence.crossref_notice`), so a tool never says otherwise than ``rwgate
check``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rwgate.contract.evidence import crossref_notice, first_text
from rwgate.frontends.door import snapshot_queries
from rwgate.frontends.mcp.models import NoticeRecord, Update

AUTHOR_SELECT = "DOI,title,author,container-title,issued,published,type,updated-by"
NOTICE_SELECT = "DOI,title,container-title,issued,published,type,update-to"


def _fold(text: str) -> str:
    """Case- and accent-insensitive form of a name part (``Müller`` == ``muller``)."""
    return snapshot_queries.fold(text).strip(". ")


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
