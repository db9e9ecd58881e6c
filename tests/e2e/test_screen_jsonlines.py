"""`rwgate screen` on JSON lines tables: every line accounted for (issue 47, JSON lines as CSV).

On main a JSON lines table was read with ``ignore_errors = true``: a line that was not JSON
vanished without a word, and one line that was JSON but not an object (``[1,2]``) made DuckDB
read the whole file as one column of JSON values ("no citing-work column ... its columns are
json", exit 2). Here each non-blank line is a record: an object is screened, anything else is an
unusable record quoted with its line number, and the counts are checked against the file's
lines counted apart (here, by Python, line by line).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rwgate.sources.snapshot.source import import_files

ROOT = Path(__file__).resolve().parents[2]
RW = ROOT / "tests" / "fixtures" / "rw" / "rw-extract-2025.csv"
RETRACTED = ("10.1063/5.0182988", "10.3390/coatings11121555", "10.1155/2022/9646261",
             "10.1155/2022/6830608")  # fmt: skip


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("snap") / "snapshot.sqlite"
    assert not import_files(path, [RW]).failed
    return path


def _lines() -> tuple[list[str], dict[int, str]]:
    """The file's lines, and the unusable ones by line number (from 1)."""
    good = [json.dumps({"citing": f"w{i}", "cited_doi": f"10.9999/clean.{i}"}) for i in range(40)]
    lines = [
        json.dumps({"citing": "r1", "cited_doi": RETRACTED[0]}),
        "",  # blank: not a record
        '{"citing": "r2", "cited_doi": "' + RETRACTED[1] + '"',  # no closing brace
        json.dumps({"citing": "r3", "cited_doi": [RETRACTED[2], RETRACTED[3]]}) + "\r",  # CRLF
        *good[:20],
        "[1, 2]",  # JSON, not an object
        "   ",  # white space only: not a record
        "citing,cited_doi",  # a CSV header pasted in
        '"just a string"',
        *good[20:],
        '{"citing": "r4", "cited_doi": "' + RETRACTED[1] + '"}',
    ]
    bad = {n: line for n, line in enumerate(lines, 1) if line.strip() and _not_object(line)}
    return lines, bad


def _not_object(line: str) -> bool:
    try:
        return not isinstance(json.loads(line), dict)
    except ValueError:
        return True


def _screen(snapshot: Path, table: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rwgate", "screen", str(table), "--out", str(out),
         "--snapshot", str(snapshot)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_every_json_line_is_screened_or_quoted(snapshot: Path, tmp_path: Path, gz: bool) -> None:
    lines, bad = _lines()
    text = "\n".join(lines) + "\n"
    table = tmp_path / ("refs.jsonl.gz" if gz else "refs.jsonl")
    table.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    done = _screen(snapshot, table, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    records = sum(1 for line in lines if line.strip())  # the independent count
    assert len(bad) == 4 and records == 47
    usable = records - len(bad)
    assert f"{table}: {records} records read, {usable} screened, {len(bad)} unusable" in done.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["files"] == [
        {"file": str(table), "records": records, "screened": usable, "unusable": len(bad),
         "lines": records}
    ]  # fmt: skip
    # r1, r3 (two) and r4 cite retracted works; r2's line is unusable, not screened.
    assert summary["summary"]["references"] == usable + 1
    assert summary["summary"]["flagged"] == 4
    assert summary["summary"]["citing_works"] == usable
    (reason,) = summary["bad_rows"]["by_reason"]
    assert reason["count"] == len(bad) == summary["bad_rows"]["count"]
    quoted = {s["line"]: s["value"] for s in reason["sample"]}
    assert quoted == {n: bad[n] for n in sorted(bad)}
    why = {s["line"]: s["why"] for s in reason["sample"]}
    assert why[3].startswith("not JSON")
    assert "array, not an object" in " ".join(why.values())


def test_a_json_lines_file_of_bad_lines_only_is_accounted_for(
    snapshot: Path, tmp_path: Path
) -> None:
    table = tmp_path / "refs.jsonl"
    table.write_text(
        json.dumps({"citing": "r1", "cited_doi": RETRACTED[0]}) + "\nnot json\n", "utf-8"
    )
    done = _screen(snapshot, table, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert f"{table}: 2 records read, 1 screened, 1 unusable" in done.stdout
    assert f"{table} line 2: 'not json'" in done.stdout
