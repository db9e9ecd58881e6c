"""What ``rwgate data status`` (and the MCP ``rw_data_status`` tool) report about a snapshot:
its size, freshness and the provenance of every file imported into it (kept apart from
:class:`~rwgate.sources.snapshot.source.Snapshot`'s look-ups, which never need these models).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

from pydantic import BaseModel, Field

from rwgate.sources.snapshot.preprints import PreprintPart, parts
from rwgate.sources.snapshot.rows import iso_date


class ProvenanceEntry(BaseModel):
    """One imported file or download, as ``data status`` lists it."""

    source: str
    kind: str
    sha256: str
    rows: int
    skipped: int
    export_date: dt.date | None = None
    imported_at: dt.datetime
    etag: str | None = None
    last_modified: str | None = None


class SnapshotStatus(BaseModel):
    """Everything ``rwgate data status`` (and the MCP ``rw_data_status`` tool) reports."""

    path: str
    exists: bool
    schema_version: int | None = None
    notices: int = 0
    works: int = Field(default=0, description="distinct work DOIs with at least one notice")
    newest_notice: dt.date | None = None
    as_of: dt.date | None = Field(default=None, description="newest export date imported")
    age_days: int | None = None
    updated: dt.datetime | None = None
    registry: bool = Field(
        default=False,
        description="a full Retraction Watch export was imported: unlisted works are clean offline",
    )
    provenance: list[ProvenanceEntry] = Field(default_factory=list)
    preprints: list[PreprintPart] = Field(
        default_factory=list,
        description="harvested preprint withdrawals (arXiv, bioRxiv, medRxiv), each part dated",
    )


def read_provenance(conn: sqlite3.Connection) -> list[ProvenanceEntry]:
    """Every import recorded in the snapshot open on ``conn``, oldest first."""
    cursor = conn.execute(
        "SELECT source, kind, sha256, rows, skipped, export_date, imported_at, etag,"
        " last_modified FROM provenance ORDER BY id"
    )
    keys = [c[0] for c in cursor.description]
    return [ProvenanceEntry.model_validate(dict(zip(keys, r, strict=True))) for r in cursor]


def read_status(
    conn: sqlite3.Connection,
    path: Path,
    schema_version: int,
    as_of: dt.datetime | None,
    registry: bool,
    now: dt.datetime | None = None,
) -> SnapshotStatus:
    """The status of the snapshot open on ``conn``; ``as_of`` and ``registry`` as the
    :class:`~rwgate.sources.snapshot.source.Snapshot` reading it found them."""
    now = now or dt.datetime.now(dt.UTC)
    count, works, newest = conn.execute(
        "SELECT count(*), count(DISTINCT work_doi), max(date) FROM notices"
    ).fetchone()
    updated = conn.execute("SELECT value FROM meta WHERE key = 'updated'").fetchone()
    day = as_of.date() if as_of else None
    return SnapshotStatus(
        path=str(path),
        exists=True,
        schema_version=schema_version,
        notices=count,
        works=works,
        newest_notice=iso_date(newest),
        as_of=day,
        age_days=(now.date() - day).days if day else None,
        updated=dt.datetime.fromisoformat(updated[0]) if updated else None,
        registry=registry,
        provenance=read_provenance(conn),
        preprints=parts(conn, now),
    )
