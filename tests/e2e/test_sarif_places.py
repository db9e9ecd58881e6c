"""Issue 50: `rwgate check paper.md|paper.tex --format sarif` puts each flagged work's result on
every manuscript line citing it, with its `.bib` entry as the related location, so GitHub code
scanning shows it in the diff (real pandoc from the wheel, the fake Crossref on loopback)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rwgate.frontends.cli.main import main
from rwgate.render.sarif import SARIF_SCHEMA

BIB = (
    "@article{clean, doi={10.1038/nature12373}}\n"
    "\n"
    "@article{wake,\n  title={Ileal-lymphoid-nodular hyperplasia},\n"
    "  doi={10.1016/S0140-6736(97)11096-0}}\n"
    "@article{ghost, doi={10.5555/no-such-work-rwgate}}\n"
)


def assert_sarif_shape(log: dict[str, Any]) -> None:
    """Every result names its rule, and every location (related too) a file and a line >= 1."""
    assert log["version"] == "2.1.0" and log["$schema"] == SARIF_SCHEMA
    rule_ids = [r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]]
    for res in log["runs"][0]["results"]:
        assert rule_ids[res["ruleIndex"]] == res["ruleId"]
        for loc in [*res.get("locations", []), *res.get("relatedLocations", [])]:
            assert isinstance(loc["physicalLocation"]["artifactLocation"]["uri"], str)
            assert loc["physicalLocation"]["region"]["startLine"] >= 1


@pytest.fixture
def bib(fake_crossref, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "refs.bib"
    path.write_text(BIB)
    return path


def _sarif_results(paper: Path, capsys) -> list[dict[str, Any]]:
    main(["check", "--no-history", "--format", "sarif", "--policy", "strict", str(paper)])
    log = json.loads(capsys.readouterr().out)
    assert_sarif_shape(log)
    return log["runs"][0]["results"]


def _where(res: dict[str, Any]) -> tuple[str, int]:
    phys = res["locations"][0]["physicalLocation"]
    return phys["artifactLocation"]["uri"], phys["region"]["startLine"]


def _related(res: dict[str, Any]) -> list[tuple[str, int]]:
    return [
        (
            r["physicalLocation"]["artifactLocation"]["uri"],
            r["physicalLocation"]["region"]["startLine"],
        )
        for r in res["relatedLocations"]
    ]


def test_sarif_from_markdown_is_on_every_citing_line_with_the_entry_related(
    bib: Path, capsys, tmp_path: Path
) -> None:
    """Issue 50: code scanning shows a retracted citation in the diff, where it is cited."""
    paper = tmp_path / "paper.md"
    paper.write_text(
        "---\nbibliography: refs.bib\n---\n\n"
        "We cite [@clean] and [@wake].\n"
        "\n"
        "`@wake` in code is no citation.\n"
        "\n"
        "As @wake said, and again [@ghost; @wake, p. 3].\n"
    )
    results = _sarif_results(paper, capsys)
    wake = [r for r in results if r["properties"]["key"] == "wake"]
    assert sorted(_where(r) for r in wake) == [("paper.md", 5), ("paper.md", 9)]
    assert all(_related(r) == [("refs.bib", 3)] for r in wake)
    (ghost,) = [r for r in results if r["properties"]["key"] == "ghost"]
    assert _where(ghost) == ("paper.md", 9) and _related(ghost) == [("refs.bib", 6)]
    assert {r["properties"]["key"] for r in results} == {"wake", "ghost"}


def test_sarif_from_latex_is_on_the_citing_lines(bib: Path, capsys, tmp_path: Path) -> None:
    paper = tmp_path / "paper.tex"
    paper.write_text(
        "\\documentclass{article}\n"
        "\\begin{document}\n"
        "Known \\cite{clean}. Retracted \\citep[p.~2]{wake}.\n"
        "% \\cite{ghost} is commented out\n"
        "Again \\cite{ghost,Wake}.\n"
        "\\bibliography{refs}\n"
        "\\end{document}\n"
    )
    results = _sarif_results(paper, capsys)
    wake = [r for r in results if r["properties"]["key"] == "wake"]
    assert sorted(_where(r) for r in wake) == [("paper.tex", 3), ("paper.tex", 5)]
    assert all(_related(r) == [("refs.bib", 3)] for r in wake)
    (ghost,) = [r for r in results if r["properties"]["key"] == "ghost"]
    assert _where(ghost) == ("paper.tex", 5)


def test_sarif_for_a_work_no_line_cites_stays_on_its_entry(
    bib: Path, capsys, tmp_path: Path
) -> None:
    paper = tmp_path / "paper.md"
    paper.write_text("---\nbibliography: refs.bib\nnocite: '@*'\n---\n\nNothing cited.\n")
    (wake,) = [r for r in _sarif_results(paper, capsys) if r["properties"]["key"] == "wake"]
    assert _where(wake) == ("refs.bib", 3) and "relatedLocations" not in wake
