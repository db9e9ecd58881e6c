"""Issue 48: one identity stage between the references and the sources (rwgate.identify).

Real CLI entry points, real HTTP to the loopback fake Crossref (which is also the DOI resolver
here) and fake OpenAlex, a real snapshot built from the Retraction Watch fixture rows. The
figures are those of the README's Design section: one look-up cache per
``check --recover-dois`` (was 3), one ask of the sources per chunk (was 2: the title matches
were asked again), and one reading of an entry's identifiers for check and verify.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakes.crossref import FakeCrossref
from fakes.openalex import FakeOpenAlex
from rwgate.frontends.cli.main import main
from rwgate.sources.cache import Cache
from rwgate.sources.snapshot.store import import_files

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
WAKEFIELD = (
    "Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive developmental "
    "disorder in children"
)
WAKEFIELD_DOI = "10.1016/s0140-6736(97)11096-0"
LACOUR = "When contact changes minds: {An} experiment on transmission of support for gay equality"
ARXIV_DOI = "10.48550/arxiv.1706.03762"
VASWANI = r"""@misc{vaswani2017,
  author        = {Vaswani, Ashish and Shazeer, Noam and others},
  title         = {Attention is all you need},
  year          = {2017},
  eprint        = {1706.03762},
  archiveprefix = {arXiv}
}
"""


@pytest.fixture
def env(
    tmp_path: Path, fake_crossref: FakeCrossref, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[FakeCrossref, FakeOpenAlex]]:
    with FakeOpenAlex() as fake_openalex:
        monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
        monkeypatch.setenv("RWGATE_DOI_URL", fake_crossref.url)  # shortDOIs and agencies
        monkeypatch.setenv("RWGATE_OPENALEX_URL", fake_openalex.url)
        monkeypatch.setenv("RWGATE_MAX_SECONDS", "4")
        monkeypatch.setenv("RWGATE_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.chdir(tmp_path)
        yield fake_crossref, fake_openalex


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["check", "--no-history", "--format", "json", *args])
    report = json.loads(capsys.readouterr().out)
    return code, {c["key"]: c for c in report["citations"]}


def test_check_with_recovery_opens_one_look_up_cache(
    env: tuple[FakeCrossref, FakeOpenAlex],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A shortDOI, a DOI-less entry recovered by title search, a DOI: every service shares the
    check's one cache (before: the shortDOI resolver's, the searches' and the sources')."""
    (tmp_path / "refs.bib").write_text(
        "@article{short, title = {Ileal}, doi = {10/f8vrcz}}\n"
        "@article{lacour2014, author = {LaCour, Michael J. and Green, Donald P.},"
        f" title = {{{LACOUR}}}, journal = {{Science}}, year = {{2015}}}}\n",
        encoding="utf-8",
    )
    opened: list[Cache] = []
    real_init = Cache.__init__

    def counted(self: Cache, *args: Any, **kwargs: Any) -> None:
        opened.append(self)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(Cache, "__init__", counted)
    _, cited = _check(capsys, "--recover-dois", "refs.bib")
    assert cited["short"]["doi"] == WAKEFIELD_DOI  # resolved
    assert cited["lacour2014"]["doi"] == "10.1126/science.1256151"  # recovered
    assert cited["lacour2014"]["status"] == "retracted"
    assert len(opened) == 1


def test_title_matches_are_asked_with_the_chunk_once(
    env: tuple[FakeCrossref, FakeOpenAlex], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An entry with a DOI and one matched by title in the snapshot: one batched request to
    Crossref for both (before: a second one for the title match)."""
    fake_crossref, _ = env
    snapshot = tmp_path / "rw.sqlite"
    import_files(snapshot, sorted((FIXTURES / "rw").glob("*.csv")))
    (tmp_path / "refs.bib").write_text(
        "@article{watson, title = {Molecular Structure of Nucleic Acids}, year = {1953},"
        " doi = {10.1038/171737a0}}\n"
        f"@article{{wakefield, title = {{{WAKEFIELD}}}, journal = {{The Lancet}},"
        " year = {1998}}\n",
        encoding="utf-8",
    )
    _, cited = _check(capsys, "--no-cache", "--snapshot", str(snapshot), "refs.bib")
    assert cited["wakefield"]["status"] == "retracted"
    assert cited["wakefield"]["basis"][-1] == "title"
    asked = fake_crossref.requests_to("/works")
    assert len(asked) == 1, [(r.path, r.query) for r in asked]
    assert f"doi:{WAKEFIELD_DOI}" in asked[0].query["filter"][0].lower()


def test_an_arxiv_only_entry_is_the_same_work_to_check_and_verify(
    env: tuple[FakeCrossref, FakeOpenAlex], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The identifiers of an entry are read once (rwgate.identify.ids): before, check called an
    arXiv-only entry ``no_doi`` while verify looked up its DataCite DOI."""
    (tmp_path / "refs.bib").write_text(VASWANI, encoding="utf-8")
    _, cited = _check(capsys, "refs.bib")
    checked = cited["vaswani2017"]
    assert checked["doi"] == ARXIV_DOI and checked["status"] != "no_doi"
    main(["verify", "--format", "json", "refs.bib"])
    [verified] = json.loads(capsys.readouterr().out)["results"]
    assert verified["matched"]["doi"] == ARXIV_DOI
    assert verified["integrity"]["doi"] == checked["doi"]
    assert verified["integrity"]["status"] == checked["status"]
