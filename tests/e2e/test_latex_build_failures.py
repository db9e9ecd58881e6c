"""Issue 28, with the real latexmk, pdflatex, bibtex and biber: biblatex's BibTeX backend and a
LaTeX run that dies mid-way."""

from __future__ import annotations

import subprocess
from pathlib import Path

from test_latex_build import doc, rw_latexmk  # noqa: F401 (fixtures)

BIBTEX_BACKEND = r"""\documentclass{article}
\usepackage[backend=bibtex]{biblatex}
\addbibresource{refs.bib}
\begin{document}
Thermometry \cite{kucsko2013}; vaccines \cite{wakefield1998}.
\printbibliography
\end{document}
"""
DIES = r"""\documentclass{article}
\usepackage[backend=biber]{biblatex}
\addbibresource{refs.bib}
\begin{document}
Thermometry \cite{kucsko2013}.
\undefinedmacro
\printbibliography
\end{document}
"""


def test_biblatex_bibtex_backend_control_entry_is_not_a_citation(doc: Path) -> None:  # noqa: F811
    """biblatex with ``backend=bibtex`` cites ``biblatex-control`` (its options, in
    ``JOB-blx.bib``) in the .aux: it was reported as a cited work without a DOI."""
    (doc / "blx.tex").write_text(BIBTEX_BACKEND, encoding="utf-8")
    built = rw_latexmk("blx.tex")
    said = built.stdout + built.stderr
    assert built.returncode == 0, said[-3000:]
    assert "\\citation{biblatex-control}" in (doc / "blx.aux").read_text(encoding="utf-8")
    assert "biblatex-control" not in said
    assert "2 cited" in said and "wakefield1998: retracted" in said.lower()


def test_latex_dying_mid_run_keeps_latexmks_exit_code(doc: Path) -> None:  # noqa: F811
    """LaTeX stopped by an error leaves a truncated .bcf: rw-latexmk said "malformed .bcf" and
    exited 2; latexmk's own exit code (12) is the answer, never 0."""
    (doc / "dies.tex").write_text(DIES, encoding="utf-8")
    plain = subprocess.run(
        ["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", "dies.tex"],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert plain.returncode == 12
    subprocess.run(["latexmk", "-C", "dies.tex"], capture_output=True, check=False)
    for _ in range(2):  # the first build, and one that finds the truncated .bcf already there
        built = rw_latexmk("dies.tex")
        said = built.stdout + built.stderr
        assert built.returncode == 12, said[-3000:]
        assert "malformed biblatex control file" in said  # said, as one line
        assert "latexmk failed (exit 12)" in said
        assert "Traceback" not in said and not (doc / "dies.pdf").exists()
