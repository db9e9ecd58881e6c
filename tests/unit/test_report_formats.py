"""`rwgate check --format sarif|junit`: CI renderings, through the real CLI and fake Crossref."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from rwgate.contract.models import Citation, Location, Notice
from rwgate.core import CheckResult
from rwgate.frontends.cli.main import main
from rwgate.render.safe import one_line
from rwgate.render.sarif import SARIF_SCHEMA, render_junit, render_sarif
from rwgate.settings.policy import Policy

WAKEFIELD = "10.1016/s0140-6736(97)11096-0"
CLEAN = "10.1038/nature12373"
UNKNOWN = "10.5555/no-such-work-rwgate"
BIB = (
    "@article{clean, doi={10.1038/nature12373}}\n"
    "\n"
    "@article{wake,\n  title={Ileal-lymphoid-nodular hyperplasia},\n"
    "  doi={10.1016/S0140-6736(97)11096-0}}\n"
    "@article{ghost, doi={10.5555/no-such-work-rwgate}}\n"
)
HOSTILE = "a]]><b>&c\x01\x1b[31m\ufffe"


@pytest.fixture
def bib(fake_crossref, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "refs.bib"
    path.write_text(BIB)
    return path


def assert_sarif_shape(log: dict[str, Any]) -> None:
    """The parts of SARIF 2.1.0 a reader needs, with their types."""
    assert log["version"] == "2.1.0" and log["$schema"] == SARIF_SCHEMA
    assert isinstance(log["runs"], list) and len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "rwgate" and isinstance(driver["version"], str)
    assert driver["informationUri"].startswith("https://")
    rule_ids = [r["id"] for r in driver["rules"]]
    assert len(set(rule_ids)) == len(rule_ids)
    for rule in driver["rules"]:
        assert isinstance(rule["shortDescription"]["text"], str)
    for res in run["results"]:
        assert res["level"] in {"none", "note", "warning", "error"}
        assert isinstance(res["message"]["text"], str) and res["message"]["text"]
        assert rule_ids[res["ruleIndex"]] == res["ruleId"]
        for loc in res.get("locations", []):
            phys = loc["physicalLocation"]
            assert isinstance(phys["artifactLocation"]["uri"], str)
            if "region" in phys:
                assert isinstance(phys["region"]["startLine"], int)
                assert phys["region"]["startLine"] >= 1


def test_sarif_from_bib_has_error_warning_and_lines(bib: Path, capsys) -> None:
    code = main(["check", "--no-history", "--format", "sarif", "--policy", "strict", str(bib)])
    captured = capsys.readouterr()
    log = json.loads(captured.out)
    assert_sarif_shape(log)
    assert code == 1
    run = log["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [
        "rwgate/retracted",
        "rwgate/unknown_doi",
    ]
    results = {r["properties"]["key"]: r for r in run["results"]}
    assert set(results) == {"wake", "ghost"}  # the clean work is not a result
    wake, ghost = results["wake"], results["ghost"]
    assert wake["level"] == "error" and ghost["level"] == "warning"
    assert wake["ruleId"] == "rwgate/retracted"
    # The note the paper carries (it names the status); a status without one, in words.
    assert (
        wake["message"]["text"] == "wake: Retracted 2010; notice doi:10.1016/s0140-6736(10)60175-4"
    )
    assert ghost["message"]["text"].startswith("ghost: unknown DOI")
    phys = wake["locations"][0]["physicalLocation"]
    assert phys["artifactLocation"]["uri"] == "refs.bib"
    assert phys["region"]["startLine"] == 3
    assert wake["properties"]["doi"] == WAKEFIELD
    assert "retraction" in [n["type"] for n in wake["properties"]["notices"]]


def test_sarif_to_output_file_and_json_report_setting_stays_json(
    bib: Path, capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RWGATE_REPORT", str(tmp_path / "report.json"))
    out = tmp_path / "rwgate.sarif"
    code = main(
        [
            "check",
            "--no-history",
            "--format",
            "sarif",
            "-o",
            str(out),
            "--policy",
            "strict",
            str(bib),
        ]
    )
    captured = capsys.readouterr()
    assert code == 1 and captured.out == ""
    assert_sarif_shape(json.loads(out.read_text()))
    assert json.loads((tmp_path / "report.json").read_text())["schema"] == "rwgate.report/1"
    assert "gate FAILED" in captured.err


def test_sarif_location_outside_working_directory_is_a_file_uri(
    bib: Path, capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    main(["check", "--no-history", "--format", "sarif", str(bib)])
    log = json.loads(capsys.readouterr().out)
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for r in log["runs"][0]["results"]
        for loc in r["locations"]
    }
    assert uris == {bib.resolve().as_uri()}


def test_junit_counts_failure_and_output(bib: Path, capsys) -> None:
    code = main(["check", "--no-history", "--format", "junit", "--policy", "strict", str(bib)])
    root = ET.fromstring(capsys.readouterr().out.encode())
    assert code == 1
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == "rwgate"
    for node in (root, suite):
        assert (node.get("tests"), node.get("failures"), node.get("errors")) == ("3", "1", "0")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"clean", "wake", "ghost"}
    assert all(c.get("classname") == str(bib) for c in cases.values())
    failure = cases["wake"].find("failure")
    assert failure is not None and failure.get("type") == "retracted"
    assert "Retracted 2010" in (failure.get("message") or "")
    assert cases["ghost"].find("failure") is None
    assert "ghost: unknown DOI" in (cases["ghost"].findtext("system-out") or "")
    assert list(cases["clean"]) == []


def test_doi_argument_is_no_file_location(fake_crossref, monkeypatch, capsys) -> None:
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    assert main(["check", "--no-history", "--format", "junit", "--doi", CLEAN]) == 0
    root = ET.fromstring(capsys.readouterr().out.encode())
    case = root.find("testsuite/testcase")
    assert case is not None and case.get("classname") == "--doi"
    assert root.get("failures") == "0"
    assert main(["check", "--no-history", "--format", "sarif", "--doi", UNKNOWN]) == 0
    (result,) = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert result["level"] == "warning" and "locations" not in result  # nothing to annotate


def _hostile_result() -> CheckResult:
    notice = Notice(type="retraction", doi="10.1/" + HOSTILE)
    citations = [
        Citation(
            key=HOSTILE,
            doi="10.1/x",
            status="retracted",
            action="fail",
            reason=HOSTILE,
            title=HOSTILE,
            notices=[notice],
            location=Location(file="/tmp/" + HOSTILE + ".bib", line=2),
        ),
        Citation(key="k" + HOSTILE, status="unknown_doi", action="warn", reason=HOSTILE),
    ]
    return CheckResult(citations=citations, policy=Policy(preset="strict"), sources=[])


def test_hostile_strings_keep_junit_parseable() -> None:
    template = "{{ label }}: {{ title }}"
    root = ET.fromstring(render_junit(_hostile_result(), template).encode())
    case = root.find("testsuite/testcase")
    assert case is not None
    cleaned = "a]]><b>&c[31m"  # only what XML 1.0 forbids (\x01, \x1b, \ufffe) is gone
    assert case.get("name") == cleaned
    failure = case.find("failure")
    assert failure is not None and f"Retracted: {cleaned}" in (failure.get("message") or "")
    assert root.get("failures") == "1"
    located_nowhere = root.findall("testsuite/testcase")[1]
    assert located_nowhere.get("classname") == "rwgate"
    assert "unknown DOI" in (located_nowhere.findtext("system-out") or "")


def test_hostile_strings_are_sarif_string_values() -> None:
    log = json.loads(render_sarif(_hostile_result(), "{{ title }}"))
    assert_sarif_shape(log)
    first = log["runs"][0]["results"][0]
    cleaned = one_line(HOSTILE)  # control and bidi characters gone, JSON escapes the rest
    assert first["properties"]["key"] == cleaned
    assert first["message"]["text"] == f"{cleaned}: retracted - {cleaned} ({cleaned})"


def _no_doi(key: str) -> Citation:
    return Citation(key=key, status="no_doi", action="warn", reason="entry has no DOI")


def test_entries_without_a_doi_are_one_summary_line_unless_verbose() -> None:
    from rwgate.render.report import render_text

    citations = [_no_doi(f"k{i}") for i in range(7)]
    citations.append(Citation(key="bad", status="unverified", action="warn", reason="x"))
    result = CheckResult(citations=citations, policy=Policy(), sources=[])
    quiet = render_text(result)
    assert quiet.count("no_doi") == 0 and "  WARN  bad: unverified" in quiet
    assert (
        "rwgate: warning: 7 entries have no DOI and could not be checked (k0, k1, k2, k3, k4, "
        "and 2 more); `--recover-dois` looks them up by title, `rwgate check -v` lists each"
    ) in quiet
    loud = render_text(result, verbose=True)
    assert loud.count(": no DOI") == 7 and "entries have no DOI" not in loud


def test_markdown_summary_says_why_for_identity_verdicts() -> None:
    """A reviewer reads the job summary only: a DOI that names another work, and an entry matched
    by title, carry their reason (the record's own title; the DOI to add)."""
    from rwgate.render.markdown import render_markdown

    mismatch = "doi:10.1038/171737a0 names 'Molecular Structure of Nucleic Acids' (1953), not this"
    by_title = "matched by title to RW#4036, add its DOI (10.1016/s0140-6736(97)11096-0)"
    citations = [
        Citation(key="lacour", status="doi_mismatch", action="fail", reason=mismatch),
        Citation(
            key="wakefield", status="retracted", action="fail", reason=by_title, basis=["title"]
        ),
        Citation(key="plain", status="retracted", action="fail", reason="not shown"),
    ]
    text = render_markdown(CheckResult(citations=citations, policy=Policy(), sources=[]), 1)
    plain = text.replace("\\", "")  # md_safe's backslash escapes
    assert "names 'Molecular Structure of Nucleic Acids' (1953)" in plain
    assert "matched by title to RW#4036, add its DOI" in plain
    assert "not shown" not in text


def test_html_and_markdown_name_the_project_metadata_files(tmp_path: Path) -> None:
    """Issue 36: the page and the job summary say which project files gave the metadata,
    relative to the repository, as they show entries' files; a check with none says nothing."""
    from rwgate.render.html import render_html
    from rwgate.render.markdown import render_markdown

    files = [str(tmp_path / "_quarto.yml"), str(tmp_path / "chapters" / "_metadata.yml")]
    result = CheckResult(citations=[], policy=Policy(), sources=[], project_metadata=files)
    page = render_html(result, root=tmp_path)
    assert "Project metadata: <code>_quarto.yml</code>, <code>chapters/<wbr>_metadata.yml" in page
    summary = render_markdown(result, root=tmp_path)
    assert "Project metadata: `_quarto.yml`, `chapters/_metadata.yml`" in summary
    none = CheckResult(citations=[], policy=Policy(), sources=[])
    assert "Project metadata" not in render_html(none) + render_markdown(none)


def test_every_format_choice_makes_its_renderer() -> None:
    from rwgate.render import FormatChoice, ReportFormat

    for choice in FormatChoice:
        made = choice.to_format()
        assert isinstance(made, ReportFormat) and made.name == choice.value
