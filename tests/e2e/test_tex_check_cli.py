"""``rwgate check --offline refs.bib`` on values written in TeX (issues 45 and 46).

- A DOI-less entry whose title writes Greek as TeX math is matched by title to the registry row
  that lists the work without a DOI, whether the registry writes the letters (``TNF-α``) or
  their names (``TNF-alpha``): one title key for the three spellings.
- A DOI written with an escaped hyphen (``S0140\\-6736``) is Wakefield's DOI: under strict it is
  ``retracted`` against a full export (it was ``clean``: ``\\-`` was read as nothing, giving
  ``s01406736``, a DOI no registry lists).

The snapshots are the real Retraction Watch rows of ``tests/fixtures/rw`` and rows derived from
one of them (``tests/fixtures/tex-titles``); attribution in each folder's ATTRIBUTION.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rwgate.frontends.cli.main import main
from rwgate.sources.snapshot.store import import_files

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RECS1_TEX = (
    r"Novel function of {RECS1} as a negative regulator of {TNF}-$\alpha$-induced"
    r" {NF}-$\kappa${B} activation"
)


def _check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], bib: str
) -> tuple[int, dict[str, dict]]:
    (tmp_path / "refs.bib").write_text(bib, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code = main(["check", "--offline", "--policy", "strict", "--format", "json", "refs.bib"])
    report = json.loads(capsys.readouterr().out)
    return code, {c["key"]: c for c in report["citations"]}


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RWGATE_NO_CACHE", "1")
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(tmp_path / "rw.sqlite"))
    return tmp_path / "rw.sqlite"


@pytest.mark.parametrize("rows", ["rw-recs1-unicode.csv", "rw-recs1-spelled.csv"])
def test_a_doi_less_tex_title_is_flagged_by_its_registry_title(
    env: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    rows: str,
) -> None:
    import_files(env, [FIXTURES / "tex-titles" / rows])
    bib = f"@article{{recs, title = {{{RECS1_TEX}}}, journal = {{Cellular Signalling}}"
    bib += ", year = 2012}\n"
    code, cited = _check(tmp_path, monkeypatch, capsys, bib)
    recs = cited["recs"]
    assert recs["status"] == "retracted", recs
    assert "title" in recs["basis"]
    assert "RECS1" in recs["title"]  # the registry row's title (its Greek as the row writes it)
    assert code == 1


@pytest.mark.parametrize(
    "doi",
    [
        r"{10.1016/S0140\-6736(97)11096-0}",  # issue 45: clean under strict
        r"{10.1016/S0140\-6736\(97\)11096\-0}",
        r"{10.1016/S0140-\-6736(97)11096-0}",  # a hyphenation point beside the hyphen
    ],
)
def test_an_escaped_hyphen_in_a_doi_is_wakefields_doi(
    env: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    doi: str,
) -> None:
    import_files(env, [FIXTURES / "rw" / "rw-extract-2025.csv"], allow_shrink=True)  # full
    code, cited = _check(tmp_path, monkeypatch, capsys, f"@article{{w, doi = {doi}}}\n")
    assert cited["w"]["status"] == "retracted", cited["w"]
    assert cited["w"]["doi"] == "10.1016/s0140-6736(97)11096-0"
    assert code == 1
