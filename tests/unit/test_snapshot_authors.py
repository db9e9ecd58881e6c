"""Schema 3 keeps each work's author names (the MCP author search offline, issue 46); a schema-2
snapshot is still read, and the next import of the same file fills the names in."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from rwgate.sources.snapshot import queries as snapshot_queries
from rwgate.sources.snapshot.source import Snapshot, import_files

RW = Path(__file__).resolve().parents[1] / "fixtures" / "rw"
FILES = [RW / "rw-extract-2025.csv", RW / "wakefield-1998-lancet.json"]


def _wakefield(snap: Snapshot) -> list[str]:
    found = snapshot_queries.works_by_author(snap, lambda n: n.endswith("Wakefield"))
    return [w.doi for w in found]


def test_rows_and_records_keep_their_authors(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    import_files(path, FILES)
    with Snapshot(path) as snap:
        assert snap.schema_version == 3 and snap.has_authors
        rw = snap.read("SELECT authors FROM notices WHERE record_id = '4036' AND key LIKE 'rw:%'")
        assert rw[0][0].startswith("Andrew J Wakefield;Simon Harry Murch;")
        cr = snap.read("SELECT authors FROM works")
        assert cr[0][0].startswith("AJ Wakefield;SH Murch;")
        assert _wakefield(snap) == ["10.1016/s0140-6736(97)11096-0"]


def test_a_schema_2_snapshot_is_read_and_filled_in_by_the_next_import(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    import_files(path, FILES)
    db = sqlite3.connect(path)  # what rwgate wrote before author names were kept
    for table in ("notices", "works"):
        db.execute(f"ALTER TABLE {table} DROP COLUMN authors")
    db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    db.execute("UPDATE provenance SET etag = 'x'")
    db.commit()
    db.close()
    with Snapshot(path) as old:
        assert not old.has_authors and old.query("10.1016/s0140-6736(97)11096-0").notices
    result = import_files(path, FILES)
    assert result.rows > 0 and not any(s.unchanged for s in result.sources)  # read again
    with Snapshot(path) as new:
        assert new.schema_version == 3 and _wakefield(new) == ["10.1016/s0140-6736(97)11096-0"]
        assert {r[0] for r in new.read("SELECT etag FROM provenance")} == {None}
