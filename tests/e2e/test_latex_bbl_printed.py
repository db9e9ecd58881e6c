"""Issue 45 for LaTeX: what a ``.bbl`` prints is what is judged.

1. A ``.bbl`` of the ``plain`` family prints no DOI (most arXiv bundles): its entries were
   ``no_doi`` and never matched by title, so ``rw-latexmk --policy strict`` passed a paper
   citing Wakefield 1998 with the work in the PDF and no note. The printed title (the second
   ``\\newblock``), year and journal now go to the title match, as a ``.bib`` entry's do.
2. An entry that prints two DOIs (the preprint, then the journal version) was judged by the
   first: both are judged now, the worse decides.

The bundles are what BibTeX's ``plain`` and ``plainnat`` write (the fixture works' metadata); the
snapshot is built from the real Retraction Watch rows of tests/fixtures/rw.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from test_latex_build import doc, pdf_text, rw_latexmk  # noqa: F401 (fixtures)

from rwgate.sources.snapshot.store import import_files

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TEX = r"""\documentclass{article}
\begin{document}
Vaccines \cite{wakefield1998}; thermometry \cite{kucsko2013}.
\bibliographystyle{plain}
\bibliography{refs}
\end{document}
"""
PLAIN = r"""\begin{thebibliography}{1}

\bibitem{wakefield1998}
A.~J. Wakefield, S.~H. Murch, and A.~Anthony.
\newblock Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and
  pervasive developmental disorder in children.
\newblock {\em The Lancet}, 351:637--641, 1998.

\bibitem{kucsko2013}
G.~Kucsko, P.~C. Maurer, and N.~Y. Yao.
\newblock Nanometre-scale thermometry in a living cell.
\newblock {\em Nature}, 500:54--58, 2013.

\end{thebibliography}
"""
TWO_DOIS = r"""\begin{thebibliography}{1}

\bibitem{wakefield1998}
A.~J. Wakefield, S.~H. Murch, and A.~Anthony.
\newblock Ileal-lymphoid-nodular hyperplasia.
\newblock Preprint, doi:10.1038/nature12373, 1997.
\newblock {\em The Lancet}, 351:637--641, 1998, doi:10.1016/S0140-6736(97)11096-0.

\bibitem{kucsko2013}
G.~Kucsko, P.~C. Maurer, and N.~Y. Yao.
\newblock Nanometre-scale thermometry in a living cell.
\newblock {\em Nature}, 500:54--58, 2013.
\newblock doi:10.1038/nature12373.

\end{thebibliography}
"""


@pytest.fixture
def bundle(doc: Path, monkeypatch: pytest.MonkeyPatch) -> Path:  # noqa: F811
    """An arXiv-style bundle (paper.tex and its .bbl, no .bib) and the registry's snapshot."""
    for old in doc.iterdir():
        if old.is_file():
            old.unlink()
    snapshot = doc.parent / "rw.sqlite"
    import_files(snapshot, sorted((FIXTURES / "rw").glob("*.csv")))
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(snapshot))
    (doc / "paper.tex").write_text(TEX, encoding="utf-8")
    return doc


def _statuses(folder: Path, *args: str) -> tuple[int, dict[str, dict[str, object]]]:
    from rwgate.frontends.cli.main import main

    report = folder / "report.json"
    code = main(["check", "--format", "json", "--output", str(report), *args])
    cited = json.loads(report.read_text(encoding="utf-8"))["citations"]
    return code, {c["key"]: c for c in cited}


def test_a_plain_bbl_without_dois_is_matched_by_title(bundle: Path) -> None:
    (bundle / "paper.bbl").write_text(PLAIN, encoding="utf-8")
    strict = rw_latexmk("--policy", "strict", "paper.tex")
    said = strict.stdout + strict.stderr
    assert strict.returncode == 1, said[-3000:]
    failed = said[said.index("gate FAILED for") :]
    assert "wakefield1998: retracted" in failed and "kucsko2013" not in failed
    assert not (bundle / "paper.pdf").exists()
    built = rw_latexmk("paper.tex")  # default: the PDF carries the note
    assert built.returncode == 0, (built.stdout + built.stderr)[-3000:]
    assert "Retracted2010" in pdf_text(bundle / "paper.pdf")
    code, cited = _statuses(bundle, "paper.bbl")
    assert code == 0
    wakefield = cited["wakefield1998"]
    assert wakefield["status"] == "retracted" and wakefield["basis"][-1] == "title"
    assert "matched by title to RW#4036" in str(wakefield["reason"])
    assert cited["kucsko2013"]["status"] == "no_doi"  # not in the registry: no title match


def test_a_bbl_title_that_cannot_be_read_stays_no_doi(bundle: Path) -> None:
    one_block = PLAIN.replace("\\newblock ", "")  # no blocks: no title is read
    (bundle / "paper.bbl").write_text(one_block, encoding="utf-8")
    _, cited = _statuses(bundle, "--policy", "strict", "paper.bbl")
    assert cited["wakefield1998"]["status"] == "no_doi"


def test_an_entry_printing_two_dois_is_judged_by_both(bundle: Path) -> None:
    (bundle / "paper.bbl").write_text(TWO_DOIS, encoding="utf-8")
    code, cited = _statuses(bundle, "--policy", "strict", "paper.bbl")
    assert code == 1
    assert cited["wakefield1998"]["status"] == "retracted"  # the second DOI printed
    assert cited["kucsko2013"]["status"] == "clean"
    strict = rw_latexmk("--policy", "strict", "paper.tex")
    assert strict.returncode == 1 and "wakefield1998: retracted" in strict.stderr


SOURCEMAP = r"""\documentclass{article}
\usepackage[style=numeric,backend=biber]{biblatex}
\DeclareSourcemap{\maps[datatype=bibtex]{\map[overwrite]{%
  \step[fieldsource=entrykey, match={kucsko2013}, final]
  \step[fieldset=doi, fieldvalue={10.1016/S0140-6736(97)11096-0}]}}}
\addbibresource{refs.bib}
\begin{document}
Thermometry \autocite{kucsko2013}.
\printbibliography
\end{document}
"""


def test_a_printed_doi_rwgate_did_not_judge_stops_the_build(doc: Path) -> None:  # noqa: F811
    """Rule 2: biber's sourcemap gives kucsko2013 Wakefield's DOI. rwgate judged the .bib's DOI
    (clean), the PDF printed the retracted work's, and the build passed under every policy."""
    (doc / "mapped.tex").write_text(SOURCEMAP, encoding="utf-8")
    built = rw_latexmk("mapped.tex")
    said = built.stdout + built.stderr
    assert built.returncode == 1, said[-3000:]
    line = next(x for x in said.splitlines() if "a printed entry rwgate did not judge" in x)
    assert line.startswith("rw-latexmk: error: kucsko2013: mapped.bbl prints")
    assert "doi:10.1016/s0140-6736(97)11096-0" in line and "doi:10.1038/nature12373" in line
    assert not (doc / "mapped.pdf").exists()
    # The latexmkrc hooks stop the build the same way.
    rc = Path(__file__).parents[2] / "latexmkrc.example"
    cmd = ["latexmk", "-r", str(rc), "-pdf", "-interaction=nonstopmode", "-g", "mapped.tex"]
    run = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=180)
    said = run.stdout + run.stderr
    assert run.returncode != 0, said[-3000:]
    assert "rwgate biber: error: kucsko2013: mapped.bbl prints doi:10.1016/" in said


def test_what_the_tool_printed_was_judged_and_the_build_passes(doc: Path) -> None:  # noqa: F811
    """The same document without the sourcemap: every printed entry is the judged one."""
    plain = [
        line for line in SOURCEMAP.splitlines(True) if "map" not in line and "step" not in line
    ]
    (doc / "mapped.tex").write_text("".join(plain), encoding="utf-8")
    built = rw_latexmk("mapped.tex")
    assert built.returncode == 0, (built.stdout + built.stderr)[-3000:]
    assert "did not judge" not in built.stderr
