"""The six BibTeX parity cases of issue 13, through rw-latexmk with real BibTeX: the retracted
work's entry in the PDF carries its note (default policy), and strict refuses the build."""

from __future__ import annotations

import pytest
from test_latex_build import doc, pdf_text, rw_latexmk  # noqa: F401 (fixtures)

from fakes.crossref import FakeCrossref

W = "10.1016/S0140-6736(97)11096-0"
TEX = (
    "\\documentclass{article}\\begin{document}See \\cite{w}."
    "\\bibliographystyle{plain}\\bibliography{cases}\\end{document}\n"
)
CASES = {
    "space after @": f"@ article{{w, author={{A. Wakefield}}, title={{Ileal}}, journal={{Lancet}},"
    f" year=1998, doi={{{W}}}}}\n",
    "string redefined": '@string{d = "10.1/not-this"}\n@string{d = "' + W + '"}\n'
    "@article{w, author={A. Wakefield}, title={Ileal}, journal={Lancet}, year=1998, doi=d}\n"
    '@string{d = "10.1/nor-this"}\n',
    "crossref": "@article{w, author={A. Wakefield}, title={Ileal}, crossref={lancet}}\n"
    f"@proceedings{{lancet, title={{The Lancet}}, year=1998, doi={{{W}}}}}\n",
    "unclosed entry": f"@article{{w, author={{A. Wakefield}}, title={{Ileal}}, year=1998,"
    f" doi={{{W}}},\n@article{{other, title={{x}}}}\n",
    "undefined macro": f'@article{{w, title={{Ileal}}, year=1998, doi="{W}" # nosuchmacro}}\n',
}
# BibTeX and pandoc read the undefined-macro DOI differently: both readings are judged and the
# retracted one (BibTeX's, the one the PDF prints) decides, so it gets its note too (issue 28).
NO_NOTE: set[str] = set()


@pytest.mark.parametrize("case", sorted(CASES))
def test_parity_case_through_rw_latexmk(doc, case: str, fake_crossref: FakeCrossref) -> None:  # noqa: F811
    (doc / "cases.tex").write_text(TEX, encoding="utf-8")
    (doc / "cases.bib").write_text(CASES[case], encoding="utf-8")
    built = rw_latexmk("-f", "cases.tex")  # -f: past BibTeX's own errors, as plain latexmk -f
    # BibTeX itself reports the unclosed entry (latexmk -f then exits 12, as plain latexmk does);
    # the .bbl it wrote is annotated all the same.
    assert built.returncode == (12 if case == "unclosed entry" else 0), built.stderr
    text = pdf_text(doc / "cases.pdf")
    if case not in NO_NOTE:
        assert "Retracted2010" in text, (case, text)  # pdf_text squeezes white space
    strict = rw_latexmk("--policy", "strict", "-g", "cases.tex")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "w: " in strict.stderr and not (doc / "cases.pdf").exists()


def test_utf16_bib_is_judged_and_strict_refuses(doc, fake_crossref: FakeCrossref) -> None:  # noqa: F811
    """BibTeX cannot read a UTF-16 .bib (the PDF has no bibliography); rwgate reads it, finds the
    retracted work, and strict refuses the build instead of passing it."""
    (doc / "cases.tex").write_text(TEX, encoding="utf-8")
    entry = f"@article{{w, title={{Ileal}}, year=1998, doi={{{W}}}}}\n"
    (doc / "cases.bib").write_bytes(b"\xff\xfe" + entry.encode("utf-16-le"))
    strict = rw_latexmk("--policy", "strict", "cases.tex")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "w: retracted" in strict.stderr
