"""Retraction Watch CSV files as snapshot input: their rows as notices, and the rule that says
whether a file is the whole export (which replaces every Retraction Watch row) or an extract.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from rwgate.contract.models import Problem
from rwgate.errors import DataError
from rwgate.sources.snapshot import rwcsv

_INSERT_NOTICE = (
    "INSERT OR REPLACE INTO notices (key, work_doi, work_pmid, type, label, notice_doi, date,"
    " source, record_id, reasons, title, journal, year, provenance_id, notice_pmid, authors)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_BATCH = 2000


class FileFailed(DataError):
    """An input file could not be read; caught per file so the other files still import."""


FULL_EXPORT_FLOOR = 30_000
"""Rows a first full Retraction Watch export has at least (the 2026-05-07 export: 70,061)."""
SHRINK_FLOOR = 0.95
"""A later full export has at least this share of the previous full export's rows."""
EXPORT_KIND = "retraction-watch-export"
"""Provenance kind of a whole export: only it makes the snapshot the registry of record."""


def import_export(
    conn: sqlite3.Connection,
    path: Path,
    name: str,
    prov_id: int,
    today: dt.date,
    allow_shrink: bool = False,
    require_full: bool = False,
) -> tuple[str, int, list[Problem], dt.date | None]:
    """Import a Retraction Watch CSV as provenance ``prov_id``: its kind (whole export or
    extract), rows, skipped rows and newest notice date. A whole export replaces every earlier
    Retraction Watch row; with ``require_full`` an extract raises :class:`FileFailed`."""
    kind = rwcsv.SOURCE_NAME
    rows, skipped, newest = _import_csv(conn, path, prov_id, today)
    full = rwcsv.has_export_header(path) and _is_full_export(conn, rows, skipped, allow_shrink)
    if require_full and not full:
        raise FileFailed(
            f"{name}: not a whole Retraction Watch export ({rows} rows,"
            f" {len(skipped)} unreadable); refused, the snapshot is unchanged"
        )
    if full:
        kind = EXPORT_KIND
        # The export is the whole database: rows it no longer has were deleted upstream.
        conn.execute(
            "DELETE FROM notices WHERE source = ? AND provenance_id != ?",
            (rwcsv.SOURCE_NAME, prov_id),
        )
        conn.execute("UPDATE provenance SET kind = ? WHERE id = ?", (kind, prov_id))
    return kind, rows, skipped, newest


def _is_full_export(
    conn: sqlite3.Connection, rows: int, skipped: list[Problem], allow_shrink: bool
) -> bool:
    """Whole, by the rules of :func:`rwgate.sources.snapshot.store.import_files`: every row
    read, enough rows."""
    if skipped or rows == 0:
        return False
    if allow_shrink:
        return True
    previous = conn.execute(
        "SELECT rows FROM provenance WHERE kind = ? ORDER BY id DESC LIMIT 1", (EXPORT_KIND,)
    ).fetchone()
    floor = FULL_EXPORT_FLOOR if previous is None else SHRINK_FLOOR * int(previous[0])
    return rows >= floor


def _csv_params(
    rows: Iterator[rwcsv.RowResult],
    prov_id: int,
    skipped: list[Problem],
    newest: list[dt.date],
    today: dt.date,
) -> Iterator[tuple[object, ...]]:
    """Rows as INSERT parameters; problems and the newest date are collected on the side (a
    date in the future, a typo such as 1/1/2099, never makes the data look fresh)."""
    for row in rows:
        if isinstance(row, Problem):
            skipped.append(row)
            continue
        day = row.notice_date
        if day and day <= today and (not newest or day > newest[0]):
            newest[:] = [day]
        yield (
            f"rw:{row.record_id}",
            row.doi,
            row.pmid,
            row.notice_type,
            row.nature,
            row.notice_doi,
            row.notice_date.isoformat() if row.notice_date else None,
            rwcsv.SOURCE_NAME,
            row.record_id,
            ";".join(row.reasons),
            row.title,
            row.journal,
            row.year,
            prov_id,
            row.notice_pmid,
            ";".join(row.authors) or None,
        )


def _import_csv(
    conn: sqlite3.Connection, path: Path, prov_id: int, today: dt.date
) -> tuple[int, list[Problem], dt.date | None]:
    skipped: list[Problem] = []
    newest: list[dt.date] = []
    params = _csv_params(rwcsv.iter_rows(path), prov_id, skipped, newest, today)
    count = 0
    while batch := list(islice(params, _BATCH)):
        conn.executemany(_INSERT_NOTICE, batch)
        count += len(batch)
    if count == 0 and not skipped:
        raise FileFailed(f"{path}: no Retraction Watch rows in the file")
    return count, skipped, newest[0] if newest else None
