"""Building the local Retraction Watch snapshot: schema, import, provenance.

The snapshot is one SQLite file. Schema version 2 (``meta.schema_version``)::

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
            notice_pmid TEXT)      the notice's own PubMed id (version 2; a cited notice)
            indexed on work_doi, work_pmid, notice_doi, notice_pmid
    works(doi TEXT PRIMARY KEY, title, journal, year, notice_for TEXT (JSON list), provenance_id)
            every Crossref record imported, so a clean record is "listed" too

Every import that changes the file gives it a new random **import id**, the snapshot's identity
for the memos (:mod:`rwgate.recorded`): 64 bits kept in the SQLite header itself, as
``PRAGMA user_version`` (bytes 60-63) and ``PRAGMA application_id`` (bytes 68-71), so a reader
learns it from the file's first 100 bytes, without SQLite (pandoc's Lua filter too), and never
from the file's size or mtime (a re-import with one more retraction may keep both).

Imports into one file are serialised by an advisory lock on ``<file>.lock`` (POSIX). An import
never writes the live file: it copies the old snapshot (if any) to a temporary file in the
same directory, imports into that, and ``os.replace``-s it over the old one, so a crash or a bad
file mid-import leaves the previous snapshot whole. Each input file is imported inside a savepoint:
a file that turns out unreadable half-way is rolled back on its own and the other files still land.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import secrets
import shutil
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from rwgate.errors import DataError
from rwgate.models import Problem
from rwgate.sources import rwcsv, snapshot_crossref, title_index

SCHEMA_VERSION = 2
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
    provenance_id INTEGER REFERENCES provenance(id), notice_pmid TEXT);
CREATE INDEX IF NOT EXISTS notices_work_doi ON notices(work_doi);
CREATE INDEX IF NOT EXISTS notices_work_pmid ON notices(work_pmid);
CREATE INDEX IF NOT EXISTS notices_notice_doi ON notices(notice_doi);
CREATE TABLE IF NOT EXISTS works (
    doi TEXT PRIMARY KEY, title TEXT, journal TEXT, year INTEGER,
    notice_for TEXT NOT NULL DEFAULT '[]', provenance_id INTEGER REFERENCES provenance(id));
"""
_INSERT_NOTICE = (
    "INSERT OR REPLACE INTO notices (key, work_doi, work_pmid, type, label, notice_doi, date,"
    " source, record_id, reasons, title, journal, year, provenance_id, notice_pmid)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_BATCH = 2000


class SnapshotError(DataError):
    """The snapshot cannot be used (missing, not a snapshot, newer schema); one-line message."""


@dataclass(frozen=True)
class ImportSource:
    """A file to import, with where it came from when that is not the file itself (a download)."""

    path: Path
    url: str | None = None
    etag: str | None = None
    last_modified: str | None = None


class FileImport(BaseModel):
    """What happened to one input file."""

    source: str
    kind: str | None = None
    sha256: str | None = None
    rows: int = 0
    skipped: int = 0
    unchanged: bool = Field(default=False, description="same sha256 imported before: a no-op")
    export_date: dt.date | None = None


class ImportResult(BaseModel):
    """The outcome of :func:`import_files`: rows imported, rows skipped, files that failed."""

    path: str
    rows: int = 0
    skipped: list[Problem] = Field(default_factory=list)
    failed: list[Problem] = Field(default_factory=list)
    sources: list[FileImport] = Field(default_factory=list)


class _FileFailed(DataError):
    """An input file could not be read; caught per file so the other files still import."""


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def connect_rw(path: Path) -> sqlite3.Connection:
    """A writable connection with the schema in place (for the temporary import file)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = MEMORY")
    conn.execute("PRAGMA synchronous = OFF")
    version = check_schema(conn, path)
    if version == 1:
        _upgrade_from_1(conn)
    conn.executescript(SCHEMA)
    conn.execute("CREATE INDEX IF NOT EXISTS notices_notice_pmid ON notices(notice_pmid)")
    return conn


def _upgrade_from_1(conn: sqlite3.Connection) -> None:
    """Version 1 had no notice PubMed ids: add the column, and forget the HTTP validators so that
    the next ``data update`` downloads the export again and fills it in."""
    conn.execute("ALTER TABLE notices ADD COLUMN notice_pmid TEXT")
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


FULL_EXPORT_FLOOR = 30_000
"""Rows a first full Retraction Watch export has at least (the 2026-05-07 export: 70,061)."""
SHRINK_FLOOR = 0.95
"""A later full export has at least this share of the previous full export's rows."""
EXPORT_KIND = "retraction-watch-export"
"""Provenance kind of a whole export: only it makes the snapshot the registry of record."""


def import_files(
    db_path: Path,
    files: Sequence[Path | ImportSource],
    *,
    now: dt.datetime | None = None,
    allow_shrink: bool = False,
    require_full: bool = False,
) -> ImportResult:
    """Build or update the snapshot at ``db_path`` from CSV files and Crossref JSON bodies.

    Atomic (temp file + ``os.replace``) and idempotent (CSV rows keyed by Record ID, Crossref
    notices by work/notice/type/source, a file whose sha256 was imported before is skipped).
    Unreadable files are reported in ``failed`` and the others still import.

    A Retraction Watch CSV is a *full export* only when every row parsed and it has at least
    :data:`FULL_EXPORT_FLOOR` rows (a first import) or :data:`SHRINK_FLOOR` of the previous full
    export's rows (``allow_shrink`` waives the floor). A full export replaces every Retraction
    Watch row wholesale (records deleted upstream disappear) and makes the snapshot the registry
    of record, where a work it does not list is clean offline. Anything else is an *extract*: its
    notices are added, and unlisted works stay unverified. With ``require_full`` (a download)
    an extract is refused instead: the file is in ``failed`` and the snapshot stays as it was.
    """
    db_path = Path(db_path)
    now = now or dt.datetime.now(dt.UTC)
    result = ImportResult(path=str(db_path))
    sources = [f if isinstance(f, ImportSource) else ImportSource(Path(f)) for f in files]
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(db_path):
        # A killed import leaves its copy behind; holding the lock, no other import owns one.
        for stale in db_path.parent.glob(f".{db_path.name}.*.tmp"):
            stale.unlink(missing_ok=True)
        todo = _files_to_import(db_path, sources, result)
        if todo:
            _rebuild(db_path, todo, now, result, allow_shrink, require_full)
    return result


@contextmanager
def _exclusive(db_path: Path) -> Iterator[None]:
    """Serialise imports into one snapshot: two at once would each replace the other's work."""
    try:
        import fcntl
    except ImportError:  # no advisory locks (Windows): imports there are not serialised
        yield
        return
    with db_path.with_name(db_path.name + ".lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _rebuild(
    db_path: Path,
    todo: list[tuple[ImportSource, str]],
    now: dt.datetime,
    result: ImportResult,
    allow_shrink: bool = False,
    require_full: bool = False,
) -> None:
    """Copy, import into the copy, then swap it in; on any failure the old file stays as it was.

    When no file could be imported the copy is dropped: the snapshot (or its absence) stays as
    it was, so a bad file never creates an empty snapshot nor touches the old one's timestamps.
    """
    tmp = _new_temp(db_path)
    try:
        if db_path.exists():
            shutil.copyfile(db_path, tmp)
            shutil.copymode(db_path, tmp)  # a shared snapshot stays readable to its group
        conn = connect_rw(tmp)
        try:
            landed = any(
                [
                    _import_one(conn, source, sha, now, result, allow_shrink, require_full)
                    for source, sha in todo
                ]
            )
            if landed:
                title_index.build(conn)  # an entry without a DOI is matched by its title
                _write_meta(conn, now)
        finally:
            conn.close()
        if not landed:
            tmp.unlink()
            return
        with tmp.open("rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, db_path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _new_temp(db_path: Path) -> Path:
    """An empty, new file beside ``db_path``, created with the mode any new file gets.

    ``tempfile.mkstemp`` would create it 0600, and the rename would then make every snapshot
    unreadable to anyone but its importer (a CI runner's other users, a shared data folder).
    """
    while True:
        tmp = db_path.with_name(f".{db_path.name}.{secrets.token_hex(6)}.tmp")
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return tmp


def _files_to_import(
    db_path: Path, sources: list[ImportSource], result: ImportResult
) -> list[tuple[ImportSource, str]]:
    """Hash every file; drop unreadable ones (reported) and ones already imported (no-ops)."""
    known: set[str] = set()
    if db_path.exists():
        conn = sqlite3.connect(f"{db_path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            # A file imported into an older schema is read again, to fill what that one lacked.
            if check_schema(conn, db_path) == SCHEMA_VERSION:
                known = {r[0] for r in conn.execute("SELECT sha256 FROM provenance")}
        finally:
            conn.close()
    todo: list[tuple[ImportSource, str]] = []
    for source in sources:
        name = source.url or str(source.path)
        try:
            sha = file_sha256(source.path)
        except OSError as exc:
            result.failed.append(
                Problem(message=f"{source.path}: {_os_reason(exc)}", severity="error")
            )
            continue
        if sha in known:
            result.sources.append(FileImport(source=name, sha256=sha, unchanged=True))
            continue
        known.add(sha)
        todo.append((source, sha))
    return todo


def _os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _import_one(
    conn: sqlite3.Connection,
    source: ImportSource,
    sha: str,
    now: dt.datetime,
    result: ImportResult,
    allow_shrink: bool = False,
    require_full: bool = False,
) -> bool:
    """Import one file inside a savepoint; False (the file in ``result.failed``) if unreadable."""
    name = source.url or str(source.path)
    conn.execute("SAVEPOINT file_import")
    try:
        kind = _detect_kind(source.path)
        cursor = conn.execute(
            "INSERT INTO provenance (source, kind, sha256, rows, skipped, imported_at, etag,"
            " last_modified) VALUES (?, ?, ?, 0, 0, ?, ?, ?)",
            (name, kind, sha, now.isoformat(), source.etag, source.last_modified),
        )
        prov_id = int(cursor.lastrowid or 0)
        if kind == rwcsv.SOURCE_NAME:
            rows, skipped, newest = _import_csv(conn, source.path, prov_id, now.date())
            full = rwcsv.has_export_header(source.path) and _is_full_export(
                conn, rows, skipped, allow_shrink
            )
            if require_full and not full:
                raise _FileFailed(
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
        else:
            rows, skipped, newest = snapshot_crossref.import_json(conn, source.path, prov_id)
    except (_FileFailed, rwcsv.CSVFormatError, snapshot_crossref.JSONFormatError, OSError) as exc:
        conn.execute("ROLLBACK TO file_import")
        conn.execute("RELEASE file_import")
        message = f"{source.path}: {_os_reason(exc)}" if isinstance(exc, OSError) else str(exc)
        result.failed.append(Problem(message=message, severity="error"))
        return False
    export = newest or _mtime_date(source.path)
    conn.execute(
        "UPDATE provenance SET rows = ?, skipped = ?, export_date = ? WHERE id = ?",
        (rows, len(skipped), export.isoformat() if export else None, prov_id),
    )
    conn.execute("RELEASE file_import")
    result.rows += rows
    result.skipped.extend(skipped)
    result.sources.append(
        FileImport(
            source=name, kind=kind, sha256=sha, rows=rows, skipped=len(skipped), export_date=export
        )
    )
    return True


def _is_full_export(
    conn: sqlite3.Connection, rows: int, skipped: list[Problem], allow_shrink: bool
) -> bool:
    """Whole, by the rules of :func:`import_files`: every row read, enough rows."""
    if skipped or rows == 0:
        return False
    if allow_shrink:
        return True
    previous = conn.execute(
        "SELECT rows FROM provenance WHERE kind = ? ORDER BY id DESC LIMIT 1", (EXPORT_KIND,)
    ).fetchone()
    floor = FULL_EXPORT_FLOOR if previous is None else SHRINK_FLOOR * int(previous[0])
    return rows >= floor


def _detect_kind(path: Path) -> str:
    """JSON bodies start with ``{`` or ``[``; everything else is read as a Retraction Watch CSV."""
    with path.open("rb") as handle:
        head = handle.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    return snapshot_crossref.KIND if head[:1] in (b"{", b"[") else rwcsv.SOURCE_NAME


def _mtime_date(path: Path) -> dt.date | None:
    try:
        return dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC).date()
    except OSError:
        return None


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
        )


def _import_csv(
    conn: sqlite3.Connection, path: Path, prov_id: int, today: dt.date
) -> tuple[int, list[Problem], dt.date | None]:
    skipped: list[Problem] = []
    newest: list[dt.date] = []
    params = _csv_params(rwcsv.iter_rows(path), prov_id, skipped, newest, today)
    count = 0
    while True:
        batch = [p for _, p in zip(range(_BATCH), params, strict=False)]
        if not batch:
            break
        conn.executemany(_INSERT_NOTICE, batch)
        count += len(batch)
    if count == 0 and not skipped:
        raise _FileFailed(f"{path}: no Retraction Watch rows in the file")
    return count, skipped, newest[0] if newest else None


def new_import_id(conn: sqlite3.Connection) -> str:
    """Give the snapshot open on ``conn`` a new random import id (module docstring); its hex."""
    while True:
        raw = secrets.token_bytes(8)
        if any(raw):
            break
    user_version = int.from_bytes(raw[:4], "big", signed=True)
    application_id = int.from_bytes(raw[4:], "big", signed=True)
    conn.execute(f"PRAGMA user_version = {user_version}")  # PRAGMAs take no parameters
    conn.execute(f"PRAGMA application_id = {application_id}")
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('import_id', ?)", (raw.hex(),))
    return raw.hex()


def read_import_id(conn: sqlite3.Connection) -> str:
    """The import id of the snapshot open on ``conn`` ("" for one written before ids)."""
    user_version = conn.execute("PRAGMA user_version").fetchone()[0]
    application_id = conn.execute("PRAGMA application_id").fetchone()[0]
    raw = (user_version & 0xFFFFFFFF).to_bytes(4, "big") + (application_id & 0xFFFFFFFF).to_bytes(
        4, "big"
    )
    return raw.hex() if any(raw) else ""


def _write_meta(conn: sqlite3.Connection, now: dt.datetime) -> None:
    new_import_id(conn)
    stamp = now.isoformat()
    conn.execute("INSERT OR IGNORE INTO meta VALUES ('created', ?)", (stamp,))
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('updated', ?)", (stamp,))
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
