"""`rwgate screen` on tables as spreadsheets and scripts write them (issue 47), through the command.

On main a CSV's header was split on ``,`` by the screen while DuckDB read the rows: Excel's "CSV
UTF-8" (a BOM) was refused, naming the column its BOM (a traceback from DuckDB's binder), ``;``,
tab, Windows-1252 and UTF-16 tables were refused; rows after an unclosed quote vanished (5 rows
citing 4 retracted works screened as "3 references, 2 flagged", exit 0); ``PMID: N`` was
malformed, and a Parquet list of DOIs was one reference. Each table here is screened by the real
command and its counts are those of ``rwgate check --offline`` over the same references (the
references as check reads them), every record of the file accounted for.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from rwgate.contract.models import Reference
from rwgate.core import check
from rwgate.settings.config import Settings
from rwgate.sources.snapshot.source import import_files

ROOT = Path(__file__).resolve().parents[2]
RW = ROOT / "tests" / "fixtures" / "rw" / "rw-extract-2025.csv"
# Works the extract lists as retracted (10.1155/2021/1546343 is PubMed 34938348).
RETRACTED = ("10.1063/5.0182988", "10.3390/coatings11121555", "10.1155/2022/9646261",
             "10.1155/2022/6830608")  # fmt: skip
PMIDS = ("34938348", "35875750", "35898481")
UNLISTED = "10.9999/unlisted.1"


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("snap") / "snapshot.sqlite"
    assert not import_files(path, [RW]).failed
    return path


def _screen(snapshot: Path, table: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rwgate", "screen", str(table), "--out",
         str(table.with_suffix(".out")), "--snapshot", str(snapshot), *flags],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _summary(table: Path) -> dict:
    return json.loads((table.with_suffix(".out") / "summary.json").read_text(encoding="utf-8"))


def _checked(snapshot: Path, refs: list[tuple[str | None, str | None]]) -> dict[str, int]:
    """Statuses ``rwgate check --offline`` gives the references (DOI, PubMed id as check reads
    it: digits)."""
    settings = Settings(offline=True, no_cache=True, snapshot=snapshot)
    made = [Reference.as_written(f"r{i}", d, pmid=p) for i, (d, p) in enumerate(refs)]
    return dict(Counter(str(c.status) for c in check(made, settings).citations))


def _agrees(
    snapshot: Path, table: Path, done: subprocess.CompletedProcess[str], refs: list, records: int
) -> dict:
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    summary = _summary(table)
    assert summary["summary"]["by_status"] == _checked(snapshot, refs)
    assert summary["summary"]["references"] == len(refs)
    (counts,) = summary["files"]
    assert counts["records"] == records, counts
    assert counts["records"] == counts["screened"] + counts["unusable"]
    return summary


ROWS = [(f"p{i}", doi) for i, doi in enumerate([*RETRACTED, UNLISTED])]
REFS = [(doi, None) for _, doi in ROWS]


@pytest.mark.parametrize(
    ("name", "delimiter", "encoding", "newline", "flags"),
    [
        ("excel-utf8-bom.csv", ",", "utf-8-sig", "\r\n", []),
        ("excel-semicolon.csv", ";", "utf-8-sig", "\r\n", []),
        ("tabs.tsv", "\t", "utf-8", "\n", []),
        ("unicode-text.txt", "\t", "utf-16", "\r\n", []),  # Excel's "Unicode text"
        ("windows.csv", ";", "cp1252", "\r\n", ["--encoding", "windows-1252"]),
    ],
)
def test_spreadsheet_exports_are_read(
    snapshot: Path,
    tmp_path: Path,
    name: str,
    delimiter: str,
    encoding: str,
    newline: str,
    flags: list[str],
) -> None:
    lines = [delimiter.join(["citing", "title", "doi"])]
    lines += [delimiter.join([c, "“Café” études", d]) for c, d in ROWS]
    table = tmp_path / name
    table.write_bytes(newline.join(lines).encode(encoding) + newline.encode(encoding))
    done = _screen(snapshot, table, *flags)
    summary = _agrees(snapshot, table, done, REFS, len(ROWS))
    assert summary["columns"][0]["columns"]["citing"] == "citing"
    assert f"{table}: 5 records read, 5 screened, 0 unusable" in done.stdout
    assert "4 flagged" in done.stdout


def test_a_windows_1252_table_without_its_encoding_is_one_line(
    snapshot: Path, tmp_path: Path
) -> None:
    table = tmp_path / "windows.csv"
    table.write_bytes("citing;doi\r\np1;10.1/“x”\r\n".encode("cp1252"))
    done = _screen(snapshot, table)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert str(table) in line and "--encoding" in line


def test_a_column_named_with_its_bom_is_one_line(snapshot: Path, tmp_path: Path) -> None:
    """Main told the user the column was ``\\ufeffciting``; naming it so was a traceback."""
    table = tmp_path / "bom.csv"
    table.write_bytes("citing,doi\r\np1,10.1/x\r\n".encode("utf-8-sig"))
    done = _screen(snapshot, table, "--column", "citing=\ufeffciting")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "no column" in line and "its columns are citing, doi" in line


def test_an_unclosed_quote_costs_its_row_only(snapshot: Path, tmp_path: Path) -> None:
    """Five rows citing four retracted works, a notes cell of the first opening a quote it never
    closes, beside a well-quoted cell: on main "3 references, 2 flagged", exit 0."""
    table = tmp_path / "notes.csv"
    rows = ['p0,10.9999/unlisted.0,"Smith, J"', f'p1,{UNLISTED},"see the erratum']
    rows += [f"p{i + 2},{doi},ok" for i, doi in enumerate(RETRACTED)]
    table.write_text("citing,doi,notes\n" + "\n".join(rows) + "\n", encoding="utf-8")
    done = _screen(snapshot, table)
    refs = [("10.9999/unlisted.0", None)] + [(d, None) for d in RETRACTED]
    summary = _agrees(snapshot, table, done, refs, 6)
    assert summary["files"][0]["unusable"] == 1
    (bad,) = [r for r in summary["bad_rows"]["by_reason"] if "parse" in r["reason"]]
    assert bad["sample"][0]["line"] == 3
    assert bad["sample"][0]["value"] == f'p1,{UNLISTED},"see the erratum'
    assert "4 flagged" in done.stdout and "1 unusable" in done.stdout


def test_newlines_in_cells_crlf_blank_lines_and_no_final_newline(
    snapshot: Path, tmp_path: Path
) -> None:
    table = tmp_path / "multi.csv"
    text = (
        "citing,notes,doi\r\n"
        f'p1,"two\r\nlines",{RETRACTED[0]}\r\n'
        "\r\n"
        f'p2,"a\r\n\r\nparagraph",{RETRACTED[1]}\r\n'
        f"p3,too,many,{RETRACTED[2]}\r\n"
        f'p4,"""quoted""",{RETRACTED[3]}'
    )
    table.write_bytes(text.encode("utf-8"))
    done = _screen(snapshot, table)
    refs = [(RETRACTED[0], None), (RETRACTED[1], None), (RETRACTED[3], None)]
    summary = _agrees(snapshot, table, done, refs, 4)
    assert summary["files"][0]["unusable"] == 1
    assert summary["files"][0]["lines"] is None  # a CSV's lines: not counted by the one pass


def test_pubmed_ids_as_people_write_them(snapshot: Path, tmp_path: Path) -> None:
    table = tmp_path / "pmids.csv"
    cells = [f"PMID: {PMIDS[0]}", f"pmid:{PMIDS[1]}", f" {PMIDS[2]} "]
    table.write_text(
        "citing,pmid\n" + "\n".join(f"p{i},{c}" for i, c in enumerate(cells)) + "\n",
        encoding="utf-8",
    )
    done = _screen(snapshot, table)
    summary = _agrees(snapshot, table, done, [(None, p) for p in PMIDS], 3)
    assert summary["bad_rows"]["count"] == 0


@pytest.mark.parametrize("kind", ["BIGINT", "DOUBLE"])
def test_pubmed_ids_stored_as_numbers(snapshot: Path, tmp_path: Path, kind: str) -> None:
    """A PubMed id column of integers, or of floats (pandas writes one with gaps so)."""
    table = tmp_path / f"pmids-{kind}.parquet"
    con = duckdb.connect()
    con.execute(f"CREATE TABLE t (citing VARCHAR, cited_doi VARCHAR, cited_pmid {kind})")
    rows = [(f"p{i}", None, int(p)) for i, p in enumerate(PMIDS)] + [("q", RETRACTED[0], None)]
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    con.execute(f"COPY t TO '{table}' (FORMAT parquet)")
    done = _screen(snapshot, table)
    refs = [(None, p) for p in PMIDS] + [(RETRACTED[0], None)]
    summary = _agrees(snapshot, table, done, refs, 4)
    assert summary["bad_rows"]["count"] == 0


def test_a_parquet_list_of_dois_is_one_reference_each(snapshot: Path, tmp_path: Path) -> None:
    table = tmp_path / "lists.parquet"
    con = duckdb.connect()
    con.execute("CREATE TABLE t (citing VARCHAR, dois VARCHAR[])")
    lists = [[RETRACTED[0]], [RETRACTED[1], f"https://doi.org/{RETRACTED[2]}", UNLISTED],
             [f"doi:{RETRACTED[3]}"], []]  # fmt: skip
    con.executemany("INSERT INTO t VALUES (?, ?)", [(f"p{i}", v) for i, v in enumerate(lists)])
    con.execute(f"COPY t TO '{table}' (FORMAT parquet)")
    done = _screen(snapshot, table, "--doi-column", "dois")
    refs = [(d, None) for v in lists for d in v] + [(None, None)]  # an empty list: no DOI
    summary = _agrees(snapshot, table, done, refs, 4)
    assert summary["summary"]["flagged"] == 4


def test_a_cell_of_dois_split_at_the_list_separator(snapshot: Path, tmp_path: Path) -> None:
    table = tmp_path / "cells.csv"
    table.write_text(
        "citing,doi\n"
        f'p1,"{RETRACTED[0]}; {RETRACTED[1]};"\n'
        f"p2,{RETRACTED[2]}\n"
        f'p3,"doi:{RETRACTED[3]} ;{UNLISTED}"\n',
        encoding="utf-8",
    )
    done = _screen(snapshot, table, "--list-separator", ";")
    refs = [(d, None) for d in [*RETRACTED, UNLISTED]]
    _agrees(snapshot, table, done, refs, 3)


def test_an_empty_cell_under_the_list_separator_is_a_reference_without_a_doi(
    snapshot: Path, tmp_path: Path
) -> None:
    """Split at ``--list-separator``, an empty cell was no list at all: its record was counted
    as screened yet gave no reference (three references of four records). It is one reference
    without a DOI, as the same cell is without the flag and as an empty Parquet list is."""
    table = tmp_path / "gaps.csv"
    table.write_text(
        f'citing,doi\np1,"{RETRACTED[0]}; {RETRACTED[1]}"\np2,\np3,{RETRACTED[2]}\n',
        encoding="utf-8",
    )
    done = _screen(snapshot, table, "--list-separator", ";")
    refs = [(RETRACTED[0], None), (RETRACTED[1], None), (None, None), (RETRACTED[2], None)]
    summary = _agrees(snapshot, table, done, refs, 3)
    assert summary["summary"]["by_status"]["no_doi"] == 1


def _screen_many(
    snapshot: Path, tables: list[Path], out: Path, *flags: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rwgate", "screen", *map(str, tables), "--out", str(out),
         "--snapshot", str(snapshot), *flags],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_each_csv_file_is_accounted_for_by_the_screens_own_pass(
    snapshot: Path, tmp_path: Path
) -> None:
    """Three files of one header read together, once: each file's records counted as the
    screen read them (a list of two DOIs is one record), its unparseable records quoted with
    their lines; no file read a second time for a count of its lines (``lines`` is null)."""
    files = {
        "a.csv": f'citing,doi\np1,"{RETRACTED[0]};{RETRACTED[1]}"\np2,{UNLISTED}\n',
        "b.csv": f"citing,doi\np3,{RETRACTED[2]},extra\np4,{RETRACTED[3]}\np5\n",
        "c.csv": "citing,doi\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    done = _screen_many(snapshot, [tmp_path / "*.csv"], out, "--list-separator", ";")
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    counts = {Path(f["file"]).name: f for f in summary["files"]}
    assert {n: (c["records"], c["screened"], c["unusable"]) for n, c in counts.items()} == {
        "a.csv": (2, 2, 0),
        "b.csv": (3, 1, 2),
        "c.csv": (0, 0, 0),
    }
    assert all(c["lines"] is None for c in counts.values())
    (bad,) = [r for r in summary["bad_rows"]["by_reason"] if "parse" in r["reason"]]
    assert [(Path(s["file"]).name, s["line"]) for s in bad["sample"]] == [
        ("b.csv", 2),
        ("b.csv", 4),
    ]
    assert summary["summary"]["references"] == 4
    assert summary["summary"]["by_status"] == _checked(
        snapshot,
        [(RETRACTED[0], None), (RETRACTED[1], None), (UNLISTED, None), (RETRACTED[3], None)],
    )


def test_an_unclosed_quote_beside_other_files_costs_its_row_only(
    snapshot: Path, tmp_path: Path
) -> None:
    """The screen's pass finds the unterminated quote; the files are then read before a second
    screen, which reads the lines after the quote again: every file's counts as in one file."""
    (tmp_path / "a.csv").write_text(f"citing,doi\np1,{RETRACTED[0]}\n", encoding="utf-8")
    (tmp_path / "b-notes.csv").write_text(
        f'citing,doi,notes\np2,{UNLISTED},"never closed\np3,{RETRACTED[1]},ok\n'
        f"p4,{RETRACTED[2]},ok\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    done = _screen_many(snapshot, [tmp_path / "a.csv", tmp_path / "b-notes.csv"], out)
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    got = [
        (Path(f["file"]).name, f["records"], f["screened"], f["unusable"]) for f in summary["files"]
    ]
    assert got == [("a.csv", 1, 1, 0), ("b-notes.csv", 3, 2, 1)]
    assert summary["summary"]["references"] == 3 and summary["summary"]["flagged"] == 3


def test_a_dated_csv_is_counted_in_the_dates_pass(snapshot: Path, tmp_path: Path) -> None:
    """With a citing-date column the pass that reads the distinct dates counts the records
    (cheaper than a second grouping in the main pass): the same accounting, the file read by
    the screen alone."""
    table = tmp_path / "dated.csv"
    table.write_text(
        f"citing,doi,year\np1,{RETRACTED[0]},2020\np2,{RETRACTED[1]},2021,x\n"
        f"p3,{RETRACTED[2]},2022\np4\np5,{UNLISTED},\n",
        encoding="utf-8",
    )
    done = _screen(snapshot, table)
    refs = [(RETRACTED[0], None), (RETRACTED[2], None), (UNLISTED, None)]
    summary = _agrees(snapshot, table, done, refs, 5)
    assert summary["files"][0]["unusable"] == 2 and summary["files"][0]["lines"] is None
    (bad,) = [r for r in summary["bad_rows"]["by_reason"] if "parse" in r["reason"]]
    assert [s["line"] for s in bad["sample"]] == [3, 5]
    assert summary["flagged_by_citing_year"] == [[2020, 1], [2022, 1]]


PREPRINTS = (
    "10.48550/arXiv.1706.03762",
    "https://doi.org/10.2139/SSRN.3456789",
    "10.1101/2020.03.22.002386",
    "10.1101/2021.05.04.442604v2",
    "10.31219/osf.io/abcde",
)
NOT_PREPRINTS = ("10.1101/gr.123456.111", "10.1101/cshperspect.a000001", "10.9999/arxiv.1",
                 "10.2139", UNLISTED)  # fmt: skip


def test_against_a_full_export_an_unlisted_preprint_is_unverified_as_in_check(
    tmp_path: Path,
) -> None:
    """The screen's one pattern for preprint DOIs (arXiv's DataCite DOIs, SSRN, OSF, bioRxiv's
    and medRxiv's but not CSHL's journals under 10.1101) gives check's statuses, row for row."""
    full = tmp_path / "full.sqlite"
    assert not import_files(full, [RW], allow_shrink=True).failed  # stands for the whole export
    dois = [*RETRACTED, *PREPRINTS, *NOT_PREPRINTS]
    table = tmp_path / "preprints.csv"
    table.write_text(
        "citing,doi\n" + "".join(f"p{i},{d}\n" for i, d in enumerate(dois)), encoding="utf-8"
    )
    summary = _agrees(full, table, _screen(full, table), [(d, None) for d in dois], len(dois))
    by_status = summary["summary"]["by_status"]
    assert by_status["unverified"] == len(PREPRINTS), by_status
    assert by_status["clean"] == len(NOT_PREPRINTS) - 1, by_status  # "10.2139" is no DOI
