"""The bundled example, end to end: offline from its sample snapshot, online against the fake
Crossref, and through every front end (check, rw-filter, rw-latexmk, MCP), which must agree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from example_data import latex_example

from conftest import require_tool
from rwgate.frontends.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BIN = Path(sys.executable).parent
EXPECTED_OFFLINE = {
    "watson1953": "clean",
    "kucsko2013": "clean",
    "wakefield1998": "retracted",
    "lacour2014": "retracted",
    "mcnutt2015": "clean",
    "njei2011": "withdrawn",
    "yu2020": "retracted",
    "zhang2014": "expression_of_concern",
    "ellisonbarnes2021": "replaced",
    "liu2015": "corrected",
}


def sample_files() -> list[str]:
    data = EXAMPLES / "data"
    return [
        str(data / "retraction-watch" / "rw-sample.csv"),
        *sorted(str(p) for p in (data / "crossref").glob("*.json")),
    ]


@pytest.fixture
def sample_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> Path:
    path = tmp_path / "snapshot.sqlite3"
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(path))
    assert main(["data", "import", *sample_files()]) == 0
    capsys.readouterr()
    return path


def check_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    main(["check", "--format", "json", *args])
    return json.loads(capsys.readouterr().out)


def verdicts(report: dict) -> dict[str, tuple]:
    """What must agree across front ends: status, action, allowed and the notices."""
    return {
        c["key"]: (
            c["status"],
            c["action"],
            c["allowed"],
            [(n["type"], n["doi"], n["date"]) for n in c["notices"]],
        )
        for c in report["citations"]
    }


def test_offline_from_the_sample_snapshot(sample_snapshot, capsys, monkeypatch) -> None:
    monkeypatch.setenv("RWGATE_OFFLINE", "1")
    report = check_json(capsys, str(EXAMPLES / "paper.md"))
    assert {c["key"]: c["status"] for c in report["citations"]} == EXPECTED_OFFLINE
    by_key = {c["key"]: c for c in report["citations"]}
    wake = by_key["wakefield1998"]
    assert [n["record_id"] for n in wake["notices"]] == ["17269", "4036"]
    # Each Wakefield notice is asserted by the CSV and by the recorded Crossref record: one notice.
    assert all(len(n["source"]) == 2 for n in wake["notices"])
    assert "Falsification/Fabrication of Data" in wake["notices"][1]["reasons"]
    assert by_key["yu2020"]["notices"][0]["source"] == ["retraction-watch-csv"]
    assert "notice about 10.1126/science.1256151" in by_key["mcnutt2015"]["reason"]
    snap = next(s for s in report["sources"] if s["name"] == "snapshot")
    assert snap["path"] == str(sample_snapshot) and snap["as_of"].startswith("2025-10-24")


def test_offline_verdicts_equal_online_ones(sample_snapshot, fake_crossref, capsys, monkeypatch):
    offline = check_json(capsys, "--offline", str(EXAMPLES / "paper.md"))
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(sample_snapshot.parent / "none.sqlite3"))
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    online = check_json(capsys, str(EXAMPLES / "paper.md"))
    known = {"watson1953", "kucsko2013", "wakefield1998", "lacour2014", "mcnutt2015", "njei2011"}
    off = {k: v[0] for k, v in verdicts(offline).items() if k in known}
    on = {k: v[0] for k, v in verdicts(online).items() if k in known}
    assert off == on == {k: EXPECTED_OFFLINE[k] for k in known}
    # Works only the Retraction Watch rows know are unknown to (this fake) Crossref alone.
    assert verdicts(online)["yu2020"][0] == "unknown_doi"


def test_online_with_snapshot_merges_sources(sample_snapshot, fake_crossref, capsys, monkeypatch):
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    report = check_json(capsys, str(EXAMPLES / "paper.md"))
    assert {c["key"]: c["status"] for c in report["citations"]} == EXPECTED_OFFLINE
    wake = next(c for c in report["citations"] if c["key"] == "wakefield1998")
    assert [sorted(n["source"]) for n in wake["notices"]] == [
        ["crossref:retraction-watch", "retraction-watch-csv"]
    ] * 2
    assert {s["name"] for s in report["sources"]} == {"crossref", "snapshot"}


def test_make_demo_runs_offline_on_a_fresh_tree(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RWGATE_")}
    env["HOME"] = str(tmp_path)  # no user cache or snapshot can leak in
    env["XDG_CACHE_HOME"] = env["XDG_DATA_HOME"] = str(tmp_path)
    env["RWGATE_DEMO_OUT"] = str(tmp_path / "out")
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "demo.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SAMPLE" in done.stdout and "not the full database" in done.stdout
    # The human report (on stderr beside the HTML report it also writes).
    assert "wakefield1998: Retracted 2010; notice doi:" in done.stderr
    assert "ellisonbarnes2021: Retracted and replaced 2023; notice doi:" in done.stderr
    assert "Traceback" not in done.stderr
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert page.count('<tr class="row') == 10 and "the gate passed under the default policy" in page
    # The sample-data notice is on the page too, above the table (issue 40).
    assert page.index("holds no full Retraction Watch export") < page.index("<table")
    html = (tmp_path / "out" / "paper.html").read_text(encoding="utf-8")
    assert html.count('class="rw-notice') == 6  # replaced is annotated too


def _filter_verdicts(tmp_path: Path, env: dict[str, str]) -> dict:
    report = tmp_path / "filter-report.json"
    done = subprocess.run(
        [
            _bundled_pandoc(),
            "paper.md",
            "--citeproc",
            "--filter",
            str(BIN / "rw-filter"),
            "-o",
            str(tmp_path / "paper.html"),
        ],
        cwd=EXAMPLES,
        env={**env, "RWGATE_REPORT": str(report)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "paper.html").read_text(encoding="utf-8")
    # 4 retracted or withdrawn + 1 expression of concern; the notice DOI is a link
    assert html.count('class="rw-notice') == 6  # replaced is annotated too
    return json.loads(report.read_text())


def _bundled_pandoc() -> str:
    from rwgate.readers.pandoc_exe import pandoc_path

    return pandoc_path()


def _latexmk_verdicts(tmp_path: Path, env: dict[str, str]) -> dict:
    require_tool("latexmk")
    build = latex_example(tmp_path / "tex")
    report = tmp_path / "latex-report.json"
    done = subprocess.run(
        [str(BIN / "rw-latexmk"), "-pdf", "-interaction=nonstopmode", "paper.tex"],
        cwd=build,
        env={**env, "RWGATE_REPORT": str(report)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    text = subprocess.run(
        [require_tool("pdftotext"), str(build / "paper.pdf"), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Retracted 2010" in " ".join(text.split())
    return json.loads(report.read_text())


def test_every_front_end_gives_the_same_verdicts(sample_snapshot, tmp_path, capsys) -> None:
    env = {**os.environ, "RWGATE_OFFLINE": "1"}
    os.environ["RWGATE_OFFLINE"] = "1"
    try:
        cli = verdicts(check_json(capsys, str(EXAMPLES / "paper.md")))
        cli_tex = verdicts(check_json(capsys, str(EXAMPLES / "paper.tex")))
    finally:
        del os.environ["RWGATE_OFFLINE"]
    assert {k: v[0] for k, v in cli.items()} == EXPECTED_OFFLINE
    assert cli_tex == cli
    assert verdicts(_filter_verdicts(tmp_path, env)) == cli
    assert verdicts(_latexmk_verdicts(tmp_path, env)) == cli


def test_strict_names_each_offending_key_in_every_front_end(sample_snapshot, tmp_path) -> None:
    env = {**os.environ, "RWGATE_OFFLINE": "1", "RWGATE_POLICY": "strict"}
    offending = {"wakefield1998", "lacour2014", "njei2011", "yu2020"}
    cli = subprocess.run(
        [str(BIN / "rwgate"), "check", str(EXAMPLES / "paper.md")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 1
    lines = cli.stdout.splitlines()
    failed = {line.split()[1].rstrip(":") for line in lines if line.startswith("  FAIL")}
    assert failed == offending
    out = tmp_path / "paper.html"
    flt = subprocess.run(
        [
            _bundled_pandoc(),
            "paper.md",
            "--citeproc",
            "--filter",
            str(BIN / "rw-filter"),
            "-o",
            str(out),
        ],
        cwd=EXAMPLES,
        env=env,
        capture_output=True,
        text=True,
    )
    assert flt.returncode != 0 and not out.exists()
    errors = [line for line in flt.stderr.splitlines() if line.startswith("rw-filter: ERROR: ")]
    assert {line.split()[2].rstrip(":") for line in errors} == offending
    build = latex_example(tmp_path / "tex")
    tex = subprocess.run(
        [str(BIN / "rw-latexmk"), "-pdf", "-interaction=nonstopmode", "paper.tex"],
        cwd=build,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert tex.returncode == 1
    assert not (build / "paper.pdf").exists() and (build / "paper.pdf.rejected").exists()
    for key in offending:
        assert key in tex.stdout + tex.stderr
