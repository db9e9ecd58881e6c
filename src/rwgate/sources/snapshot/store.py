"""Building the local Retraction Watch snapshot: which files to import, and importing them safely
(their rows are :mod:`~rwgate.sources.snapshot.rw_import`'s and
:mod:`~rwgate.sources.snapshot.crossref_bodies`'s).

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
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from rwgate.contract.models import Problem
from rwgate.sources.snapshot import crossref_bodies as snapshot_crossref
from rwgate.sources.snapshot import rw_import as snapshot_rwcsv
from rwgate.sources.snapshot import rwcsv, title_index
from rwgate.sources.snapshot.schema import (
    SCHEMA_VERSION,
    check_schema,
    connect_ro,
    connect_rw,
    write_meta,
)


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


def import_files(
    db_path: Path,
    files: Sequence[Path | ImportSource],
    *,
    now: dt.datetime | None = None,
    allow_shrink: bool = False,
    require_full: bool = False,
) -> ImportResult:
    """Build or update the snapshot at ``db_path`` from CSV files and Crossref JSON bodies,
    idempotently (CSV rows keyed by Record ID, Crossref notices by work/notice/type/source, a
    file whose sha256 was imported before skipped); unreadable files are in ``failed``.

    A Retraction Watch CSV is a *full export* only when every row parsed and it has at least
    :data:`~rwgate.sources.snapshot.rw_import.FULL_EXPORT_FLOOR` rows (a first import) or
    :data:`~rwgate.sources.snapshot.rw_import.SHRINK_FLOOR` of the previous full export's rows
    (``allow_shrink`` waives the floor): it replaces every Retraction Watch row (records deleted
    upstream disappear) and makes the snapshot the registry of record, where a work it does not
    list is clean offline. Anything else is an *extract*: its notices are added, unlisted works
    stay unverified; with ``require_full`` (a download) it is refused, the snapshot unchanged.
    """
    db_path = Path(db_path)
    now = now or dt.datetime.now(dt.UTC)
    result = ImportResult(path=str(db_path))
    sources = [f if isinstance(f, ImportSource) else ImportSource(Path(f)) for f in files]
    with _exclusive(db_path):
        # A killed import leaves its copy behind; holding the lock, no other import owns one.
        for stale in db_path.parent.glob(f".{db_path.name}.*.tmp"):
            stale.unlink(missing_ok=True)
        todo = _files_to_import(db_path, sources, result)
        if not todo:
            return result
        # When no file lands the copy is dropped: a bad file never creates an empty snapshot
        # nor touches the old one's timestamps.
        with suppress(_NothingLanded), _swapped(db_path, now) as conn:
            landed = [
                _import_one(conn, source, sha, now, result, allow_shrink, require_full)
                for source, sha in todo
            ]
            if not any(landed):
                raise _NothingLanded
            title_index.build(conn)  # an entry without a DOI is matched by its title
    return result


@contextmanager
def updating(db_path: Path, now: dt.datetime) -> Iterator[sqlite3.Connection]:
    """A writable copy of the snapshot (made if there is none), swapped in whole when the block
    ends without an exception, with a new import id (memos made on the old data are void); on
    any exception the old file stays as it was. Serialised with the imports (one lock)."""
    db_path = Path(db_path)
    with _exclusive(db_path), _swapped(db_path, now) as conn:
        yield conn


@contextmanager
def _exclusive(db_path: Path) -> Iterator[None]:
    """Serialise imports into one snapshot: two at once would each replace the other's work."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
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


class _NothingLanded(Exception):
    """Raised inside :func:`_swapped` to drop the copy and leave the snapshot as it was."""


@contextmanager
def _swapped(db_path: Path, now: dt.datetime) -> Iterator[sqlite3.Connection]:
    tmp = _new_temp(db_path)
    try:
        if db_path.exists():
            shutil.copyfile(db_path, tmp)
            shutil.copymode(db_path, tmp)  # a shared snapshot stays readable to its group
        conn = connect_rw(tmp)
        try:
            yield conn
            write_meta(conn, now)
        finally:
            conn.close()
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
        conn = connect_ro(db_path)
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
            with source.path.open("rb") as handle:
                sha = hashlib.file_digest(handle, "sha256").hexdigest()
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
    allow_shrink: bool,
    require_full: bool,
) -> bool:
    """False (the file in ``result.failed``) if unreadable; its rows then rolled back."""
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
            kind, rows, skipped, newest = snapshot_rwcsv.import_export(
                conn, source.path, name, prov_id, now.date(), allow_shrink, require_full
            )
        else:
            rows, skipped, newest = snapshot_crossref.import_json(conn, source.path, prov_id)
    except (
        snapshot_rwcsv.FileFailed,
        rwcsv.CSVFormatError,
        snapshot_crossref.JSONFormatError,
        OSError,
    ) as exc:
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
