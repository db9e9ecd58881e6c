"""Issue 28: a Latin-1 document citing a Latin-1 key, with real pdflatex and BibTeX.

With ``\\usepackage[T1]{fontenc}\\usepackage[latin1]{inputenc}`` LaTeX writes the key of
``\\cite{m\\xfcller2010}`` into the ``.aux`` byte for byte, and BibTeX matches it byte for byte
with the entry of a Latin-1 ``.bib``: the PDF prints the retracted work. rwgate read the ``.aux``
(and the ``.tex``) with replacement characters, so the key matched nothing: ``missing_entry`` (a
warning), no note in the PDF, and strict passed. Now they are read as the ``.bib`` is (each byte
that is not UTF-8 one Latin-1 character): the entry is judged, its note is in the PDF, strict
fails. The work is the fixture's Wakefield 1998 (Crossref metadata)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_latex_build import BIN, pdf_text, rw_latexmk

from conftest import require_tool
from fakes.crossref import FakeCrossref

KEY = "m\xfcller2010"
TEX = (
    b"\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage[latin1]{inputenc}\n"
    b"\\begin{document}\nM\xfcller's study \\cite{m\xfcller2010}; a caf\xe9 \\cite{cafe2001}.\n"
    b"\\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}\n"
)
BIB = (
    b"@article{m\xfcller2010, author = {A. J. Wakefield and S. M\xfcller},\n"
    b"  title = {Ileal-lymphoid-nodular hyperplasia}, journal = {The Lancet}, year = 1998,\n"
    b"  doi = {10.1016/S0140-6736(97)11096-0}}\n"
    b"@article{cafe2001, author = {J. Caf\xe9}, title = {Na\xefve}, journal = {J}, year = 2001}\n"
)


@pytest.fixture
def folder(tmp_path: Path, fake_crossref: FakeCrossref, monkeypatch: pytest.MonkeyPatch) -> Path:
    here = tmp_path / "latin1"
    here.mkdir()
    (here / "paper.tex").write_bytes(TEX)
    (here / "refs.bib").write_bytes(BIB)
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.chdir(here)
    return here


def _statuses(*args: str) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "rwgate", "check", "--format", "json", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return {c["key"]: c["status"] for c in json.loads(done.stdout)["citations"]}


def test_the_sources_are_read_as_bibtex_reads_bytes(folder: Path) -> None:
    assert _statuses("paper.tex")[KEY] == "retracted"


def test_a_latin1_key_gets_its_note_and_strict_fails(folder: Path) -> None:
    require_tool("latexmk")
    built = rw_latexmk("paper.tex")
    said = built.stdout + built.stderr
    assert built.returncode == 0, said[-3000:]
    assert b"\\citation{m\xfcller2010}" in (folder / "paper.aux").read_bytes()  # as TeX wrote it
    assert b"\\bibitem{m\xfcller2010}" in (folder / "paper.bbl").read_bytes()  # BibTeX printed it
    assert "missing_entry" not in said
    text = pdf_text(folder / "paper.pdf")
    assert "Ileal-lymphoid-nodular" in text and "Retracted2010" in text, text
    assert (folder / "refs.bib").read_bytes() == BIB and (folder / "paper.tex").read_bytes() == TEX
    assert _statuses("paper.tex")[KEY] == "retracted"  # read from the fresh .aux now
    strict = rw_latexmk("--policy", "strict", "paper.tex")
    assert strict.returncode == 1, (strict.stdout + strict.stderr)[-3000:]
    assert KEY in strict.stderr
    assert not (folder / "paper.pdf").exists()
