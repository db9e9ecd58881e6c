"""`rwgate screen` (issues 32, 37): the same verdict as `rwgate check --offline` for every cited
DOI and the same counts, status by status; inputs that are not what they claim are one line."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pytest

from rwgate.contract.doi import try_normalize
from rwgate.contract.models import Reference
from rwgate.contract.vocab import FLAGGED_STATUSES
from rwgate.core import check
from rwgate.frontends.screen.inputs import InputError
from rwgate.frontends.screen.run import ScreenOptions, screen
from rwgate.settings.config import Settings
from rwgate.sources.snapshot.source import import_files

ROOT = Path(__file__).resolve().parents[2]
RW = ROOT / "tests" / "fixtures" / "rw"
SAMPLE = ROOT / "examples" / "screen"
RWGATE = Path(sys.executable).with_name("rwgate")
# Crossref notices of every type (one record each): with the Retraction Watch rows of the
# fixtures they give every flagged status.
TYPES = [
    "retraction", "withdrawal", "removal", "partial_retraction", "retraction_and_replacement",
    "expression_of_concern", "some_new_kind", "correction", "addendum",
]  # fmt: skip


def _crossref_body(doi: str, kinds: list[tuple[str, str]]) -> str:
    updates = [
        {"DOI": f"{doi}.n{i}", "type": kind, "source": "publisher", "label": kind,
         "updated": {"date-parts": [[int(day[:4]), int(day[5:7]), int(day[8:])]]}}
        for i, (kind, day) in enumerate(kinds)
    ]  # fmt: skip
    return json.dumps({"status": "ok", "message-type": "work",
                       "message": {"DOI": doi, "title": ["t"], "updated-by": updates}})  # fmt: skip


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("snap")
    files: list[Path] = [RW / "rw-extract-2025.csv", *sorted(RW.glob("*.json"))]
    for i, kind in enumerate(TYPES):
        body = folder / f"cr{i}.json"
        body.write_text(_crossref_body(f"10.5555/screen.{kind}", [(kind, "2020-03-04")]))
        files.append(body)
    body = folder / "reinstated.json"
    pairs = [("retraction", "2019-01-01"), ("reinstatement", "2021-01-01")]
    body.write_text(_crossref_body("10.5555/screen.reinstated", pairs))
    files.append(body)
    sici = folder / "sici.json"
    sici.write_text(_crossref_body("10.1002/(SICI)1097-4636(199812)43:4<431::AID-JBM11>3.0.CO;2-Y",
                                   [("retraction", "2001-01-01")]))  # fmt: skip
    files.append(sici)
    path = folder / "snapshot.sqlite"
    result = import_files(path, files, allow_shrink=True)
    assert not result.failed
    return path


def _spellings(doi: str, i: int) -> list[str]:
    return [doi, doi.upper(), f"https://doi.org/{doi}", f"doi: {doi}.", doi.replace("-", "\u2010")][
        : 2 + i % 4
    ]


def _corpus(snapshot: Path, folder: Path) -> Path:
    """>= 10,000 cited identifiers: every work the snapshot knows in several spellings, PubMed
    ids, unlisted DOIs, shortDOIs and malformed ones, as a Parquet table."""
    db = sqlite3.connect(snapshot)
    known = (
        "SELECT work_doi FROM notices WHERE work_doi IS NOT NULL UNION SELECT notice_doi FROM"
        " notices WHERE notice_doi IS NOT NULL UNION SELECT doi FROM works"
    )
    listed = sorted(r[0] for r in db.execute(known).fetchall())
    pmid_sql = "SELECT DISTINCT work_pmid FROM notices WHERE work_pmid IS NOT NULL"
    pmids = sorted(r[0] for r in db.execute(pmid_sql).fetchall())
    db.close()
    con = duckdb.connect()
    rows: list[tuple[str, str | None, str | None, str | None]] = []
    for i, doi in enumerate(listed):
        rows += [(f"w{i % 97}", s, None, "2024-05-01") for s in _spellings(doi, i)]
    rows.append(
        ("sici", "10.1002/(sici)1097-4636(199812)43:4431::aid-jbm113.0.co;2-y", None, "2010")
    )
    rows.append(
        ("sici", "10.1002/(SICI)1097-4636(199812)43:4<431::AID-JBM11>3.0.CO;2-Y", None, None)
    )
    for i, pmid in enumerate(pmids):
        rows.append((f"p{i % 13}", None, pmid, "2015"))
        rows.append((f"p{i % 13}", f"10.9999/unlisted.pm{i}", f"00{pmid}", "2015-02"))
        rows.append((f"p{i % 13}", listed[i % len(listed)], pmid, "2015-02"))
        rows.append((f"q{i % 7}", f"10.9999/unlisted.pq{i}", pmid, "2016"))  # a listed id
        rows.append((f"q{i % 7}", f"10.9999/unlisted.pr{i}", str(900_000_000 + i), "2016"))
        rows.append((f"q{i % 7}", None, str(910_000_000 + i), "2016"))  # a PubMed id alone
    rows += [
        (f"u{i % 500}", f"10.{1000 + i % 9000}/unlisted.{i}", None, "2023") for i in range(10_000)
    ]
    # One citing work's plain rows (unlisted, on the fast path) and rare rows, dated apart.
    rows += [("mix", f"10.1234/plain.{i}", None, day) for i, day in enumerate(["2021-03", "2020"])]
    rows += [("mix", listed[0], None, "2022-01-02"), ("mix", "not a doi", None, "2019-12")]
    rows += [
        ("bad", "10/abcd", None, None),
        ("bad", "not a doi", None, None),
        ("bad", None, None, None),
    ]
    rows += [("bad", None, "12345678", None), ("bad", "   ", "0", None)]
    con.execute(
        "CREATE TABLE refs (citing VARCHAR, cited_doi VARCHAR, cited_pmid VARCHAR,"
        " citing_date VARCHAR)"
    )
    con.executemany("INSERT INTO refs VALUES (?, ?, ?, ?)", rows)
    out = folder / "refs.parquet"
    con.execute(f"COPY refs TO '{out}' (FORMAT parquet)")
    return out


def test_screen_gives_the_verdict_rwgate_check_gives(snapshot: Path, tmp_path: Path) -> None:
    corpus = _corpus(snapshot, tmp_path)
    opts = ScreenOptions(
        [str(corpus)], tmp_path / "out", snapshot, all_citations=True, progress=False
    )
    result = screen(opts)
    got = (
        duckdb.connect()
        .execute(f"SELECT cited_raw, cited_pmid, status FROM '{result.outputs['citations']}'")
        .fetchall()
    )
    raw = duckdb.connect().execute(f"SELECT cited_doi, cited_pmid FROM '{corpus}'").fetchall()
    assert len(got) == len(raw) >= 10_000
    refs = [Reference.as_written(f"r{i}", doi, pmid=(pmid or "").lstrip("0") or None)
            for i, (doi, pmid) in enumerate(raw)]  # fmt: skip
    settings = Settings(offline=True, no_cache=True, snapshot=snapshot)
    pmids = [r.pmid for r in refs]
    checked = check(refs, settings).citations
    expected = Counter(
        (doi, pmid, c.status) for (doi, _), pmid, c in zip(raw, pmids, checked, strict=True)
    )
    assert Counter(got) == expected
    statuses = {s for _, _, s in expected}
    assert {"retracted", "withdrawn", "removed", "partially_retracted", "replaced",
            "expression_of_concern", "unknown_notice", "corrected", "amended", "reinstated",
            "clean", "invalid_doi", "no_doi", "unverified"} <= statuses  # fmt: skip
    summary = json.loads(result.outputs["summary"].read_text())
    assert summary["schema"] == "rwgate.screen/2"
    # Issue 37: the counts are check's, status by status; "flagged" is what check's default
    # policy acts on (its annotated and failed works), corrections are counted apart.
    counts = summary["summary"]
    assert counts["by_status"] == dict(Counter(str(c.status) for c in checked))
    assert counts["flagged"] == sum(c.action in ("fail", "annotate") for c in checked)
    assert counts["corrections"] == sum(
        c.action == "ignore" and c.status in FLAGGED_STATUSES for c in checked
    )
    assert counts["unverified"] == sum(c.status == "unverified" for c in checked)
    assert summary["summary"]["references"] == len(raw)
    assert summary["bad_rows"]["count"] >= 2 and summary["bad_rows"]["by_reason"]
    # Per citing work, the counts and earliest date are those of its rows' own verdicts (the
    # screen counts plain rows apart from the rare ones and joins the two).
    columns = sorted(statuses - {"clean"})  # citing.parquet counts all but clean works
    per_row = (
        "SELECT citing, count(*), min(citing_date), "
        + ", ".join(f"count(*) FILTER (WHERE status = '{s}')" for s in columns)
        + f" FROM '{result.outputs['citations']}' GROUP BY citing"
    )
    per_citing = (
        'SELECT citing, "references", citing_date, '
        + ", ".join(f"n_{s}" for s in columns)
        + f" FROM '{result.outputs['citing']}'"
    )
    con = duckdb.connect()
    have = {r[0]: r[1:] for r in con.execute(per_citing).fetchall()}
    assert have == {r[0]: r[1:] for r in con.execute(per_row).fetchall()}
    assert have["mix"][1] == dt.date(2019, 12, 1)
    html = result.outputs["html"].read_text()
    assert "<svg" in html and "<script" not in html


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(RWGATE), "screen", *args], capture_output=True, text=True, timeout=300
    )


def test_the_bundled_sample_on_the_command_line(snapshot: Path, tmp_path: Path) -> None:
    done = _cli(str(SAMPLE / "*.csv"), "--out", str(tmp_path / "o"), "--snapshot", str(snapshot))
    assert done.returncode == 0, done.stderr
    assert "flagged" in done.stdout and (tmp_path / "o" / "flagged.parquet").exists()


def _summaries_of(snapshot: Path, tmp_path: Path, *paths: Path) -> list[dict[str, Any]]:
    """Each file screened alone: what its summary.json says of the references, and its records."""
    summaries = []
    for i, path in enumerate(paths):
        done = _cli(str(path), "--out", str(tmp_path / f"o{i}"), "--snapshot", str(snapshot))
        assert done.returncode == 0, done.stderr
        summary = json.loads((tmp_path / f"o{i}" / "summary.json").read_text())
        same = ("summary", "bad_rows", "flagged_works", "most_cited", "flagged_by_citing_year")
        summaries.append({k: summary[k] for k in same})
        summaries[-1]["records"] = [f["records"] for f in summary["files"]]
    return summaries


def test_a_gzipped_csv_named_without_gz_is_screened_as_it_reads(
    snapshot: Path, tmp_path: Path
) -> None:
    """DuckDB tells gzip by the file's name: a gzipped export saved as ``.csv`` was refused as
    "not a CSV DuckDB can read" although the screen's own peek had read it. Its verdict is now
    the plain file's, record for record."""
    plain = SAMPLE / "rw-cited-sample.csv"
    unnamed = tmp_path / "cited.csv"
    unnamed.write_bytes(gzip.compress(plain.read_bytes()))
    summaries = _summaries_of(snapshot, tmp_path, plain, unnamed)
    assert summaries[0] == summaries[1]
    assert summaries[0]["records"] == [60]
    assert summaries[0]["summary"]["flagged"] > 0


@pytest.mark.parametrize(
    "name", ["crossref-works-sample.jsonl.gz", "crossref-items-sample.json.gz", "table.jsonl.gz"]
)
def test_a_gzipped_json_file_named_without_gz_is_screened_as_it_reads(
    snapshot: Path, tmp_path: Path, name: str
) -> None:
    """As a CSV: a gzipped JSON lines (or ``items``) file saved without ``.gz`` is read as
    gzip, its verdict the plain copy's, record for record."""
    if name == "table.jsonl.gz":  # a table of cited DOIs, one object per line
        table = tmp_path / "table.jsonl"
        duckdb.sql(f"COPY (FROM '{SAMPLE / 'rw-cited-sample.csv'}') TO '{table}' (FORMAT json)")
        packed = gzip.compress(table.read_bytes())
    else:
        packed = (SAMPLE / name).read_bytes()
    plain = tmp_path / name.removesuffix(".gz")
    plain.write_bytes(gzip.decompress(packed))
    unnamed = tmp_path / "unnamed" / plain.name
    unnamed.parent.mkdir()
    unnamed.write_bytes(packed)
    summaries = _summaries_of(snapshot, tmp_path, plain, unnamed)
    assert summaries[0] == summaries[1]
    assert summaries[0]["summary"]["references"] > 0


@pytest.mark.parametrize(
    ("name", "sample"),
    [("cited.csv", "rw-cited-sample.csv"), ("works.jsonl", "crossref-works-sample.jsonl.gz")],
)
def test_spark_refuses_a_gzipped_file_named_without_gz(
    snapshot: Path, tmp_path: Path, name: str, sample: str
) -> None:
    """Spark tells gzip by the name alone: it would read such a file's bytes as text."""
    data = (SAMPLE / sample).read_bytes()
    unnamed = tmp_path / name
    unnamed.write_bytes(data if sample.endswith(".gz") else gzip.compress(data))
    opts = ScreenOptions([str(unnamed)], tmp_path / "o", snapshot, engine="spark")
    with pytest.raises(InputError, match="named"):
        screen(opts)


@pytest.mark.parametrize(
    ("name", "content", "claim"),
    [
        ("refs.parquet", b"citing,cited_doi\na,10.1/x\n", "auto"),
        ("refs.jsonl.gz", b"not gzip at all", "auto"),
        ("refs.csv", b"citing,cited_doi\na,10.1/x\n", "opencitations"),
        ("refs.jsonl", b"\x00\x01\xfe\xff" * 100, "auto"),
    ],
)
def test_a_file_that_is_not_what_it_claims_is_one_line(
    snapshot: Path, tmp_path: Path, name: str, content: bytes, claim: str
) -> None:
    bad = tmp_path / name
    bad.write_bytes(content)
    done = _cli(str(bad), "--out", str(tmp_path / "o"), "--snapshot", str(snapshot),
                "--input-format", claim)  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0], done.stderr


def _crossref_expected() -> Counter[tuple[str, str | None, str | None]]:
    """(citing, cited DOI, citing date) of every reference in the bundled Crossref excerpt, as
    Python reads the published file."""
    with gzip.open(SAMPLE / "crossref-items-sample.json.gz", "rt", encoding="utf-8") as handle:
        items = json.load(handle)["items"]
    out: Counter[tuple[str, str | None, str | None]] = Counter()
    for work in items:
        parts = work["issued"]["date-parts"][0] + [1, 1]
        day = dt.date(parts[0], parts[1], parts[2]).isoformat()
        for ref in work.get("reference", []):
            out[(work["DOI"].lower(), try_normalize(ref.get("DOI")), day)] += 1
    return out


@pytest.mark.parametrize(
    "name", ["crossref-items-sample.json.gz", "crossref-works-sample.jsonl.gz"]
)
def test_crossref_reference_lists_are_read(snapshot: Path, tmp_path: Path, name: str) -> None:
    """The public data file's works, gzipped, as ``{"items": [...]}`` or one work per line
    (the first work of the excerpt has no reference list at all)."""
    opts = ScreenOptions(
        [str(SAMPLE / name)], tmp_path / "out", snapshot, all_citations=True, progress=False
    )
    result = screen(opts)
    got = (
        duckdb.connect()
        .execute(
            "SELECT citing, cited_doi, CAST(citing_date AS VARCHAR), status"
            f" FROM '{result.outputs['citations']}'"
        )
        .fetchall()
    )
    expected = _crossref_expected()
    assert sum(expected.values()) == 43
    assert Counter((c, d, day) for c, d, day, _ in got) == expected
    assert Counter(s for *_, s in got) == {"clean": 40, "no_doi": 3}
    assert result.summary["summary"]["citing_works"] == 2
