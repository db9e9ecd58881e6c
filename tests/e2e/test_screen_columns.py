"""`rwgate screen` reads a table fail-closed (issue 37), through the real command.

On 2c1189c a CSV ``citing,doi`` holding two retracted DOIs screened as "0 flagged", exit 0 (every
row ``no_doi``); so did a column named by a flag that the table lacks, a DOI column of titles, a
PubMed id column named ``PMID``; a table without a date column reported "0 cited after the
notice" for "not known". Each is a test here, and so is the one line a missing extra gives.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rwgate.sources.snapshot.source import import_files

ROOT = Path(__file__).resolve().parents[2]
RW = ROOT / "tests" / "fixtures" / "rw" / "rw-extract-2025.csv"
# Two works the Retraction Watch extract lists as retracted (notices 2025-10-24, 2025-11-24),
# and the PubMed id of a third (10.1155/2021/1546343, retracted 2023-12-06).
RETRACTED = ("10.1063/5.0182988", "10.3390/coatings11121555")
PMID = "34938348"


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The extract imported as what it is: not a full export (unlisted works unverified)."""
    path = tmp_path_factory.mktemp("snap") / "snapshot.sqlite"
    result = import_files(path, [RW])
    assert not result.failed
    return path


def _screen(snapshot: Path, table: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rwgate", "screen", str(table), "--out",
         str(table.with_suffix(".out")), "--snapshot", str(snapshot), *flags],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _table(tmp_path: Path, text: str, name: str = "refs.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _summary(table: Path) -> dict:
    return json.loads((table.with_suffix(".out") / "summary.json").read_text(encoding="utf-8"))


def test_a_doi_column_named_doi_is_read(snapshot: Path, tmp_path: Path) -> None:
    """The issue's reproduction: ``citing,doi`` with two retracted works."""
    table = _table(tmp_path, f"citing,doi\np1,{RETRACTED[0]}\np2,{RETRACTED[1]}\n")
    done = _screen(snapshot, table)
    assert done.returncode == 0, done.stderr
    assert "2 flagged (2 citing works)" in done.stdout
    assert "DOI 'doi' (a common name)" in done.stdout
    summary = _summary(table)
    assert summary["summary"]["by_status"] == {"retracted": 2}
    assert summary["columns"][0]["columns"]["doi"] == "doi"
    assert summary["columns"][0]["found"]["doi"] == "a common name"


def _one_line_error(done: subprocess.CompletedProcess[str], table: Path) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert str(table) in lines[0] and "Traceback" not in done.stderr
    assert not (table.with_suffix(".out") / "summary.json").exists()
    return lines[0]


@pytest.mark.parametrize(
    ("text", "flags", "says"),
    [
        # no DOI column at all (nor a PubMed id one)
        ("citing,reference\np1,{doi}\n", [], ["no cited-DOI column", "citing, reference",
                                               "--doi-column"]),
        # two candidates
        ("citing,DOI,reference_doi\np1,{doi},{doi}\n", [], ["2 columns could hold the cited-DOI",
                                                            "DOI, reference_doi",
                                                            "--doi-column"]),
        # a DOI column that holds titles
        ("citing,doi\np1,A study of things\np2,Another study\np3,{doi}\n", [],
         ["'doi' does not hold DOIs", "2 of the first 3", "--doi-column"]),
        # a column a flag names that the table lacks
        ("citing,doi\np1,{doi}\n", ["--doi-column", "cited"], ["no column 'cited'",
                                                               "--doi-column", "citing, doi"]),
        ("citing,doi\np1,{doi}\n", ["--column", "pmid=PMID"], ["no column 'PMID'",
                                                               "--pmid-column"]),
        ("citing,doi\np1,{doi}\n", ["--date-column", "year"], ["no column 'year'"]),
        # no citing work
        ("reference_doi\n{doi}\n", [], ["no citing-work column", "--citing-column"]),
        # two candidate dates
        ("citing,doi,year,date\np1,{doi},2020,2020-01-01\n", [], ["citing-date (year, date)",
                                                                  "--date-column"]),
    ],
)  # fmt: skip
def test_a_table_the_screen_cannot_read_is_one_line(
    snapshot: Path, tmp_path: Path, text: str, flags: list[str], says: list[str]
) -> None:
    table = _table(tmp_path, text.format(doi=RETRACTED[0]))
    line = _one_line_error(_screen(snapshot, table, *flags), table)
    for words in says:
        assert words in line, line


def test_a_pubmed_column_named_pmid_is_read(snapshot: Path, tmp_path: Path) -> None:
    """A reference known only by PubMed id is judged by it, not screened as ``no_doi``."""
    table = _table(tmp_path, f"citing,cited_doi,PMID\np1,,{PMID}\np2,{RETRACTED[0]},\n")
    done = _screen(snapshot, table)
    assert done.returncode == 0, done.stderr
    summary = _summary(table)
    assert summary["columns"][0]["columns"]["pmid"] == "PMID"
    assert summary["summary"]["by_status"] == {"retracted": 2}


def test_a_table_of_pubmed_ids_alone_is_screened(snapshot: Path, tmp_path: Path) -> None:
    table = _table(tmp_path, f"citing,pmid\np1,{PMID}\n")
    done = _screen(snapshot, table)
    assert done.returncode == 0, done.stderr
    assert _summary(table)["summary"]["by_status"] == {"retracted": 1}


def test_without_a_date_column_cited_after_the_notice_is_not_known(
    snapshot: Path, tmp_path: Path
) -> None:
    table = _table(tmp_path, f"citing,cited_doi\np1,{RETRACTED[0]}\n")
    done = _screen(snapshot, table)
    assert done.returncode == 0, done.stderr
    assert "cited after the notice not known" in done.stdout
    assert "no citing-date column" in done.stdout
    assert _summary(table)["summary"]["cited_after_notice"] is None


def test_a_date_column_under_a_common_name_is_read(snapshot: Path, tmp_path: Path) -> None:
    table = _table(tmp_path, f"citing,doi,year\np1,{RETRACTED[0]},2026\np2,{RETRACTED[1]},2019\n")
    done = _screen(snapshot, table)
    assert done.returncode == 0, done.stderr
    summary = _summary(table)
    assert summary["columns"][0]["columns"]["date"] == "year"
    assert summary["summary"]["cited_after_notice"] == 1  # 2026 after 2025-10-24; 2019 before


def test_flags_name_the_columns(snapshot: Path, tmp_path: Path) -> None:
    table = _table(tmp_path, f"work,DOI,reference_doi\np1,{RETRACTED[0]},not a doi\n")
    done = _screen(snapshot, table, "--column", "doi=DOI", "--citing-column", "work")
    assert done.returncode == 0, done.stderr
    found = _summary(table)["columns"][0]["found"]
    assert found["doi"] == "named by --doi-column" and found["citing"] == "named by --citing-column"
    assert _summary(table)["summary"]["flagged"] == 1


def test_an_unusable_row_is_counted_with_its_row_and_value(snapshot: Path, tmp_path: Path) -> None:
    import duckdb

    table = tmp_path / "refs.parquet"
    rows = [("p1", RETRACTED[0]), ("p2", "10.1234/fine"), ("p3", "doi: oops"), (None, RETRACTED[1])]
    con = duckdb.connect()
    con.execute("CREATE TABLE t (citing VARCHAR, cited_doi VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?)", rows)
    con.execute(f"COPY t TO '{table}' (FORMAT parquet)")
    done = _screen(snapshot, table)
    assert done.returncode == 0, done.stderr
    bad = _summary(table)["bad_rows"]
    assert bad["count"] == 2
    by = {r["reason"]: r for r in bad["by_reason"]}
    assert by["malformed DOI"]["sample"] == [{"value": "doi: oops", "file": str(table), "row": 4}]
    assert by["no citing work"]["sample"][0]["row"] == 5  # as a spreadsheet: the header is 1
    assert f"{table} row 4: 'doi: oops'" in done.stdout


@pytest.mark.parametrize(
    ("hidden", "flags", "extra"),
    [("duckdb", [], "screen"), ("pyspark", ["--engine", "spark"], "spark")],
)
def test_a_missing_extra_is_one_line(
    snapshot: Path, tmp_path: Path, hidden: str, flags: list[str], extra: str
) -> None:
    """The console entry (``rwgate.frontends.cli.main.main``) with the extra's module made
    unimportable."""
    table = _table(tmp_path, f"citing,doi\np1,{RETRACTED[0]}\n")
    code = (
        f"import sys; sys.modules[{hidden!r}] = None; from rwgate.frontends.cli.main import main;"
        " sys.exit(main(sys.argv[1:]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "screen", str(table), "--out", str(tmp_path / "o"),
         "--snapshot", str(snapshot), *flags],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"'.[{extra}]'" in lines[0] and "rwgate screen" in lines[0]


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_files_with_different_columns_are_each_read_by_their_own(
    snapshot: Path, tmp_path: Path, kind: str
) -> None:
    """Two tables screened together, one naming its DOI column ``cited_doi``, the other
    ``doi``: each is read by its own header, not the first file's (NULLs, ``no_doi``)."""
    import duckdb

    first = _table(tmp_path, f"citing,cited_doi\np1,{RETRACTED[0]}\n", "a.csv")
    second = _table(tmp_path, f"citing,doi\np2,{RETRACTED[1]}\n", "b.csv")
    tables = [first, second]
    if kind == "parquet":
        con = duckdb.connect()
        tables = [t.with_suffix(".parquet") for t in (first, second)]
        for src, dst in zip((first, second), tables, strict=True):
            con.execute(f"COPY (SELECT * FROM read_csv('{src}')) TO '{dst}' (FORMAT parquet)")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "rwgate", "screen", *map(str, tables), "--out", str(out),
         "--snapshot", str(snapshot)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["summary"]["by_status"] == {"retracted": 2}
    assert [c["columns"]["doi"] for c in summary["columns"]] == ["cited_doi", "doi"]


def test_the_readme_example_screens_the_sample_the_honest_way(tmp_path: Path) -> None:
    """The README's commands: the extract imported as an extract, so every work it does not
    list is unverified, and the output says why."""
    snap = tmp_path / "rw.sqlite"
    run = [sys.executable, "-m", "rwgate"]
    imported = subprocess.run([*run, "data", "import", str(RW), "--snapshot", str(snap)],
                              capture_output=True, text=True, timeout=300)  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    sample = ROOT / "examples" / "screen"
    done = subprocess.run(
        [*run, "screen", str(sample / "*.csv"), str(sample / "crossref-works-sample.jsonl.gz"),
         "--snapshot", str(snap), "--out", str(tmp_path / "screen")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "screen" / "summary.json").read_text(encoding="utf-8"))
    assert summary["sources"][0]["unlisted_work_is"] == "unverified"
    assert summary["summary"]["unverified"] > 0 and "clean" not in summary["summary"]["by_status"]
    assert "WARNING: the snapshot holds no full Retraction Watch export" in done.stdout


def test_a_sample_passed_off_as_the_full_export_is_warned_about(tmp_path: Path) -> None:
    """``--allow-shrink`` on the 39-row extract makes it the registry of record: every unlisted
    work is called clean. The screen says so, loudly."""
    snap = tmp_path / "shrunk.sqlite"
    assert not import_files(snap, [RW], allow_shrink=True).failed
    table = _table(tmp_path, f"citing,doi\np1,{RETRACTED[0]}\np2,10.1234/unlisted\n")
    done = _screen(snap, table)
    assert done.returncode == 0, done.stderr
    assert "WARNING: the snapshot's 'full export' has only 39 rows" in done.stdout
    assert "--allow-shrink" in done.stdout and "called clean" in done.stdout
    assert _summary(table)["sources"][0]["partial_registry"] is True


def test_an_unusable_csv_row_is_numbered(snapshot: Path, tmp_path: Path) -> None:
    """A CSV reader tells no row numbers: the quoted rows are found again in the file."""
    text = f"citing,doi\np1,{RETRACTED[0]}\np2,doi: oops\n,{RETRACTED[1]}\np4,{RETRACTED[1]}\n"
    table = _table(tmp_path, text)
    done = _screen(snapshot, table)
    assert done.returncode == 0, done.stderr
    by = {r["reason"]: r for r in _summary(table)["bad_rows"]["by_reason"]}
    assert by["malformed DOI"]["sample"] == [{"value": "doi: oops", "file": str(table), "row": 3}]
    assert by["no citing work"]["sample"][0]["row"] == 4  # not row 5, which cites the same DOI
    assert f"{table} row 3: 'doi: oops'" in done.stdout


def test_each_unusable_row_names_its_own_file(snapshot: Path, tmp_path: Path) -> None:
    """Rows carry their file's number through the screen, not its name; the quoted rows get the
    name back: two CSV files and a Parquet file (two input groups), one bad row in each."""
    import duckdb

    good = "".join(f"p0,10.1234/fine.{i}\n" for i in range(3))
    first = _table(tmp_path, f"citing,cited_doi\n{good}p1,{RETRACTED[0]}\np1,bad one\n", "a.csv")
    second = _table(tmp_path, f"citing,cited_doi\n{good}p2,bad two\n", "b.csv")
    third = tmp_path / "c.parquet"
    duckdb.connect().execute(
        "COPY (SELECT * FROM (VALUES ('p3', '10.1234/a'), ('p3', '10.1234/b'), ('p3', 'bad three'))"
        f" AS t(citing, cited_doi)) TO '{third}' (FORMAT parquet)"
    )
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "rwgate", "screen", str(first), str(second), str(third),
         "--out", str(out), "--snapshot", str(snapshot)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    (bad,) = summary["bad_rows"]["by_reason"]
    got = {(s["value"], s["file"], s["row"]) for s in bad["sample"]}
    assert got == {
        ("bad one", str(first), 6), ("bad two", str(second), 5), ("bad three", str(third), 4)
    }  # fmt: skip


@pytest.mark.parametrize("container", ["csv", "parquet"])
def test_a_table_with_its_own_filename_and_file_index_columns(
    snapshot: Path, tmp_path: Path, container: str
) -> None:
    """Columns named ``filename`` and ``file_index`` are the table's (DuckDB's own columns of
    those names would give way to them): the screen reads them as any other column and still
    numbers its rows by file. Before, such a table was refused, or (once rows carried file
    numbers) a ``filename`` column ended in a traceback."""
    import duckdb

    table = _table(
        tmp_path,
        f"citing,doi,filename,file_index\np1,{RETRACTED[0]},a.pdf,7\np1,bad one,b.pdf,8\n",
        "own.csv",
    )
    if container == "parquet":
        csv, table = table, tmp_path / "own.parquet"
        duckdb.connect().execute(
            f"COPY (SELECT * FROM read_csv('{csv}', all_varchar = true)) TO '{table}'"
            " (FORMAT parquet)"
        )
        csv.unlink()
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "rwgate", "screen", str(table), "--out", str(out),
         "--snapshot", str(snapshot)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["summary"]["by_status"] == {"retracted": 1, "invalid_doi": 1}
    (bad,) = summary["bad_rows"]["by_reason"]
    assert bad["sample"] == [{"value": "bad one", "file": str(table), "row": 3}]
