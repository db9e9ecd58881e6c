"""Issue 45 item 3: chapters LaTeX finds through ``TEXINPUTS`` (DESIGN.md rule 3).

A real public thesis keeps its chapters in a folder its build puts on ``TEXINPUTS``
(``\\include{intro}`` with ``chapters/intro.tex``): ``rwgate check --policy strict`` said
"included file not found" for each chapter, then judged 0 citations and exited 0, while a
missing bibliography was refused with exit 2. The includes are now resolved through kpsewhich,
with the user's environment (one process for all the names of a file); what is still not found
is ``cannot judge`` under strict (exit 2) and a visible warning under the default policy.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from latex_helpers import enter_folder, rwgate_check

from conftest import require_tool
from fakes.crossref import FakeCrossref

MAIN = (
    "\\documentclass{report}\n\\begin{document}\n"
    "\\include{intro}\n\\include{method}\n"
    "\\bibliographystyle{plain}\n\\bibliography{thesis}\n\\end{document}\n"
)
BIB = """@article{wakefield1998,
  author = {Wakefield, A. J.},
  title = {Ileal-lymphoid-nodular hyperplasia},
  journal = {The Lancet}, year = {1998},
  doi = {10.1016/S0140-6736(97)11096-0},
}
@article{kucsko2013,
  author = {Kucsko, G.}, title = {Nanometre-scale thermometry in a living cell},
  journal = {Nature}, year = {2013}, doi = {10.1038/nature12373},
}
"""


@pytest.fixture
def thesis(tmp_path: Path, fake_crossref: FakeCrossref, monkeypatch: pytest.MonkeyPatch) -> Path:
    require_tool("kpsewhich")
    folder = tmp_path / "thesis"
    (folder / "chapters").mkdir(parents=True)
    (folder / "thesis.tex").write_text(MAIN, encoding="utf-8")
    (folder / "thesis.bib").write_text(BIB, encoding="utf-8")
    (folder / "chapters" / "intro.tex").write_text("Vaccines \\cite{wakefield1998}.\n", "utf-8")
    (folder / "chapters" / "method.tex").write_text("Heat \\cite{kucsko2013}.\n", "utf-8")
    return enter_folder(folder, fake_crossref, monkeypatch)


def test_chapters_found_through_texinputs_are_judged(
    thesis: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEXINPUTS", "./chapters//:")
    strict = rwgate_check("--policy", "strict", "thesis.tex")
    said = strict.stdout + strict.stderr
    assert strict.returncode == 1, said
    assert "wakefield1998: retracted" in said.lower()
    assert "2 cited, 2 checked" in said and "not found" not in said


def test_an_include_nothing_finds_cannot_be_judged_under_strict(thesis: Path) -> None:
    strict = rwgate_check("--policy", "strict", "thesis.tex")  # no TEXINPUTS
    said = strict.stdout + strict.stderr
    assert strict.returncode == 2, said
    assert "included file not found: intro" in said and "included file not found: method" in said
    default = rwgate_check("thesis.tex")
    said = default.stdout + default.stderr
    assert default.returncode == 0, said
    assert "included file not found: intro" in said  # visible, never a silent pass
