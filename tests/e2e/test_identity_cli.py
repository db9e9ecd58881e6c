"""Issue 31 end to end: identity checks through ``rwgate check`` (every report format) and MCP.

Crossref answers come from the loopback fake serving the real recorded bodies of
``tests/fixtures/crossref`` (provenance in its README); the snapshot is built from the real
Retraction Watch rows of ``tests/fixtures/rw`` (attribution in its ATTRIBUTION.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rwgate.frontends.cli.main import main
from rwgate.frontends.mcp.tools import Toolbox
from rwgate.sources.snapshot.store import import_files

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
WATSON_DOI = "10.1038/171737a0"
WATSON = "Molecular Structure of Nucleic Acids: A Structure for Deoxyribose Nucleic Acid"
LACOUR = "When contact changes minds: An experiment on transmission of support for gay equality"
WAKEFIELD = (
    "Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive developmental "
    "disorder in children"
)
BIB = (
    "@article{lacour, author = {LaCour, Michael J. and Green, Donald P.}, title = {" + LACOUR + "},"
    " journal = {Science}, year = {2014}, doi = {" + WATSON_DOI + "}}\n"
    "@article{wakefield, author = {Wakefield, A. J.}, title = {" + WAKEFIELD + "},"
    " journal = {The Lancet}, year = {1998}}\n"
    "@article{watson, author = {Watson, J. D.}, title = {" + WATSON + "}, journal = {Nature},"
    " year = {1953}}\n"
)


@pytest.fixture
def env(tmp_path: Path, fake_crossref, monkeypatch: pytest.MonkeyPatch) -> Path:
    snapshot = tmp_path / "rw.sqlite"
    import_files(snapshot, sorted((FIXTURES / "rw").glob("*.csv")))
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(snapshot))
    monkeypatch.setenv("RWGATE_NO_CACHE", "1")
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, dict]]:
    code = main(["check", "--format", "json", *args])
    report = json.loads(capsys.readouterr().out)
    return code, {c["key"]: c for c in report["citations"]}


def test_a_doi_of_another_real_paper_is_a_mismatch_and_doi_less_works_matched_by_title(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, cited = _json(capsys, "refs.bib")
    assert code == 0  # default: a mismatch warns
    lacour = cited["lacour"]
    assert lacour["status"] == "doi_mismatch" and lacour["action"] == "warn"
    assert lacour["reason"].startswith(f"doi:{WATSON_DOI} names '{WATSON}' (1953), not this entry")
    assert lacour["title"] == LACOUR  # the entry's own title: the record is another work
    wakefield = cited["wakefield"]
    assert wakefield["status"] == "retracted" and wakefield["basis"][-1] == "title"
    assert "matched by title to RW#4036" in wakefield["reason"]
    assert "add its DOI (10.1016/s0140-6736(97)11096-0)" in wakefield["reason"]
    assert cited["watson"]["status"] == "no_doi"
    strict, _ = _json(capsys, "--policy", "strict", "refs.bib")
    assert strict == 1


@pytest.mark.parametrize("fmt", ["text", "markdown", "html", "junit", "sarif"])
def test_every_report_format_shows_the_mismatch(
    env: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    main(["check", "--format", fmt, "refs.bib"])
    out = capsys.readouterr().out
    assert "lacour" in out and ("DOI mismatch" in out or "doi_mismatch" in out)
    if fmt != "markdown":  # the Markdown table shows no reasons for unjudged works
        assert "not this entry" in out
        assert "matched by title to RW#4036" in out


def test_offline_the_title_match_needs_no_network(
    env: Path, capsys: pytest.CaptureFixture[str], fake_crossref
) -> None:
    asked = len(fake_crossref.requests)
    code, cited = _json(capsys, "--offline", "refs.bib")
    assert len(fake_crossref.requests) == asked
    assert cited["wakefield"]["status"] == "retracted" and code == 0


def test_no_fixture_bibliography_entry_is_a_false_mismatch(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every bibliography of the fixtures (RIS through pandoc too), judged against the recorded
    Crossref answers and the real Retraction Watch rows: no ``doi_mismatch``."""
    files = [
        p
        for p in sorted(FIXTURES.rglob("*"))
        if p.suffix in (".bib", ".ris") or p.name in ("refs.json", "refs.yaml")
    ]
    assert len(files) >= 10
    for path in files:
        main(["check", "--format", "json", str(path)])
        out = capsys.readouterr().out
        report = json.loads(out) if out.strip() else {"citations": []}
        false = [c["key"] for c in report["citations"] if c["status"] == "doi_mismatch"]
        assert false == [], path


def test_mcp_check_bibliography_gives_the_same_verdicts(env: Path) -> None:
    toolbox = Toolbox([env])
    try:
        result = toolbox.check_bibliography(None, BIB)
    finally:
        toolbox.close()
    statuses = {c.key: c.status for c in result.citations}
    assert statuses == {"lacour": "doi_mismatch", "wakefield": "retracted", "watson": "no_doi"}
