"""Issue 18: every bibliography of a BibTeX build is judged, not only the main ``.aux``.

A real multibib manuscript (tests/fixtures/real-latex/README.md) with a retracted work cited only
in its Methods list, and bibunits and chapterbib documents, through rw-latexmk and ``rwgate check``,
default and strict. latexmk itself runs bibtex on every ``.bbl`` the log names (through the hook),
so the note was already printed; the gate judged the main ``.aux`` alone and let strict pass.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from example_data import RWGATE, entry
from test_latex_build import entry_text, pdf_text, rw_latexmk, squeeze

from conftest import require_tool

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "fixtures" / "real-latex"
PHRS = REAL / "phrs-multibib"
WAKEFIELD = "10.1016/S0140-6736(97)11096-0"  # retracted 2010 (Retraction Watch record 4036)
VICTIM = "10.1038/s41594-019-0189-y"  # hic3d_alavattam2019, cited only in the Methods list
NOTE = squeeze("Retracted 2010; notice doi:10.1016/s0140-6736(10)60175-4")


def _png() -> bytes:
    """A 1x1 grey PNG (the manuscript's raster figures)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0\0")) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


@pytest.fixture
def phrs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_crossref) -> Path:
    """The multibib manuscript, its figures blank, every DOI known (clean) but the victim's."""
    require_tool("latexmk")
    folder = tmp_path / "submission"
    shutil.copytree(PHRS, folder)
    bib = (folder / "bibliography.bib").read_text(encoding="utf-8")
    assert bib.count(VICTIM) == 1
    (folder / "bibliography.bib").write_text(bib.replace(VICTIM, WAKEFIELD), encoding="utf-8")
    for doi in set(re.findall(r"doi\s*=\s*\{(10\.[^}\s]+)\}", bib)) - {VICTIM}:
        fake_crossref.add_synthetic(doi.lower(), title="A work of the manuscript")
    tex = (folder / "paper.tex").read_text(encoding="utf-8")
    for figure in set(re.findall(r"(?:includegraphics|overpic\})(?:\[[^\]]*\])?\{([^}]+)\}", tex)):
        path = folder / figure
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".png":
            path.write_bytes(_png())
        else:
            shutil.copy(REAL / "blank.pdf", path)
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    monkeypatch.chdir(folder)
    return folder


def _check(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [RWGATE, "check", "--no-history", *args, str(folder / "paper.tex")]
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace", check=False)


def test_multibib_methods_list_annotated_and_strict_refuses(phrs: Path) -> None:
    before = _check(phrs, "--policy", "strict")  # no build yet: read from the sources
    assert before.returncode == 1, before.stdout + before.stderr
    assert "hic3d_alavattam2019" in before.stdout

    run = rw_latexmk("paper.tex")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "annotated hic3d_alavattam2019 in Meth.bbl" in run.stderr
    assert re.search(r"rwgate: 5\d cited, .* 1 annotated", run.stderr), run.stderr[-2000:]
    text = pdf_text(phrs / "paper.pdf")
    assert text.count(NOTE) == 1
    methods = entry_text(text, "MethodsReferences")
    assert NOTE in entry_text(methods, "Alavattam", "[")  # at its own entry, in the Methods list
    assert NOTE not in text[: text.index("MethodsReferences")]

    after = _check(phrs, "--policy", "strict")  # the .aux files now: the same verdict
    assert after.returncode == 1 and "hic3d_alavattam2019" in after.stdout

    strict = rw_latexmk("--policy", "strict", "paper.tex")
    assert strict.returncode == 1, strict.stderr[-3000:]
    assert "gate FAILED" in strict.stderr and "hic3d_alavattam2019" in strict.stderr
    assert not (phrs / "paper.pdf").exists() and (phrs / "paper.pdf.rejected").is_file()


BIBUNITS = r"""\documentclass{article}
\usepackage{bibunits}
\defaultbibliography{refs}
\defaultbibliographystyle{plain}
\begin{document}
\begin{bibunit}
First unit \cite{kucsko2013}.
\putbib
\end{bibunit}
\begin{bibunit}
Second unit \cite{wakefield1998}.
\putbib
\end{bibunit}
\end{document}
"""

CHAPTERBIB = r"""\documentclass{report}
\usepackage[sectionbib]{chapterbib}
\begin{document}
\include{ch1}
\include{ch2}
\end{document}
"""


def _chapter(title: str, key: str) -> str:
    return f"\\chapter{{{title}}}\nSee \\cite{{{key}}}.\n\\bibliographystyle{{plain}}\n" + (
        "\\bibliography{refs}\n"
    )


@pytest.fixture
def units(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_crossref) -> Path:
    """A bibunits document and a chapterbib book, the retracted work cited only in the second
    unit (chapter); the main .aux cites nothing."""
    require_tool("latexmk")
    refs = entry("kucsko2013") + "\n" + entry("wakefield1998")
    (tmp_path / "refs.bib").write_text(refs, encoding="utf-8")
    (tmp_path / "bu.tex").write_text(BIBUNITS, encoding="utf-8")
    (tmp_path / "book.tex").write_text(CHAPTERBIB, encoding="utf-8")
    (tmp_path / "ch1.tex").write_text(_chapter("One", "kucsko2013"), encoding="utf-8")
    (tmp_path / "ch2.tex").write_text(_chapter("Two", "wakefield1998"), encoding="utf-8")
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(("tex", "bbl"), [("bu", "bu2.bbl"), ("book", "ch2.bbl")])
def test_bibunits_and_chapterbib_units_are_judged(units: Path, tex: str, bbl: str) -> None:
    run = rw_latexmk(f"{tex}.tex")
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"annotated wakefield1998 in {bbl}" in run.stderr
    assert "2 cited, 2 checked: 0 failed, 1 annotated" in run.stderr
    text = pdf_text(units / f"{tex}.pdf")
    assert text.count(NOTE) == 1
    assert NOTE in entry_text(text, "Wakefield")

    strict = rw_latexmk("--policy", "strict", f"{tex}.tex")
    assert strict.returncode == 1, strict.stderr[-3000:]
    assert "wakefield1998" in strict.stderr.split("gate FAILED")[-1]
    assert not (units / f"{tex}.pdf").exists()

    check = subprocess.run(
        [RWGATE, "check", "--no-history", "--policy", "strict", f"{tex}.tex"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 1 and "wakefield1998" in check.stdout, check.stdout
