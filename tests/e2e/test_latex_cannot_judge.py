"""Issue 28: a check from the sources that cannot see the bibliography never passes.

A thesis class that wraps ``\\bibliography`` in its own macro (``\\references{refs}`` in each
chapter) left ``rwgate check thesis.tex`` with every citation ``missing_entry``: warnings, exit 0,
the retracted work never named. Now the macro is followed (class in the document's own folder);
a document whose citations still reach no bibliography is one line, exit 2, in ``rwgate check``
(``--offline`` too: the pre-commit hook), in MCP's ``rw_check_manuscript``; a real build of the
same thesis is read from its ``.aux`` and annotated."""

from __future__ import annotations

from pathlib import Path

import pytest
from latex_helpers import enter_folder, rwgate_check
from test_latex_build import pdf_text, rw_latexmk
from test_mcp import call, error_text, structured

from conftest import require_tool
from fakes.crossref import FakeCrossref

CLS = (
    "\\NeedsTeXFormat{LaTeX2e}\\ProvidesClass{mycls}\\LoadClass{report}\n"
    "\\newcommand*\\references[1]{\\bibliographystyle{plain}\\bibliography{#1}}\n"
)
MAIN = (
    "\\documentclass{mycls}\n\\usepackage{url}\n\\begin{document}\n"
    "\\include{chapter1}\n\\end{document}\n"
)
CHAPTER = "\\chapter{One}\nA claim \\cite{Zhang2018}.\n\\references{dissertation}\n"
BIB = """@article{Zhang2018,
  author = {Wakefield, A. J.},
  title = {Ileal-lymphoid-nodular hyperplasia},
  journal = {The Lancet},
  year = {1998},
  doi = {10.1016/S0140-6736(97)11096-0},
}
"""


@pytest.fixture
def thesis(tmp_path: Path, fake_crossref: FakeCrossref, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "thesis"
    folder.mkdir()
    (folder / "mycls.cls").write_text(CLS, encoding="utf-8")
    (folder / "thesis.tex").write_text(MAIN, encoding="utf-8")
    (folder / "chapter1.tex").write_text(CHAPTER, encoding="utf-8")
    (folder / "dissertation.bib").write_text(BIB, encoding="utf-8")
    return enter_folder(folder, fake_crossref, monkeypatch)


def test_the_class_macro_is_followed_and_the_retracted_work_named(thesis: Path) -> None:
    done = rwgate_check("thesis.tex")
    said = done.stdout + done.stderr
    assert "zhang2018: retracted" in said.lower(), said
    assert "in no bibliography" not in said
    strict = rwgate_check("--policy", "strict", "thesis.tex")
    assert strict.returncode == 1 and "Zhang2018" in strict.stdout + strict.stderr


def test_a_bibliography_nothing_names_is_exit_2_never_a_pass(thesis: Path) -> None:
    (thesis / "mycls.cls").write_text("\\LoadClass{report}\n", encoding="utf-8")
    (thesis / "style.sty").write_text(CLS.split("\n", 1)[1], encoding="utf-8")  # not loaded
    for args in ((), ("--offline",)):  # as CI runs it, and as the pre-commit hook runs it
        done = rwgate_check(*args, "thesis.tex")
        said = done.stdout + done.stderr
        assert done.returncode == 2, said
        lines = [ln for ln in said.splitlines() if "cannot judge from the sources" in ln]
        assert len(lines) == 1 and "build first" in lines[0] and "name the .bib" in lines[0]
        assert "in no bibliography" not in said and "gate passed" not in said


def test_mcp_gives_the_same_one_line_error(thesis: Path, fake_crossref: FakeCrossref) -> None:
    found = structured(call([thesis], "rw_check_manuscript", {"path": str(thesis / "thesis.tex")}))
    assert [c["status"] for c in found["citations"]] == ["retracted"]
    (thesis / "mycls.cls").write_text("\\LoadClass{report}\n", encoding="utf-8")
    text = error_text(call([thesis], "rw_check_manuscript", {"path": str(thesis / "thesis.tex")}))
    assert "cannot judge from the sources" in text


def test_a_real_build_of_the_thesis_is_read_from_its_aux(thesis: Path) -> None:
    require_tool("latexmk")
    built = rw_latexmk("thesis.tex")
    said = built.stdout + built.stderr
    assert built.returncode == 0, said[-3000:]
    assert "zhang2018: retracted" in said.lower()
    assert "Retracted2010" in pdf_text(thesis / "thesis.pdf")
    # The .aux is fresh now: read from it, whatever the class does.
    done = rwgate_check("thesis.tex")
    assert "zhang2018: retracted" in (done.stdout + done.stderr).lower()
