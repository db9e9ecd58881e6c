"""The local Retraction Watch snapshot as an integrity source: offline, and with what Crossref's
``updated-by`` lacks (reasons, reinstatements, record ids).

The SQLite file (built by :mod:`~rwgate.sources.snapshot.store`, its tables documented in
:mod:`~rwgate.sources.snapshot.schema`) is opened read-only: a look-up never damages it, and an
import replacing it under an open :class:`Snapshot` does not disturb it. A batch goes to SQLite
as one JSON array (``IN (SELECT value FROM json_each(?))``), or in chunks of 500 parameters where
SQLite lacks JSON1, so 100,000 DOIs cost three queries.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from functools import cached_property, partial
from pathlib import Path
from typing import Any

from rwgate.contract.evidence import merge_notices
from rwgate.contract.models import Lookup, SourceInfo
from rwgate.contract.trusted import gc_paused
from rwgate.settings import recorded
from rwgate.settings.config import Settings
from rwgate.settings.paths import default_snapshot_path
from rwgate.sources.cache import Cache
from rwgate.sources.interface import Absence, IdKind, IntegritySource, Progress
from rwgate.sources.snapshot import rows as snapshot_rows
from rwgate.sources.snapshot import title_index
from rwgate.sources.snapshot.info import (
    ProvenanceEntry,
    SnapshotStatus,
    read_provenance,
    read_status,
)
from rwgate.sources.snapshot.rows import NOTICE_COLUMNS, doi_key, export_spelling, iso_date
from rwgate.sources.snapshot.schema import (
    SnapshotError,
    check_schema,
    connect_ro,
    read_import_id,
)
from rwgate.sources.snapshot.store import ImportResult, ImportSource, import_files
from rwgate.titles import TitleRow

__all__ = [
    "ImportResult",
    "ImportSource",
    "Snapshot",
    "SnapshotError",
    "default_snapshot_path",
    "import_files",
    "snapshot_status",
]

_CHUNK = 500  # below SQLite's smallest variable limit (999), for builds without JSON1


class Snapshot(IntegritySource):
    """A read-only handle on a snapshot file: the Retraction Watch data, usable offline.

    Its ``absence`` is ``clean`` only when Retraction Watch rows were imported (see
    :meth:`is_registry`): a snapshot of recorded Crossref bodies proves nothing by omission.
    """

    name = "snapshot"
    title = "Retraction Watch snapshot"
    answers = frozenset({"doi", "pmid"})
    settings = frozenset({"snapshot", "max_snapshot_age_days"})
    vouches = True  # a listed row is a notice; a recorded Crossref body is Crossref's word

    def __init__(self, path: Path | str | None = None, max_age_days: int | None = None) -> None:
        self.max_age_days = max_age_days
        self._info: SourceInfo | None = None
        self.path = Path(path) if path is not None else default_snapshot_path()
        if not self.path.is_file():
            recorded.note_snapshot(self.path, None)
            raise SnapshotError(
                f"no snapshot at {self.path}; run `rwgate data import FILE` or `rwgate data update`"
            )
        self._conn = connect_ro(self.path, threads=True)
        self._lock = threading.Lock()
        try:
            self.schema_version = check_schema(self._conn, self.path)
            if self.schema_version == 0:
                raise SnapshotError(f"{self.path}: empty file, not an rwgate snapshot")
        except SnapshotError:
            self._conn.close()
            raise
        # Read through this connection: the file it reads, even if an import replaced the path.
        self.import_id = read_import_id(self._conn)
        recorded.note_snapshot(self.path, self.import_id)
        self._as_of = self._export_date()
        # The Lookup of (doi, notice rows, works row, works noticed), from this snapshot.
        self._lookup = partial(snapshot_rows.lookup, source=self.name, as_of=self._as_of)
        try:
            self._conn.execute("SELECT value FROM json_each('[]')").fetchall()
            self.json1 = True
        except sqlite3.OperationalError:
            self.json1 = False
        self._has_works = self._conn.execute("SELECT 1 FROM works LIMIT 1").fetchone() is not None
        self._has_notice_pmids = self.schema_version >= 2
        self.has_authors = self.schema_version >= 3  # the MCP author search (schema 3)
        self._titles_indexed: bool | None = None  # read on the first title look-up

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- look-ups ----------------------------------------------------------------------------

    def _select(self, sql: str, keys: list[str]) -> list[Any]:
        """Run ``sql`` whose ``IN ({keys})`` names the batch: one JSON parameter, else chunks."""
        with self._lock:
            if self.json1:
                inner = sql.format(keys="SELECT value FROM json_each(?)")
                return self._conn.execute(inner, (json.dumps(keys),)).fetchall()
            rows: list[Any] = []
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                inner = sql.format(keys=",".join("?" * len(chunk)))
                rows += self._conn.execute(inner, chunk).fetchall()
            return rows

    def read(self, sql: str, params: Mapping[str, Any] | Sequence[Any] = ()) -> list[Any]:
        """Every row of a read-only query (:mod:`rwgate.sources.snapshot.queries`' questions)."""
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    @classmethod
    def open(cls, settings: Settings, cache: Cache) -> IntegritySource | None:
        """The snapshot named by the settings (or the default path), if that file exists."""
        path = Path(settings.snapshot or default_snapshot_path())
        if not path.is_file():
            recorded.note_snapshot(path, None)  # one imported there later changes verdicts
            return None
        return cls(path, settings.max_snapshot_age_days)

    @property
    def absence(self) -> Absence:  # type: ignore[override]
        return "clean" if self.is_registry else "nothing"

    def query(self, ident: str, kind: IdKind = "doi") -> Lookup:
        return self.query_all([ident], kind=kind)[ident]

    def query_all(
        self, dois: Sequence[str], progress: Progress | None = None, kind: IdKind = "doi"
    ) -> dict[str, Lookup]:
        """One Lookup per DOI (or PMID): ``found`` with its notices when the snapshot lists it."""
        if kind == "pmid":
            return self.query_pmids(dois)
        wanted = {doi: doi_key(doi) for doi in dois}
        # The export's spellings: SICI DOIs lost their '<' and '>' (all 24 in the 2026 export).
        alternates = {key: alt for key in wanted.values() if (alt := export_spelling(key)) != key}
        with gc_paused():
            # Sorted: SQLite walks its index in order (a third faster than a set's order).
            keys = sorted({*wanted.values(), *alternates.values()})
            notices, works, notice_for = self._fetch(keys)
            for key, alt in alternates.items():
                if alt in notices:
                    notices[key] = [*notices.get(key, []), *notices[alt]]
            answers = {
                given: self._lookup(key, notices.get(key), works.get(key), notice_for.get(key))
                for given, key in wanted.items()
            }
        if progress:
            progress(len(wanted), len(wanted))
        return answers

    def _fetch(
        self, keys: list[str]
    ) -> tuple[dict[str, list[Any]], dict[str, Any], dict[str, list[str]]]:
        """Notices about, Crossref records of, and works noticed by each DOI in ``keys``."""
        notices: dict[str, list[Any]] = defaultdict(list)
        for row in self._select(
            f"SELECT n.work_doi, {NOTICE_COLUMNS} FROM notices n WHERE n.work_doi IN ({{keys}})"
            " ORDER BY n.date, n.type",  # each work's rows arrive in date order
            keys,
        ):
            notices[row[0]].append(row[1:])
        works: dict[str, Any] = {}
        if self._has_works:
            for row in self._select(
                "SELECT doi, title, journal, year, notice_for FROM works WHERE doi IN ({keys})",
                keys,
            ):
                works[row[0]] = row[1:]
        notice_for: dict[str, list[str]] = defaultdict(list)
        for notice_doi, work in self._select(
            "SELECT DISTINCT notice_doi, work_doi FROM notices WHERE notice_doi IN ({keys})"
            " AND work_doi IS NOT NULL AND work_doi != notice_doi",
            keys,
        ):
            notice_for[notice_doi].append(work)
        return notices, works, notice_for

    def query_pmids(self, pmids: Sequence[str]) -> dict[str, Lookup]:
        """Look-ups by the original paper's PubMed id; the Lookup's ``doi`` is the paper's DOI.

        A paper the snapshot knows by DOI is answered as :meth:`query_all` answers that DOI, so
        Crossref notices recorded for it count too; ``doi`` is ``""`` when the paper has none.
        """
        wanted = {p: p.strip().lstrip("0") for p in pmids}
        by_pmid: dict[str, list[Any]] = defaultdict(list)
        doi_of: dict[str, str] = {}
        for row in self._select(
            f"SELECT n.work_pmid, n.work_doi, {NOTICE_COLUMNS} FROM notices n"
            " WHERE n.work_pmid IN ({keys}) ORDER BY n.work_doi IS NULL",
            list(set(wanted.values())),
        ):
            by_pmid[row[0]].append(row[2:])
            if row[1]:
                doi_of.setdefault(row[0], row[1])
        by_doi = self.query_all(sorted(set(doi_of.values()))) if doi_of else {}
        notice_of = self._works_noticed_by_pmid(
            [k for k in set(wanted.values()) if k not in by_pmid]
        )
        answers: dict[str, Lookup] = {}
        for given, key in wanted.items():
            doi = doi_of.get(key)
            if key in notice_of:  # the PubMed id of a notice: the cited record is the notice
                answers[given] = self._lookup("", None, None, notice_of[key])
            elif doi:
                # Rows of the same PubMed id filed without a DOI still count.
                found = by_doi[doi]
                notices = merge_notices(
                    [*found.notices, *(snapshot_rows.notice(r) for r in by_pmid[key])]
                )
                answers[given] = found.model_copy(update={"notices": notices})
            else:
                answers[given] = self._lookup("", by_pmid.get(key), None, None)
        return answers

    def title_rows(self, keys: Sequence[str]) -> dict[str, list[TitleRow]]:
        """The rows whose normalised title (:func:`rwgate.titles.title_key`) is each of ``keys``:
        from the title index when the import wrote one, else by folding every title here."""
        if self._titles_indexed is None:
            self._titles_indexed = title_index.current(self._conn)
        if self._titles_indexed:
            return title_index.find(self._conn, self._select, keys, indexed=True)
        with self._lock:
            return title_index.find(self._conn, self._select, keys, indexed=False)

    def title_lookup(self, rows: Sequence[TitleRow]) -> Lookup:
        """The snapshot's answer for the work of ``rows`` (one work that has neither DOI nor
        PubMed id: its notices are those rows')."""
        found = self._select(
            f"SELECT n.rowid, {NOTICE_COLUMNS} FROM notices n WHERE n.rowid IN ({{keys}})"
            " ORDER BY n.date, n.type",
            [str(r.row) for r in rows],
        )
        return self._lookup("", [r[1:] for r in found], None, None)

    def _works_noticed_by_pmid(self, pmids: list[str]) -> dict[str, list[str]]:
        """For PubMed ids that are notices' own (RetractionPubMedID): the works they are about."""
        found: dict[str, list[str]] = defaultdict(list)
        if not pmids or not self._has_notice_pmids:
            return found
        for pmid, work_doi, work_pmid in self._select(
            "SELECT DISTINCT notice_pmid, work_doi, work_pmid FROM notices"
            " WHERE notice_pmid IN ({keys})",
            pmids,
        ):
            found[pmid].append(
                work_doi or (f"PMID {work_pmid}" if work_pmid else "an unnamed work")
            )
        return found

    # --- freshness and provenance -------------------------------------------------------------

    def _export_date(self) -> dt.datetime | None:
        """The newest full Retraction Watch export imported (the registry of record), else the
        newest extract, else any import."""
        row = self._conn.execute(
            "SELECT max(CASE WHEN kind = 'retraction-watch-export' THEN export_date END),"
            " max(CASE WHEN kind = 'retraction-watch-csv' THEN export_date END),"
            " max(export_date) FROM provenance"
        ).fetchone()
        day = iso_date(row[0] or row[1] or row[2]) if row else None
        return dt.datetime.combine(day, dt.time(), dt.UTC) if day else None

    @cached_property
    def is_registry(self) -> bool:
        """Whether Retraction Watch rows were imported (not only recorded Crossref bodies).

        Only then may a DOI the snapshot does not list be called clean offline.
        """
        row = self._conn.execute(
            "SELECT 1 FROM provenance WHERE kind = 'retraction-watch-export' AND rows > 0 LIMIT 1"
        ).fetchone()
        return row is not None

    def warnings(self) -> list[str]:
        """Stale data, and a snapshot that cannot make an unlisted work clean."""
        out: list[str] = []
        as_of = self._as_of
        if as_of is not None and self.max_age_days is not None:
            stamp = as_of if as_of.tzinfo else as_of.replace(tzinfo=dt.UTC)
            age = (dt.datetime.now(dt.UTC) - stamp).days
            # The next change of what is said: this warning appears, or (stale already) the age
            # it gives grows by a day. A moment already past would keep every memo from replaying.
            changes_at = stamp + dt.timedelta(days=max(age, self.max_age_days) + 1)
            recorded.note_expiry(changes_at.timestamp())
            if age > self.max_age_days:
                out.append(
                    f"the Retraction Watch snapshot is {age} days old (data as of {stamp.date()},"
                    f" more than {self.max_age_days}); run `rwgate data update`"
                )
        if not self.is_registry:
            out.append(
                "the snapshot holds no full Retraction Watch export (only extracts or Crossref"
                " records); works it does not list are not called clean from it (run `rwgate"
                " data update`)"
            )
        if not self._has_notice_pmids:
            out.append(
                f"the snapshot was written by an older rwgate (schema {self.schema_version}):"
                " notices' own PubMed ids are unknown until `rwgate data update` runs again"
            )
        return out

    def info(self) -> SourceInfo:
        """Named in every report: where the snapshot is and how fresh its data is (read once:
        a handle is read-only, and the core asks for it once per work it judges)."""
        if self._info is None:
            rows = self._conn.execute("SELECT count(*) FROM notices").fetchone()[0]
            files = self._conn.execute("SELECT count(*) FROM provenance").fetchone()[0]
            self._info = SourceInfo(
                name=self.name,
                path=str(self.path),
                as_of=self._as_of,
                note=f"local Retraction Watch snapshot: {rows} notices from {files} import(s)",
            )
        return self._info

    def provenance(self) -> list[ProvenanceEntry]:
        return read_provenance(self._conn)

    def status(self, now: dt.datetime | None = None) -> SnapshotStatus:
        return read_status(
            self._conn, self.path, self.schema_version, self._as_of, self.is_registry, now
        )


def snapshot_status(path: Path | None = None, now: dt.datetime | None = None) -> SnapshotStatus:
    """Status of the snapshot at ``path`` (default if ``None``), also when there is none."""
    path = Path(path) if path is not None else default_snapshot_path()
    if not path.exists():
        return SnapshotStatus(path=str(path), exists=False)
    with Snapshot(path) as snap:
        return snap.status(now)
