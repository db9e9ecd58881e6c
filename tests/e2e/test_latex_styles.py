"""Issue 18: the note lands in the PDF with the .bbl every real journal style writes.

Each case builds one short paper with a class and a ``.bst`` from TeX Live (ACM's acmart with
ACM-Reference-Format, IEEEtran, Springer's llncs with splncs04, Elsevier's elsarticle-num, APS's
revtex4-2 with apsrev4-2, amsplain, alpha, natbib's abbrvnat) through rw-latexmk: the note is
typeset once, inside the retracted work's entry and nowhere else; strict refuses and leaves no PDF.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from example_data import entry
from test_latex_build import pdf_text, rw_latexmk, squeeze

from conftest import require_tool

NOTE = squeeze("Retracted 2010; notice doi:10.1016/s0140-6736(10)60175-4")

STYLES = {
    "acmart": (r"\documentclass[sigconf,nonacm]{acmart}", "ACM-Reference-Format"),
    "IEEEtran": (r"\documentclass[conference]{IEEEtran}", "IEEEtran"),
    "llncs": (r"\documentclass{llncs}", "splncs04"),
    "elsarticle": (r"\documentclass{elsarticle}", "elsarticle-num"),
    "revtex": (r"\documentclass[aps,prl]{revtex4-2}", "apsrev4-2"),
    "amsplain": (r"\documentclass{amsart}", "amsplain"),
    "alpha": (r"\documentclass{article}", "alpha"),
    "abbrvnat": (r"\documentclass{article}\usepackage{natbib}", "abbrvnat"),
}


@pytest.fixture
def paper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_crossref) -> Path:
    require_tool("latexmk")
    refs = "\n".join(entry(key) for key in ("kucsko2013", "wakefield1998", "watson1953"))
    (tmp_path / "refs.bib").write_text(refs, encoding="utf-8")
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("style", sorted(STYLES))
def test_every_journal_style_prints_the_note_in_the_entry(paper: Path, style: str) -> None:
    documentclass, bst = STYLES[style]
    if subprocess.run(["kpsewhich", f"{bst}.bst"], capture_output=True).returncode:
        require_tool(f"{bst}.bst (texlive-publishers)")
    (paper / "paper.tex").write_text(
        f"{documentclass}\n\\begin{{document}}\n\\title{{T}}\\author{{A}}\\maketitle\n"
        "Thermometry \\cite{kucsko2013}, vaccines \\cite{wakefield1998}, DNA \\cite{watson1953}.\n"
        f"\\bibliographystyle{{{bst}}}\n\\bibliography{{refs}}\n\\end{{document}}\n",
        encoding="utf-8",
    )
    built = rw_latexmk("paper.tex")
    assert built.returncode == 0, built.stderr[-3000:]
    text = pdf_text(paper / "paper.pdf")
    assert text.count(NOTE) == 1, text[-1500:]
    # Inside Wakefield's entry: after his name, before the next entry's authors.
    after = text[text.rindex("Wakefield") :]
    assert NOTE in after and after.index(NOTE) < min(
        after.find(name) if name in after else len(after) for name in ("Kucsko", "Watson")
    )

    strict = rw_latexmk("--policy", "strict", "paper.tex")
    assert strict.returncode == 1 and "wakefield1998" in strict.stderr.split("gate FAILED")[-1]
    assert not (paper / "paper.pdf").exists()
