"""The local Retraction Watch snapshot's SQLite schema, its version checks and its import id.

The snapshot is one SQLite file. Schema version 3 (``meta.schema_version``)::

    meta(key TEXT PRIMARY KEY, value TEXT)         schema_version, created, updated (ISO, UTC),
                                                   import_id (16 hex digits, as in the header)
    provenance(id INTEGER PRIMARY KEY,
               source TEXT,        file path or URL the data came from
               kind TEXT,          'retraction-watch-export' (whole), 'retraction-watch-csv'
                                   (an extract) or 'crossref-json'
               sha256 TEXT,        of the file's bytes; a file seen before is not imported again
               rows INTEGER,       records imported from it
               skipped INTEGER,    malformed rows skipped
               export_date TEXT,   newest notice date in the file (else the file's mtime), ISO
               imported_at TEXT,   ISO datetime, UTC
               etag TEXT, last_modified TEXT)   HTTP validators of a downloaded file
    notices(key TEXT UNIQUE,       'rw:<Record ID>' for CSV rows,
                                   'cr:<work doi>|<notice doi>|<type>|<sources>' for Crossref
            work_doi TEXT, work_pmid TEXT,       the work the notice is about (canonical DOI)
            type TEXT, label TEXT, notice_doi TEXT, date TEXT (ISO),
            source TEXT,           ';'-joined source names
            record_id TEXT, reasons TEXT (';'-joined),
            title TEXT, journal TEXT, year INTEGER,      the work's, as the source gave them
            provenance_id INTEGER,
            notice_pmid TEXT,      the notice's own PubMed id (version 2; a cited notice)
            authors TEXT)          the work's authors, ';'-joined as the source names them
                                   (version 3; the MCP author search offline)
            indexed on work_doi, work_pmid, notice_doi, notice_pmid
    works(doi TEXT PRIMARY KEY, title, journal, year, notice_for TEXT (JSON list), provenance_id,
          authors TEXT)    every Crossref record imported, so a clean record is "listed" too

Every import that changes the file gives it a new random **import id**, the snapshot's identity
for the memos (:mod:`rwgate.settings.recorded`): 64 bits kept in the SQLite header itself, as
``PRAGMA user_version`` (bytes 60-63) and ``PRAGMA application_id`` (bytes 68-71), so a reader
learns it from the file's first 100 bytes, without SQLite (pandoc's Lua filter too), and never
from the file's size or mtime (a re-import with one more retraction may keep both).
"""

from __future__ import annotations

import datetime as dt
import secrets
import sqlite3
from pathlib import Path

from rwgate.errors import DataError

SCHEMA_VERSION = 3
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS provenance (
    id INTEGER PRIMARY KEY, source TEXT NOT NULL, kind TEXT NOT NULL, sha256 TEXT NOT NULL,
    rows INTEGER NOT NULL, skipped INTEGER NOT NULL, export_date TEXT, imported_at TEXT NOT NULL,
    etag TEXT, last_modified TEXT);
CREATE TABLE IF NOT EXISTS notices (
    key TEXT NOT NULL UNIQUE, work_doi TEXT, work_pmid TEXT, type TEXT NOT NULL, label TEXT,
    notice_doi TEXT, date TEXT, source TEXT NOT NULL, record_id TEXT,
    reasons TEXT NOT NULL DEFAULT '', title TEXT, journal TEXT, year INTEGER,
    provenance_id INTEGER REFERENCES provenance(id), notice_pmid TEXT, authors TEXT);
CREATE INDEX IF NOT EXISTS notices_work_doi ON notices(work_doi);
CREATE INDEX IF NOT EXISTS notices_work_pmid ON notices(work_pmid);
CREATE INDEX IF NOT EXISTS notices_notice_doi ON notices(notice_doi);
CREATE INDEX IF NOT EXISTS notices_notice_pmid ON notices(notice_pmid);
CREATE TABLE IF NOT EXISTS works (
    doi TEXT PRIMARY KEY, title TEXT, journal TEXT, year INTEGER,
    notice_for TEXT NOT NULL DEFAULT '[]', provenance_id INTEGER REFERENCES provenance(id),
    authors TEXT);
"""


class SnapshotError(DataError):
    """The snapshot cannot be used (missing, not a snapshot, newer schema); one-line message."""


def connect_ro(path: Path, threads: bool = False) -> sqlite3.Connection:
    """A read-only connection (a look-up never writes the file), ``threads``: usable from another
    thread than this one. The path goes in as :meth:`Path.as_uri` writes it, so a ``#``, ``?`` or
    ``%`` in a folder's name is part of the name (in ``f"file:{path}"`` it starts a fragment or
    a query: SQLite opened another file, read-write)."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    return sqlite3.connect(uri, uri=True, check_same_thread=not threads)


def connect_rw(path: Path) -> sqlite3.Connection:
    """A writable connection with the schema in place (for the temporary import file)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = MEMORY")
    conn.execute("PRAGMA synchronous = OFF")
    _upgrade(conn, check_schema(conn, path))
    conn.executescript(SCHEMA)
    return conn


def _upgrade(conn: sqlite3.Connection, version: int) -> None:
    """Add what an older schema lacks (1: notices' own PubMed ids; 2: author names, which the MCP
    author search reads offline), and forget the HTTP validators so that the next ``data
    update`` downloads the export again and fills them in (a file imported again is read again:
    :func:`rwgate.sources.snapshot.store.import_files`)."""
    if version not in (1, 2):
        return
    if version == 1:
        conn.execute("ALTER TABLE notices ADD COLUMN notice_pmid TEXT")
    for table in ("notices", "works"):
        columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if "authors" not in columns:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN authors TEXT")
    conn.execute("UPDATE provenance SET etag = NULL, last_modified = NULL")


def check_schema(conn: sqlite3.Connection, path: Path) -> int:
    """The file's schema version; refuses non-snapshots and files from a newer rwgate."""
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as exc:
        raise SnapshotError(f"{path}: not an rwgate snapshot ({exc})") from None
    if not tables:
        return 0
    if "meta" not in tables:
        raise SnapshotError(f"{path}: not an rwgate snapshot (no meta table)")
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    version = int(row[0]) if row else 0
    if version > SCHEMA_VERSION:
        raise SnapshotError(
            f"{path}: snapshot schema {version} is newer than this rwgate understands "
            f"({SCHEMA_VERSION}); upgrade rwgate or re-import"
        )
    return version


def read_import_id(conn: sqlite3.Connection) -> str:
    """The import id of the snapshot open on ``conn`` ("" for one written before ids)."""
    raw = b"".join(
        (conn.execute(f"PRAGMA {name}").fetchone()[0] & 0xFFFFFFFF).to_bytes(4, "big")
        for name in ("user_version", "application_id")
    )
    return raw.hex() if any(raw) else ""


def write_meta(conn: sqlite3.Connection, now: dt.datetime) -> None:
    """Stamp an import that landed: a new random import id (module docstring), the update time,
    the schema version."""
    raw = bytes(8)
    while not any(raw):
        raw = secrets.token_bytes(8)
    user_version = int.from_bytes(raw[:4], "big", signed=True)
    application_id = int.from_bytes(raw[4:], "big", signed=True)
    conn.execute(f"PRAGMA user_version = {user_version}")  # PRAGMAs take no parameters
    conn.execute(f"PRAGMA application_id = {application_id}")
    stamp = now.isoformat()
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('import_id', ?)", (raw.hex(),))
    conn.execute("INSERT OR IGNORE INTO meta VALUES ('created', ?)", (stamp,))
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('updated', ?)", (stamp,))
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
