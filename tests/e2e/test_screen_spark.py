"""`rwgate screen --engine spark` (issue 32): the same SQL text, transpiled by SQLGlot, gives on
Spark (local mode) exactly the outputs DuckDB gives, on a corpus holding every status, SICI and
PubMed cases, the OpenCitations CSV and the Crossref public data file in both of its forms.

One Spark session for the module (its start-up is the slow part)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import duckdb
import pytest
from test_screen import SAMPLE, _corpus, snapshot  # noqa: F401 (a fixture)

from conftest import require_tool
from rwgate.frontends.screen.run import ScreenOptions, ScreenResult, screen

OUTPUTS = ("flagged", "citing", "citations")


def _pyspark() -> None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        if os.environ.get("RWGATE_REQUIRE_TOOLS") == "1":
            pytest.fail("pyspark is not installed (RWGATE_REQUIRE_TOOLS=1)")
        pytest.skip("pyspark is not installed (scripts/install-test-tools installs it)")


@pytest.fixture(scope="module")
def both(snapshot: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, ScreenResult]:  # noqa: F811
    require_tool("java")
    _pyspark()
    folder = tmp_path_factory.mktemp("spark")
    inputs = [
        str(_corpus(snapshot, folder)),
        str(SAMPLE / "*.csv"),
        str(SAMPLE / "crossref-*.gz"),
    ]
    results = {}
    for engine in ("duckdb", "spark"):
        opts = ScreenOptions(inputs, folder / engine, snapshot, engine=engine,
                             all_citations=True, progress=False)  # fmt: skip
        results[engine] = screen(opts)
    return results


def _rows(path: Path) -> list[tuple[Any, ...]]:
    """The rows of a Parquet output (a file from DuckDB, a folder of parts from Spark), sorted."""
    source = f"{path}/*.parquet" if path.is_dir() else str(path)
    rows = duckdb.connect().execute(f"SELECT * FROM read_parquet('{source}')").fetchall()
    return sorted(rows, key=repr)


@pytest.mark.parametrize("name", OUTPUTS)
def test_spark_writes_the_rows_duckdb_writes(both: dict[str, ScreenResult], name: str) -> None:
    duck = _rows(both["duckdb"].outputs[name])
    spark = _rows(both["spark"].outputs[name])
    assert len(duck) > (10_000 if name == "citations" else 10)
    assert spark == duck


def test_spark_gives_the_summary_duckdb_gives(both: dict[str, ScreenResult]) -> None:
    def comparable(result: ScreenResult) -> dict[str, Any]:
        summary: dict[str, Any] = json.loads(result.outputs["summary"].read_text())
        for key in ("generated", "tool", "outputs"):
            summary.pop(key)
        return summary

    duck, spark = comparable(both["duckdb"]), comparable(both["spark"])
    assert spark == duck
    statuses = set(duck["summary"]["by_status"])
    assert {"retracted", "replaced", "clean", "invalid_doi", "no_doi", "unverified"} <= statuses
    assert both["spark"].summary["tool"]["engine"] == "spark"


def test_the_spark_submit_recipe(snapshot: Path, tmp_path: Path) -> None:  # noqa: F811
    """The README's cluster recipe, with ``--master local[1]``: spark-submit runs the entry file,
    which screens on Spark and counts what DuckDB counts."""
    require_tool("java")
    _pyspark()
    import subprocess
    import sys

    import pyspark

    bin_dir = Path(sys.executable).parent
    entry = subprocess.run([sys.executable, "-m", "rwgate.frontends.screen.spark_submit", "--path"],
                           capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    env = dict(os.environ, SPARK_HOME=str(Path(pyspark.__file__).parent),
               PYSPARK_PYTHON=sys.executable, PATH=f"{bin_dir}:{os.environ['PATH']}")  # fmt: skip
    out = tmp_path / "submitted"
    done = subprocess.run(
        [str(bin_dir / "spark-submit"), "--master", "local[1]", entry, str(SAMPLE / "*.csv"),
         "--snapshot", str(snapshot), "--out", str(out)],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tool"]["engine"] == "spark" and summary["summary"]["references"] > 0
    duck = ScreenOptions([str(SAMPLE / "*.csv")], tmp_path / "duck", snapshot, progress=False)
    assert summary["summary"] == screen(duck).summary["summary"]


def test_parquet_files_with_different_columns_are_each_read_by_their_own(
    both: dict[str, ScreenResult],
    snapshot: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Two Parquet tables naming their DOI column apart (``cited_doi``, ``doi``): on Spark too,
    each is read by its own columns, not one file's schema (the other's rows ``no_doi``)."""
    con = duckdb.connect()
    tables = []
    for i, (col, doi) in enumerate(
        [("cited_doi", "10.1063/5.0182988"), ("doi", "10.3390/coatings11121555")]
    ):
        tables.append(tmp_path / f"part{i}.parquet")
        con.execute(
            f"COPY (SELECT 'p{i}' AS citing, '{doi}' AS {col}) TO '{tables[-1]}' (FORMAT parquet)"
        )
    opts = ScreenOptions([str(t) for t in tables], tmp_path / "out", snapshot, engine="spark",
                         progress=False)  # fmt: skip
    summary = screen(opts).summary
    assert summary["summary"]["by_status"] == {"retracted": 2}
    assert sorted(c["columns"]["doi"] for c in summary["columns"]) == ["cited_doi", "doi"]
