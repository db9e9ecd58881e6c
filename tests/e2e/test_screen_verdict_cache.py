"""`rwgate screen` keeps the verdict table of a snapshot in the invoking user's cache folder
(issue 47 item 4): built once per snapshot, reused while the snapshot, rwgate's code and every
input of the build are as they were, built again when the snapshot changes (never stale), and
never kept for a snapshot it cannot identify. On main the table was judged again on every
screen, and nothing was kept.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from rwgate.sources.snapshot.source import import_files

ROOT = Path(__file__).resolve().parents[2]
RW = ROOT / "tests" / "fixtures" / "rw" / "rw-extract-2025.csv"
RETRACTED = "10.1063/5.0182988"  # listed as retracted by the extract
LATER = "10.5555/cache.later"  # retracted only by the row imported between two screens


def _crossref_retraction(doi: str) -> str:
    update = {"DOI": f"{doi}.notice", "type": "retraction", "source": "publisher",
              "label": "Retraction", "updated": {"date-parts": [[2024, 5, 6]]}}  # fmt: skip
    message = {"DOI": doi, "title": ["A later retraction"], "updated-by": [update]}
    return json.dumps({"status": "ok", "message-type": "work", "message": message})


def _screen(corpus: Path, out: Path, snapshot: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "rwgate", "screen", str(corpus), "--out", str(out),
         "--snapshot", str(snapshot)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return dict(json.loads((out / "summary.json").read_text(encoding="utf-8")))


def _entries(cache: Path) -> dict[str, int]:
    """The verdict cache's files and their inodes (a file written again is a new inode)."""
    folder = cache / "screen-verdicts"
    if not folder.is_dir():
        return {}
    return {p.name: p.stat().st_ino for p in folder.iterdir()}


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    snapshot = tmp_path / "data" / "snapshot.sqlite"
    snapshot.parent.mkdir()
    assert not import_files(snapshot, [RW]).failed
    corpus = tmp_path / "corpus" / "refs.csv"
    corpus.parent.mkdir()
    corpus.write_text(f"citing,cited_doi\nw1,{RETRACTED}\nw2,{LATER}\nw3,10.9999/unlisted\n")
    return snapshot, corpus


def test_the_verdict_table_is_kept_per_snapshot_and_never_stale(tmp_path: Path) -> None:
    snapshot, corpus = _setup(tmp_path)
    cache = Path(os.environ["RWGATE_CACHE_DIR"])  # the invoking user's (tests/conftest.py)
    assert _entries(cache) == {}
    beside = sorted(p.name for p in snapshot.parent.iterdir())
    first = _screen(corpus, tmp_path / "out1", snapshot)
    assert first["summary"]["flagged"] == 1
    assert first["summary"]["by_status"] == {"retracted": 1, "unverified": 2}
    kept = _entries(cache)
    assert sorted(Path(n).suffix for n in kept) == [".json", ".parquet"]
    # Nothing beside the references or the snapshot.
    assert sorted(p.name for p in corpus.parent.iterdir()) == ["refs.csv"]
    assert sorted(p.name for p in snapshot.parent.iterdir()) == beside

    # The same snapshot: the kept table is read, not written again.
    second = _screen(corpus, tmp_path / "out2", snapshot)
    assert second["summary"] == first["summary"]
    assert second["sources"] == first["sources"]
    assert _entries(cache) == kept

    # One more row imported: a new verdict at once, from a table built again.
    body = tmp_path / "later.json"
    body.write_text(_crossref_retraction(LATER), encoding="utf-8")
    assert not import_files(snapshot, [body]).failed
    third = _screen(corpus, tmp_path / "out3", snapshot)
    assert third["summary"]["flagged"] == 2
    assert third["summary"]["by_status"] == {"retracted": 2, "unverified": 1}
    assert third["sources"][0]["works"] == first["sources"][0]["works"] + 2  # work and notice
    assert len(_entries(cache)) > len(kept)


def test_a_snapshot_without_an_import_id_is_judged_each_time_never_kept(tmp_path: Path) -> None:
    snapshot, corpus = _setup(tmp_path)
    conn = sqlite3.connect(snapshot)  # as written before import ids existed
    conn.execute("PRAGMA user_version = 0")
    conn.execute("PRAGMA application_id = 0")
    conn.commit()
    conn.close()
    cache = Path(os.environ["RWGATE_CACHE_DIR"])
    got = _screen(corpus, tmp_path / "out", snapshot)
    assert got["summary"]["by_status"] == {"retracted": 1, "unverified": 2}
    assert not any(n.endswith(".json") for n in _entries(cache))
