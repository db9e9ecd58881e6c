"""Issue 49: ``rwgate check`` asks arXiv and bioRxiv/medRxiv about preprints.

Real ``rwgate check`` (in process), real HTTP to the loopback fakes of arXiv, bioRxiv and Crossref
(RWGATE_ARXIV_URL, RWGATE_ARXIV_OAI_URL, RWGATE_BIORXIV_URL, RWGATE_CROSSREF_URL) and a real
snapshot with harvested withdrawals for the offline case. arXiv's pace (one request per 3 s) is
tested in tests/unit/test_arxiv_source.py; here the process's pacer does not wait.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakes.arxiv import FakeArxiv, live_paper
from fakes.biorxiv import FakeBiorxiv
from fakes.crossref import FakeCrossref
from rwgate.frontends.cli.main import main
from rwgate.sources.net.ratelimit import Pacer, use_pacer
from rwgate.sources.snapshot import preprints as snapshot_preprints
from rwgate.sources.snapshot.store import import_files

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

WAKEFIELD_DOI = "10.1016/s0140-6736(97)11096-0"
LIVE = "2203.04567"  # its comment mentions "withdrawn"; arXivRaw says the latest version is not
WITHDRAWN = "2104.01234"
PUBLISHED = "2301.00001"  # added below: published as the Wakefield paper
BIORXIV_WITHDRAWN = "10.1101/2020.01.30.927871"


@pytest.fixture
def env(
    tmp_path: Path, fake_crossref: FakeCrossref, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[FakeArxiv, FakeBiorxiv]]:
    previous = use_pacer(Pacer(interval=0.0))
    with FakeArxiv() as arxiv, FakeBiorxiv() as biorxiv:
        arxiv.add_paper(live_paper(PUBLISHED, "A preprint later published", WAKEFIELD_DOI))
        monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
        monkeypatch.setenv("RWGATE_DOI_URL", fake_crossref.url)
        monkeypatch.setenv("RWGATE_ARXIV_URL", arxiv.api_url)
        monkeypatch.setenv("RWGATE_ARXIV_OAI_URL", arxiv.oai_url)
        monkeypatch.setenv("RWGATE_BIORXIV_URL", biorxiv.url)
        monkeypatch.setenv("RWGATE_MAX_SECONDS", "10")
        monkeypatch.chdir(tmp_path)
        yield arxiv, biorxiv
    use_pacer(previous)


def _bib(path: Path, **entries: str) -> Path:
    """One ``@misc`` per key: an arXiv eprint (``arxiv:ID``) or a DOI."""
    text = ""
    for key, ident in entries.items():
        field = f"eprint = {{{ident[6:]}}}, archiveprefix = {{arXiv}}"
        if not ident.startswith("arxiv:"):
            field = f"doi = {{{ident}}}"
        text += f"@misc{{{key},\n  title = {{Some preprint}},\n  year = {{2021}},\n  {field}\n}}\n"
    path.write_text(text, encoding="utf-8")
    return path


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], Any]:
    code = main(["check", "--no-history", "--format", "json", *args])
    report = json.loads(capsys.readouterr().out)
    return code, {c["key"]: c for c in report["citations"]}, report


def test_an_arxiv_only_entry_arxiv_vouches_for_passes_strict(
    env: tuple[FakeArxiv, FakeBiorxiv], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refs = _bib(tmp_path / "refs.bib", live=f"arxiv:{LIVE}")
    code, cited, report = _check(capsys, "--policy", "strict", str(refs))
    assert cited["live"]["status"] == "clean", cited["live"]
    assert "arxiv" in cited["live"]["basis"]
    assert "not withdrawn on arXiv" in cited["live"]["reason"]
    assert code == 0
    assert "arxiv" in [s["name"] for s in report["sources"]]
    assert env[0].requests_to("/api/query"), "arXiv was not asked"


def test_a_withdrawn_arxiv_paper_fails_strict_with_its_reason(
    env: tuple[FakeArxiv, FakeBiorxiv], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refs = _bib(tmp_path / "refs.bib", gone=f"arxiv:{WITHDRAWN}")
    code, cited, _ = _check(capsys, "--policy", "strict", str(refs))
    assert cited["gone"]["status"] == "withdrawn", cited["gone"]
    [notice] = cited["gone"]["notices"]
    assert "error in the pr" in notice["label"]
    assert cited["gone"]["reason"].startswith("withdrawn on arXiv: ")
    assert "error in the pr" in cited["gone"]["reason"]
    assert code != 0


def test_a_withdrawn_biorxiv_preprint_is_withdrawn(
    env: tuple[FakeArxiv, FakeBiorxiv], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refs = _bib(tmp_path / "refs.bib", bio=BIORXIV_WITHDRAWN)
    code, cited, _ = _check(capsys, "--policy", "strict", str(refs))
    assert cited["bio"]["status"] == "withdrawn", cited["bio"]
    assert code != 0


def test_a_published_and_retracted_preprint_shows_the_journal_retraction(
    env: tuple[FakeArxiv, FakeBiorxiv], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refs = _bib(tmp_path / "refs.bib", pub=f"arxiv:{PUBLISHED}")
    code, cited, _ = _check(capsys, "--policy", "strict", str(refs))
    assert cited["pub"]["status"] == "retracted", cited["pub"]
    assert f"published as doi:{WAKEFIELD_DOI}" in cited["pub"]["reason"]
    assert cited["pub"]["doi"] == f"10.48550/arxiv.{PUBLISHED}"
    assert code != 0


def test_a_biorxiv_preprint_published_as_a_retracted_paper_is_retracted(
    env: tuple[FakeArxiv, FakeBiorxiv], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bioRxiv's ``published`` names the LaCour paper (retracted in the fake Crossref)."""
    refs = _bib(tmp_path / "refs.bib", bio="10.1101/2019.12.20.884999")
    _, cited, _ = _check(capsys, str(refs))
    assert cited["bio"]["status"] == "retracted", cited["bio"]
    assert "published as doi:10.1126/science.1256151" in cited["bio"]["reason"]


def test_a_preprint_server_without_withdrawals_is_unverified(
    env: tuple[FakeArxiv, FakeBiorxiv],
    fake_crossref: FakeCrossref,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Crossref knows the SSRN paper and lists no notice: that is not clean (no withdrawal of
    posted content is in Crossref)."""
    fake_crossref.add_synthetic("10.2139/ssrn.3550020", title="Some preprint", journal="SSRN")
    refs = _bib(tmp_path / "refs.bib", ssrn="10.2139/ssrn.3550020")
    _, cited, _ = _check(capsys, str(refs))
    assert cited["ssrn"]["status"] == "unverified", cited["ssrn"]
    assert "SSRN does not publish withdrawals" in cited["ssrn"]["reason"]


def test_a_check_without_preprints_does_not_name_the_preprint_sources(
    env: tuple[FakeArxiv, FakeBiorxiv], capsys: pytest.CaptureFixture[str]
) -> None:
    _, cited, report = _check(capsys, "--doi", WAKEFIELD_DOI)
    assert [c["status"] for c in cited.values()] == ["retracted"]
    names = [s["name"] for s in report["sources"]]
    assert "arxiv" not in names and "biorxiv" not in names, names
    assert not env[0].requests_to("/api/query")


def _harvested_snapshot(path: Path) -> Path:
    conn = sqlite3.connect(path)
    now = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    harvest = snapshot_preprints.Harvested(
        part="arxiv",
        source="arXiv OAI-PMH",
        withdrawn=[(WITHDRAWN, 2, "2021-05-12", "an error in the proof", None, None)],
        through=dt.date(2026, 11, 1),
    )
    snapshot_preprints.store(conn, harvest, now)
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize("folder", ["", "data #2 ?v=1 %41"])
def test_offline_the_harvested_withdrawals_answer(
    env: tuple[FakeArxiv, FakeBiorxiv],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    folder: str,
) -> None:
    """In any folder: a ``#``, ``?`` or ``%`` in its name once made SQLite open another file."""
    (tmp_path / folder).mkdir(exist_ok=True)
    snapshot = _harvested_snapshot(tmp_path / folder / "snap.sqlite")
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(snapshot))
    refs = _bib(tmp_path / "refs.bib", gone=f"arxiv:{WITHDRAWN}", live=f"arxiv:{LIVE}")
    _, cited, _ = _check(capsys, "--offline", str(refs))
    assert cited["gone"]["status"] == "withdrawn", cited["gone"]
    assert cited["gone"]["notices"][0]["label"] == "an error in the proof"
    assert cited["live"]["status"] == "unverified", cited["live"]
    assert not env[0].requests_to("/api/query")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        {"refs.bib", folder or "snap.sqlite"}
    )


def test_offline_without_harvested_data_a_preprint_is_unverified(
    env: tuple[FakeArxiv, FakeBiorxiv],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A complete Retraction Watch snapshot that does not list the paper clears no preprint."""
    snapshot = tmp_path / "rw.sqlite"
    import_files(snapshot, [FIXTURES / "rw" / "rw-extract-2025.csv"], allow_shrink=True)
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(snapshot))
    refs = _bib(tmp_path / "refs.bib", gone=f"arxiv:{WITHDRAWN}")
    _, cited, _ = _check(capsys, "--offline", str(refs))
    assert cited["gone"]["status"] == "unverified", cited["gone"]
    assert "arXiv withdrawals could not be checked" in cited["gone"]["reason"]
