"""rw-filter through real pandoc: placement in HTML, inputs, configuration and the gate."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pandoc_build import CLEAN_KEYS, FLAGGED_KEYS, build, copy_fixtures, write_doc

from fakes.crossref import FakeCrossref, closed_port_url

NOTICE = re.compile(r'<span class="rw-notice rw-(\w+)"[^>]*>(.*?)</span>', re.S)


def _entries(html: str) -> dict[str, str]:
    """Each rendered bibliography entry's HTML, by key."""
    found = re.findall(r'<div id="ref-([^"]+)" class="csl-entry"[^>]*>(.*?)\n</div>', html, re.S)
    return dict(found)


def _env(fake: FakeCrossref, **more: str) -> dict[str, str]:
    return {"RWGATE_CROSSREF_URL": fake.url, **more}


def test_html_annotates_exactly_the_flagged_entries(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    copy_fixtures(tmp_path)
    out = build(tmp_path, ["--citeproc"], "out.html", _env(fake_crossref))
    assert out.returncode == 0, out.stderr
    entries = _entries(out.text)
    assert set(entries) == {*FLAGGED_KEYS, *CLEAN_KEYS}
    for key in CLEAN_KEYS:
        assert "rw-notice" not in entries[key]
    statuses = {key: NOTICE.findall(entries[key]) for key in FLAGGED_KEYS}
    assert [s for s, _ in statuses["wakefield1998"]] == ["retracted"]
    assert [s for s, _ in statuses["njei2011"]] == ["withdrawn"]
    text = statuses["lacour2014"][0][1]
    assert "Retracted 2015; notice doi:" in text
    assert '<a href="https://doi.org/10.1126/science.aac6638">10.1126/science.aac6638</a>' in text
    assert "data-custom-style" not in out.text  # only docx and odt honour custom-style
    assert out.text.count("rw-notice") == 3
    assert (
        "rw-filter: WARNING: lacour2014: retracted 2015, "
        "notice doi:10.1126/science.aac6638 (notice in its bibliography entry)" in out.stderr
    )
    # One batched request for the whole bibliography (five DOIs).
    assert len(fake_crossref.requests_to("/works")) == 1


def test_numeric_style_puts_notice_inside_right_inline(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    copy_fixtures(tmp_path)
    out = build(tmp_path, ["--citeproc", "--csl", "numeric.csl"], "out.html", _env(fake_crossref))
    assert out.returncode == 0, out.stderr
    entry = _entries(out.text)["wakefield1998"]
    right = re.search(r'<div class="csl-right-inline">(.*?)</div>', entry, re.S)
    assert right is not None and "rw-notice rw-retracted" in right.group(1)
    assert "rw-notice" not in entry[: right.start()]


def test_csl_json_and_inline_references(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    copy_fixtures(tmp_path, "refs.json")
    front = """
bibliography: refs.json
references:
- id: lacour2014
  type: article-journal
  title: When contact changes minds
  DOI: 10.1126/science.1256151
  issued:
    date-parts: [[2014]]
"""
    write_doc(tmp_path / "doc.md", front, "See [@wakefield1998; @kucsko2013] and @lacour2014.")
    out = build(tmp_path, ["--citeproc"], "out.html", _env(fake_crossref), document="doc.md")
    assert out.returncode == 0, out.stderr
    entries = _entries(out.text)
    assert "rw-retracted" in entries["wakefield1998"]
    assert "rw-retracted" in entries["lacour2014"]
    assert "rw-notice" not in entries["kucsko2013"]


def test_nocite_entries_are_checked(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    copy_fixtures(tmp_path, "refs.bib")
    write_doc(
        tmp_path / "doc.md", "bibliography: refs.bib\nnocite: '@njei2011'", "Text @kucsko2013."
    )
    out = build(tmp_path, ["--citeproc"], "out.html", _env(fake_crossref), document="doc.md")
    assert out.returncode == 0, out.stderr
    assert set(_entries(out.text)) == {"njei2011", "kucsko2013"}
    assert "rw-withdrawn" in _entries(out.text)["njei2011"]
    write_doc(tmp_path / "all.md", "bibliography: refs.bib\nnocite: '@*'", "No citations.")
    out = build(tmp_path, ["--citeproc"], "all.html", _env(fake_crossref), document="all.md")
    assert out.returncode == 0, out.stderr
    assert out.text.count("rw-notice") == 3


def test_missing_bibliography_warns_and_still_builds(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    write_doc(tmp_path / "doc.md", "bibliography: nowhere.bib", "See [@wakefield1998].")
    out = build(tmp_path, [], "out.html", _env(fake_crossref), document="doc.md")
    assert out.returncode == 0, out.stderr
    assert "rw-filter: WARNING: (pandoc input): bibliography file not found: nowhere.bib" in (
        out.stderr
    )
    assert "rw-filter: WARNING: wakefield1998: missing entry" in out.stderr
    assert "rw-notice" not in out.text


def test_key_missing_from_bibliography(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    copy_fixtures(tmp_path, "refs.bib")
    write_doc(tmp_path / "doc.md", "bibliography: refs.bib", "[@nosuchkey; @lacour2014]")
    out = build(tmp_path, ["--citeproc"], "out.html", _env(fake_crossref), document="doc.md")
    assert out.returncode == 0, out.stderr
    assert "rw-filter: WARNING: nosuchkey: missing entry" in out.stderr
    assert "rw-retracted" in _entries(out.text)["lacour2014"]


def test_filter_before_citeproc_marks_citations(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    copy_fixtures(tmp_path)
    out = build(tmp_path, ["--citeproc"], "out.html", _env(fake_crossref), filter_first=True)
    assert out.returncode == 0, out.stderr
    reason = "no rendered bibliography (rw-filter ran before --citeproc, or without it) for "
    assert out.stderr.count(reason) == 1 and "(annotated)" not in out.stderr
    assert out.stderr.count("(notice after each citation)") == 3
    markers = re.findall(r'<span class="rw-marker rw-(\w+)"', out.text)
    assert sorted(markers) == ["retracted", "retracted", "withdrawn"]
    assert "rw-notice" not in out.text
    assert not (tmp_path / ".rwgate").exists()  # shadow .bib files are for LaTeX only


def test_inline_markers_follow_every_citation(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    copy_fixtures(tmp_path, "refs.bib")
    body = "First [@wakefield1998]. Again [@wakefield1998; @kucsko2013]. Clean @watson1953."
    write_doc(tmp_path / "doc.md", "bibliography: refs.bib\nrwgate:\n  inline: true", body)
    out = build(tmp_path, ["--citeproc"], "out.html", _env(fake_crossref), document="doc.md")
    assert out.returncode == 0, out.stderr
    markers = re.findall(r'<span class="rw-marker rw-retracted"[^>]*>(.*?)</span>', out.text, re.S)
    assert len(markers) == 2
    assert markers[1].startswith("[wakefield1998: Retracted 2010")  # multi-cite names the work
    assert "rw-retracted" in _entries(out.text)["wakefield1998"]


def test_strict_aborts_without_output_and_writes_report(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    copy_fixtures(tmp_path)
    report = tmp_path / "build" / "report.json"
    env = _env(fake_crossref, RWGATE_POLICY="strict", RWGATE_REPORT=str(report))
    out = build(tmp_path, ["--citeproc"], "out.html", env)
    assert out.returncode != 0
    assert not out.output.exists()
    errors = [line for line in out.stderr.splitlines() if line.startswith("rw-filter: ERROR:")]
    assert errors == [
        "rw-filter: ERROR: wakefield1998: retracted 2010, notice doi:10.1016/s0140-6736(10)60175-4",
        "rw-filter: ERROR: lacour2014: retracted 2015, notice doi:10.1126/science.aac6638",
        "rw-filter: ERROR: njei2011: withdrawn 2021, notice doi:10.1002/14651858.cd009522.pub2",
    ]
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["schema"] == "rwgate.report/1"
    assert data["exit_code"] == 1
    assert {c["key"]: c["action"] for c in data["citations"]}["kucsko2013"] == "ignore"


def test_allow_list_lets_strict_build_pass(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    copy_fixtures(tmp_path, "refs.bib")
    front = """
bibliography: refs.bib
rwgate:
  policy: strict
  allow:
  - key: wakefield1998
    reason: this essay is about the retraction
"""
    write_doc(tmp_path / "doc.md", front, "The retracted study [@wakefield1998].")
    env = {**_env(fake_crossref), "RWGATE_REPORT": str(tmp_path / "report.json")}
    out = build(tmp_path, ["--citeproc"], "out.html", env, document="doc.md")
    assert out.returncode == 0, out.stderr
    assert "rw-retracted" in _entries(out.text)["wakefield1998"]  # allowed, still annotated
    citation = json.loads((tmp_path / "report.json").read_text())["citations"][0]
    assert citation["allowed"] is True and citation["action"] != "fail"


def test_config_file_and_bad_metadata(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    copy_fixtures(tmp_path)
    (tmp_path / "rwgate.toml").write_text('fail_on = ["withdrawn"]\n', encoding="utf-8")
    out = build(tmp_path, ["--citeproc"], "out.html", _env(fake_crossref))
    assert out.returncode != 0 and not out.output.exists()
    assert "rw-filter: ERROR: njei2011: withdrawn" in out.stderr
    assert "ERROR: wakefield1998" not in out.stderr
    write_doc(tmp_path / "bad.md", "rwgate: strict", "[@wakefield1998]")
    out = build(tmp_path, ["--citeproc"], "bad.html", _env(fake_crossref), document="bad.md")
    assert out.returncode != 0
    assert "rw-filter: ERROR: metadata rwgate: must be a map" in out.stderr
    write_doc(tmp_path / "typo.md", "rwgate:\n  policy: strikt", "[@wakefield1998]")
    out = build(tmp_path, ["--citeproc"], "typo.html", _env(fake_crossref), document="typo.md")
    assert out.returncode != 0
    assert re.search(r"rw-filter: ERROR: metadata rwgate: policy: ", out.stderr), out.stderr


def test_unreachable_source_gives_unverified_not_a_crash(tmp_path: Path) -> None:
    copy_fixtures(tmp_path, "refs.bib")
    front = "bibliography: refs.bib\nrwgate:\n  timeout: 0.5\n  max_total_seconds: 1"
    write_doc(tmp_path / "doc.md", front, "[@wakefield1998]")
    env = {"RWGATE_CROSSREF_URL": closed_port_url()}
    out = build(tmp_path, ["--citeproc"], "out.html", env, document="doc.md")
    assert out.returncode == 0, out.stderr
    assert "rw-filter: WARNING: wakefield1998: unverified" in out.stderr
    assert "rw-notice" not in out.text
    out = build(tmp_path, ["--citeproc"], "s.html", {**env, "RWGATE_POLICY": "strict"}, "doc.md")
    assert out.returncode != 0 and "rw-filter: ERROR: wakefield1998: unverified" in out.stderr


def test_same_verdicts_as_rwgate_check(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    import subprocess
    import sys

    copy_fixtures(tmp_path)
    env = _env(fake_crossref, RWGATE_REPORT=str(tmp_path / "filter.json"))
    assert build(tmp_path, ["--citeproc"], "out.html", env).returncode == 0
    rwgate = str(Path(sys.executable).parent / "rwgate")
    proc = subprocess.run(
        [rwgate, "check", "paper.md", "--format", "json", "-o", "check.json"],
        cwd=tmp_path,
        env={**__import__("os").environ, "RWGATE_CROSSREF_URL": fake_crossref.url},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr

    def verdicts(name: str) -> list[tuple[str, str, str]]:
        data = json.loads((tmp_path / name).read_text(encoding="utf-8"))
        return [(c["key"], c["status"], c["action"]) for c in data["citations"]]

    assert verdicts("filter.json") == verdicts("check.json")


def test_control_characters_from_upstream_never_reach_stderr(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    notice = "10.5555/n\x1b[2J\x1b]0;owned\x07\u202eevil"
    fake_crossref.add_synthetic(
        "10.5555/esc.2020",
        updated_by=[
            {
                "DOI": notice,
                "type": "retraction",
                "source": "retraction-watch",
                "label": "Retraction",
                "updated": {"date-parts": [[2021, 5, 1]]},
            }
        ],
    )
    (tmp_path / "refs.bib").write_text(
        "@article{esc, title = {T}, year = 2020, doi = {10.5555/esc.2020}}\n", encoding="utf-8"
    )
    write_doc(tmp_path / "doc.md", "bibliography: refs.bib", "Cited [@esc].")
    out = build(tmp_path, ["--citeproc"], "out.html", _env(fake_crossref), document="doc.md")
    assert out.returncode == 0, out.stderr
    assert "esc: retracted 2021, notice doi:10.5555/n[2j]0;ownedevil" in out.stderr
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f\u202e]", out.stderr)
