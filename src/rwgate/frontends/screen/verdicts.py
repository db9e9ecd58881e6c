"""The verdict table: one row per work the snapshot knows, judged by ``rwgate check``'s own code.

Every DOI and PubMed id the snapshot holds is passed through :func:`rwgate.core.check`, offline,
the snapshot its only source, so a screen's evidence rules are check's. A work the table does not
list is clean against a full Retraction Watch export, else unverified (``full_export``). The
columns are :data:`COLUMNS`: ``flag_rank`` is the status's place in the severity order (NULL
when not flagged), the notice columns are the deciding notice's.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rwgate.contract.vocab import FLAGGED_STATUSES

TYPE_CHECKING = False  # the judging machinery loads only when a table is built (not when kept)
if TYPE_CHECKING:
    from rwgate.contract.models import Citation

COLUMNS: tuple[tuple[str, str], ...] = (
    ("kind", "VARCHAR"),
    ("id", "VARCHAR"),
    ("status", "VARCHAR"),
    ("flag_rank", "INTEGER"),
    ("notice_type", "VARCHAR"),
    ("notice_doi", "VARCHAR"),
    ("notice_date", "DATE"),
    ("record_id", "VARCHAR"),
    ("source", "VARCHAR"),
    ("n_notices", "INTEGER"),
    ("snapshot_date", "DATE"),
    ("full_export", "BOOLEAN"),
)


@dataclass
class Registry:
    """What a verdict table says of the works it does not list (the snapshot it comes from)."""

    snapshot: Path
    as_of: dt.date | None
    full_export: bool
    export_rows: int | None
    """Rows of the full export the snapshot rests on (None: it rests on none)."""

    @property
    def partial_registry(self) -> bool:
        """A "full export" smaller than any real one: a sample imported with ``--allow-shrink``,
        which makes every work it does not list clean (fail-open)."""
        from rwgate.sources.snapshot.rw_import import FULL_EXPORT_FLOOR

        return self.full_export and (self.export_rows or 0) < FULL_EXPORT_FLOOR

    @property
    def default_status(self) -> str:
        """An unlisted work: clean only against a full export (the registry of record)."""
        return "clean" if self.full_export else "unverified"


@dataclass
class VerdictTable(Registry):
    """The judged works of one snapshot, in memory (as :func:`build` judged them)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    works: dict[str, tuple[str | None, str | None, int | None]] = field(default_factory=dict)
    """``doi:ID``/``pmid:ID`` -> (title, journal, year): what the summary page names works by."""


@dataclass
class Verdicts(Registry):
    """A verdict table as a screen reads it: a Parquet file (:func:`write_parquet` with
    ``names``), kept in the user's cache folder by :mod:`rwgate.frontends.screen.verdict_cache`."""

    file: Path = Path()
    count: int = 0
    """Its rows: the works judged."""

    def names(self, keys: list[str]) -> dict[str, tuple[str | None, str | None, int | None]]:
        """(title, journal, year) of the flagged works ``keys`` (``doi:ID``/``pmid:ID``), read
        from the file: only the few a summary names are looked up."""
        import duckdb

        from rwgate.frontends.screen.doisql import lit, lit_list

        if not keys:
            return {}
        with duckdb.connect() as con:
            rows = con.execute(
                f"SELECT kind || ':' || id, title, journal, year FROM read_parquet("
                f"{lit(str(self.file))}) WHERE list_contains({lit_list(keys)}, kind || ':' || id)"
            ).fetchall()
        return {k: (t, j, y) for k, t, j, y in rows}


def _identifiers(path: Path) -> tuple[list[str], list[str], int | None]:
    """Every DOI and PubMed id the snapshot file holds (works, notices, Crossref records), and
    the rows of the newest full export imported."""
    from rwgate.sources.snapshot.rw_import import EXPORT_KIND
    from rwgate.sources.snapshot.schema import connect_ro

    conn = connect_ro(path)
    try:
        dois = conn.execute(
            "SELECT work_doi FROM notices WHERE work_doi IS NOT NULL"
            " UNION SELECT notice_doi FROM notices WHERE notice_doi IS NOT NULL"
            " UNION SELECT doi FROM works"
        ).fetchall()
        columns = {r[1] for r in conn.execute("PRAGMA table_info(notices)")}
        pmid_sql = "SELECT work_pmid FROM notices WHERE work_pmid IS NOT NULL"
        if "notice_pmid" in columns:
            pmid_sql += " UNION SELECT notice_pmid FROM notices WHERE notice_pmid IS NOT NULL"
        pmids = conn.execute(pmid_sql).fetchall()
        export = conn.execute(
            "SELECT rows FROM provenance WHERE kind = ? ORDER BY id DESC LIMIT 1", (EXPORT_KIND,)
        ).fetchone()
    finally:
        conn.close()
    rows = int(export[0]) if export and export[0] is not None else None
    return sorted(d for (d,) in dois if d), sorted(p for (p,) in pmids if p), rows


def _row(kind: str, ident: str, cited: Citation) -> dict[str, Any]:
    from rwgate.contract.evidence import deciding_notice

    status = str(cited.status)
    if kind == "pmid" and status == "no_doi":  # check's word for "the PubMed id proved nothing"
        status = "unverified"
    notice = deciding_notice(cited) if cited.notices else None
    return {
        "kind": kind,
        "id": ident,
        "status": status,
        "flag_rank": FLAGGED_STATUSES.index(status) if status in FLAGGED_STATUSES else None,
        "notice_type": notice.type if notice else None,
        "notice_doi": notice.doi if notice else None,
        "notice_date": notice.date.isoformat() if notice and notice.date else None,
        "record_id": notice.record_id if notice else None,
        "source": ";".join(notice.source) if notice else None,
        "n_notices": len(cited.notices),
    }


def build(snapshot: Path) -> VerdictTable:
    """Judge every work of ``snapshot`` with :func:`rwgate.core.check` (offline, snapshot only).
    Raises :class:`~rwgate.sources.snapshot.source.SnapshotError` without a usable snapshot: a
    screen without its registry would call everything unverified, which is no screen at all."""
    from rwgate.contract.models import Reference
    from rwgate.core import check
    from rwgate.settings.config import Settings
    from rwgate.sources import open_sources
    from rwgate.sources.snapshot.source import Snapshot, SnapshotError

    with Snapshot(snapshot) as snap:
        full = snap.is_registry
        as_of = snap.info().as_of
    dois, pmids, export_rows = _identifiers(snapshot)
    refs = [Reference(key=f"doi:{d}", doi=d) for d in dois]
    refs += [Reference(key=f"pmid:{p}", pmid=p) for p in pmids]
    settings = Settings(offline=True, no_cache=True, snapshot=snapshot)
    sources = open_sources(settings, family=(Snapshot,))
    try:
        if not sources.sources:
            raise SnapshotError(f"{snapshot}: " + "; ".join(sources.warnings))
        result = check(refs, settings, sources=sources)
    finally:
        sources.close()
    day = as_of.date() if as_of else None
    rows = []
    works = {}
    for ref, cited in zip(refs, result.citations, strict=True):
        kind, ident = ref.key.split(":", 1)
        row = _row(kind, ident, cited)
        row["snapshot_date"] = day.isoformat() if day else None
        row["full_export"] = full
        rows.append(row)
        if row["flag_rank"] is not None:
            works[ref.key] = (cited.title, cited.journal, cited.year)
    return VerdictTable(snapshot, day, full, export_rows, rows, works)


NAMES: tuple[tuple[str, str], ...] = (
    ("title", "VARCHAR"),
    ("journal", "VARCHAR"),
    ("year", "INTEGER"),
)
"""The columns a cached table adds for the summary's names of flagged works (not the engine's)."""


def write_parquet(table: VerdictTable, path: Path, names: bool = False) -> None:
    """The table as Parquet (through DuckDB, from JSON lines: no Arrow, no pandas needed),
    atomically: a temporary name renamed into place. ``names``: with the flagged works' titles,
    journals and years (:data:`NAMES`)."""
    import os
    import tempfile

    import duckdb

    from rwgate.frontends.screen.doisql import lit

    cols = COLUMNS + NAMES if names else COLUMNS
    columns = "{" + ", ".join(f"'{name}': '{kind}'" for name, kind in cols) + "}"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tempfile.TemporaryDirectory(prefix="rwgate-verdicts-") as folder:
        lines = Path(folder) / "verdicts.jsonl"
        with lines.open("w", encoding="ascii") as out:
            for row in table.rows:
                if names:
                    key = f"{row['kind']}:{row['id']}"
                    title, journal, year = table.works.get(key, (None, None, None))
                    row = {**row, "title": title, "journal": journal, "year": year}
                out.write(json.dumps(row, ensure_ascii=True) + "\n")
        with duckdb.connect() as con:
            con.execute(
                f"COPY (SELECT * FROM read_json({lit(str(lines))}, format = 'newline_delimited',"
                f" columns = {columns}) ORDER BY kind, id) TO {lit(str(tmp))}"
                " (FORMAT parquet, COMPRESSION zstd)"
            )
    os.replace(tmp, path)
