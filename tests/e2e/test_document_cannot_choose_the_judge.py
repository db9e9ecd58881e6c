"""The document is judged; it does not choose the judge (issue 12).

A manuscript written by someone else ships a crafted cache (a pickle that would create a file when
loaded) and points at it from its metadata, or from a pyproject.toml beside it, and asks for its
report to be written somewhere. In every front end (rwgate check, rw-filter, rw-latexmk, MCP):
nothing runs, nothing is written, and a one-line warning names the key and the file. The invoking
user's own cache is data only: a pickled entry in it is refused too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import diskcache
import pytest
from pandoc_build import pandoc, rw_filter

from conftest import require_tool
from fakes.crossref import FakeCrossref

WAKEFIELD = "10.1016/s0140-6736(97)11096-0"
BIB = (
    "@article{wakefield1998, title = {Ileal-lymphoid-nodular hyperplasia}, year = 1998,\n"
    "  doi = {10.1016/S0140-6736(97)11096-0}}\n"
)


class _Payload:
    """Unpickling this creates ``marker``: proof that code from the cache ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def _plant_cache(folder: Path, marker: Path) -> None:
    """A cache with a pickled entry under the key rwgate would read, in both layouts."""
    for where in (folder, folder / "json"):
        where.mkdir(parents=True, exist_ok=True)
        with diskcache.Cache(str(where)) as evil:
            evil.set(f"crossref:work:{WAKEFIELD}", _Payload(marker))


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    doc = tmp_path / "doc"
    doc.mkdir()
    marker = tmp_path / "PWNED"
    _plant_cache(doc / ".evil", marker)
    (doc / "refs.bib").write_text(BIB, encoding="utf-8")
    (doc / "paper.md").write_text(
        "---\nbibliography: refs.bib\nrwgate:\n  cache_dir: .evil\n  report: stolen.json\n"
        "  crossref_url: http://127.0.0.1:9/\n---\n\nSee [@wakefield1998].\n",
        encoding="utf-8",
    )
    (doc / "pyproject.toml").write_text(
        '[tool.rwgate]\ncache_dir = ".evil"\nreport = "stolen-too.json"\nsnapshot = "x.sqlite3"\n',
        encoding="utf-8",
    )
    return doc, marker


def _env(fake: FakeCrossref, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "RWGATE_CROSSREF_URL": fake.url,
        "RWGATE_CACHE_DIR": str(tmp_path / "user-cache"),
    }


def _assert_refused(doc: Path, marker: Path, text: str) -> None:
    assert not marker.exists(), "code from the document's cache ran"
    assert not (doc / "stolen.json").exists() and not (doc / "stolen-too.json").exists()
    for key in ("cache_dir", "report"):
        assert f"'{key}' ignored: a document sets policy only" in text, text


def test_rwgate_check(hostile: tuple[Path, Path], fake_crossref: FakeCrossref, tmp_path) -> None:
    doc, marker = hostile
    done = subprocess.run(
        [sys.executable, "-m", "rwgate", "check", "paper.md"],
        cwd=doc,
        capture_output=True,
        text=True,
        env=_env(fake_crossref, tmp_path),
    )
    _assert_refused(doc, marker, done.stdout + done.stderr)
    assert "wakefield1998: retracted" in done.stdout.lower()  # judged by the user's Crossref
    assert "paper.md: rwgate metadata: 'crossref_url' ignored" in done.stdout
    assert "pyproject.toml: 'snapshot' ignored" in done.stdout


def test_rw_filter(hostile: tuple[Path, Path], fake_crossref: FakeCrossref, tmp_path) -> None:
    doc, marker = hostile
    done = subprocess.run(
        [pandoc(), "paper.md", "--citeproc", "--filter", rw_filter(), "-o", "out.html"],
        cwd=doc,
        capture_output=True,
        text=True,
        env=_env(fake_crossref, tmp_path),
    )
    assert done.returncode == 0, done.stderr
    _assert_refused(doc, marker, done.stderr)
    assert "rw-retracted" in (doc / "out.html").read_text(encoding="utf-8")


def test_rw_latexmk(hostile: tuple[Path, Path], fake_crossref: FakeCrossref, tmp_path) -> None:
    require_tool("latexmk")
    doc, marker = hostile
    (doc / "paper.tex").write_text(
        "\\documentclass{article}\\begin{document}See \\cite{wakefield1998}."
        "\\bibliographystyle{plain}\\bibliography{refs}\\end{document}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "rwgate", "latexmk", "-pdf", "-quiet", "paper.tex"],
        cwd=doc,
        capture_output=True,
        text=True,
        env=_env(fake_crossref, tmp_path),
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not marker.exists()
    assert not (doc / "stolen-too.json").exists()
    assert "pyproject.toml: 'cache_dir' ignored: a document sets policy only" in done.stderr


def test_mcp(
    hostile: tuple[Path, Path], fake_crossref: FakeCrossref, monkeypatch, tmp_path
) -> None:
    from test_mcp import call, structured

    doc, marker = hostile
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    out = structured(
        call([doc], "rw_check_manuscript", {"path": str(doc / "paper.md"), "detail": True})
    )
    assert not marker.exists()
    assert not (doc / "stolen.json").exists()
    assert [c["status"] for c in out["citations"]] == ["retracted"]
    text = " ".join(out["warnings"])
    assert "'cache_dir' ignored" in text and "'report' ignored" in text


def test_the_users_own_cache_is_data_only(fake_crossref: FakeCrossref, tmp_path: Path) -> None:
    """A pickled entry in the invoking user's cache (a CI cache restored from another branch) is
    refused with a warning and the work is asked again: never loaded."""
    marker = tmp_path / "PWNED"
    cache = tmp_path / "user-cache"
    _plant_cache(cache, marker)
    done = subprocess.run(
        [sys.executable, "-m", "rwgate", "check", "--doi", WAKEFIELD],
        capture_output=True,
        text=True,
        env=_env(fake_crossref, tmp_path),
    )
    assert not marker.exists()
    assert "wakefield1998" not in done.stdout and f"{WAKEFIELD}: retracted" in done.stdout.lower()
    assert "a cache value not stored as data was ignored" in done.stdout
