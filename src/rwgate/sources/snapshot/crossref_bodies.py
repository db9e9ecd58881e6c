"""Recorded Crossref ``/works`` bodies as snapshot input.

A recorded Crossref record adds what the CSV alone cannot: the registry's own ``updated-by``
(publisher-deposited notices Retraction Watch has not catalogued) and the fact that a clean record
exists. It is read as the live Crossref source reads one
(:func:`rwgate.contract.evidence.lookup_from_crossref`): the same evidence rules and source names.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from rwgate.contract.evidence import crossref_date, lookup_from_crossref
from rwgate.contract.models import Location, Lookup, Problem
from rwgate.errors import DataError

KIND = "crossref-json"


class JSONFormatError(DataError):
    """The file is not a Crossref ``/works`` response; the message names the file."""


def _records(path: Path, body: Any) -> Iterator[Any]:
    """Work records inside a single-record body, a work-list body, a bare record or a list."""
    for item in body if isinstance(body, list) else [body]:
        if not isinstance(item, Mapping):
            raise JSONFormatError(
                f"{path}: not a Crossref /works response (a JSON {type(item).__name__})"
            )
        kind = item.get("message-type")
        message = item.get("message")
        if kind == "work" and isinstance(message, Mapping):
            yield message
        elif kind == "work-list" and isinstance(message, Mapping):
            items = message.get("items") or []
            if not isinstance(items, list):
                raise JSONFormatError(
                    f"{path}: not a Crossref /works response (items is not a list)"
                )
            yield from items
        elif kind is None and "DOI" in item:
            yield item
        else:
            raise JSONFormatError(f"{path}: not a Crossref /works response (message-type {kind!r})")


def _load(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8-sig") as handle:
            return json.load(handle)
    except UnicodeDecodeError:
        raise JSONFormatError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise JSONFormatError(f"{path}: line {exc.lineno}: invalid JSON ({exc.msg})") from None
    except RecursionError:
        raise JSONFormatError(f"{path}: JSON nested too deeply") from None


def author_names(authors: Any) -> list[str]:
    """A record's ``author`` list as ``Given Family`` (or an organisation's name), in its order:
    how the MCP tools name authors, and how the snapshot keeps them for its author search."""
    names = []
    for person in authors if isinstance(authors, list) else []:
        if not isinstance(person, Mapping):
            continue
        if person.get("family"):
            given = person.get("given")
            names.append(f"{given} {person['family']}" if given else str(person["family"]))
        elif person.get("name"):
            names.append(str(person["name"]))
    return names


def _store(conn: sqlite3.Connection, lookup: Lookup, authors: str | None, prov_id: int) -> None:
    """One record: its metadata in ``works``, its notices replacing those of an older record."""
    conn.execute(
        "INSERT OR REPLACE INTO works (doi, title, journal, year, notice_for, provenance_id,"
        " authors) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            lookup.doi,
            lookup.title,
            lookup.journal,
            lookup.year,
            json.dumps(lookup.notice_for),
            prov_id,
            authors,
        ),
    )
    conn.execute("DELETE FROM notices WHERE work_doi = ? AND key LIKE 'cr:%'", (lookup.doi,))
    for notice in lookup.notices:
        sources = ";".join(notice.source)
        conn.execute(
            "INSERT OR REPLACE INTO notices (key, work_doi, work_pmid, type, label, notice_doi,"
            " date, source, record_id, reasons, title, journal, year, provenance_id, authors)"
            " VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                f"cr:{lookup.doi}|{notice.doi or ''}|{notice.type}|{sources}",
                lookup.doi,
                notice.type,
                notice.label,
                notice.doi,
                notice.date.isoformat() if notice.date else None,
                sources,
                notice.record_id,
                ";".join(notice.reasons),
                lookup.title,
                lookup.journal,
                lookup.year,
                prov_id,
                authors,
            ),
        )


def import_json(
    conn: sqlite3.Connection, path: Path, prov_id: int
) -> tuple[int, list[Problem], dt.date | None]:
    """Store every record of the file; a newer record replaces the notices an older one gave.

    The date returned is when Crossref last indexed the newest record (how fresh the recording
    is), else the newest notice date.
    """
    skipped: list[Problem] = []
    dates: list[dt.date] = []
    indexed: list[dt.date] = []
    count = 0
    for index, message in enumerate(_records(path, _load(path)), start=1):
        lookup: Lookup | None = None
        when: dt.date | None = None
        reason = f"record {index} has no usable DOI; skipped"
        try:
            if isinstance(message, Mapping):
                lookup, when = lookup_from_crossref(message), crossref_date(message.get("indexed"))
        except (AttributeError, TypeError, ValueError) as exc:
            # A field of the wrong JSON type (a number for a DOI, a string for a list): the
            # record is malformed, not the file.
            reason = f"record {index}: malformed Crossref work ({exc}); skipped"
        if lookup is None or not lookup.doi:
            skipped.append(Problem(message=reason, location=Location(file=str(path))))
            continue
        names = ";".join(n.replace(";", ",") for n in author_names(message.get("author")))
        _store(conn, lookup, names or None, prov_id)
        dates += [n.date for n in lookup.notices if n.date]
        indexed += [when] if when else []
        count += 1
    return count, skipped, max(indexed, default=None) or max(dates, default=None)
