"""Issue 28: a LaTeX document's files read as BibTeX reads bytes, and its own thebibliography.

The ``.aux`` and ``.tex`` were read with replacement characters, so a key with a Latin-1 byte
matched no entry; the ``\\bibitem``s of a document's own ``thebibliography`` were no bibliography
at all. (End to end with pdflatex and BibTeX: tests/e2e/test_latex_latin1.py and
test_latex_thebibliography.py.)"""

from __future__ import annotations

import time
from pathlib import Path

from rwgate.frontends.latex.bbl import annotate_bbl
from rwgate.readers.builds.bbl import parse_embedded
from rwgate.readers.builds.bblscan import bibitems
from rwgate.readers.builds.latexaux import parse_aux
from rwgate.readers.builds.texscan import scan_tex


def test_an_aux_key_with_a_latin1_byte_reads_as_the_bib_reads_it(tmp_path: Path) -> None:
    aux = tmp_path / "p.aux"
    aux.write_bytes(b"\\relax\n\\citation{m\xfcller2010}\n\\citation{gr\xc3\xbcn}\n\\bibdata{r}\n")
    assert parse_aux(aux).keys == ["m\xfcller2010", "gr\xfcn"]  # bytes FC and C3 BC: both ü


def test_a_latin1_source_is_scanned_with_its_keys_intact(tmp_path: Path) -> None:
    tex = tmp_path / "p.tex"
    tex.write_bytes(b"\\begin{document}\\cite{m\xfcller2010}\\bibliography{r\xe9fs}\\end{document}")
    scan = scan_tex(tex)
    assert scan.keys == ["m\xfcller2010"] and scan.bib_names == ["r\xe9fs"]


def test_the_bbl_bibtex_wrote_from_latin1_bytes_gets_its_note(tmp_path: Path) -> None:
    bbl = tmp_path / "p.bbl"
    data = b"\\begin{thebibliography}{1}\n\\bibitem{m\xfcller2010}\nS. M\xfcller.\n"
    data += b"\\end{thebibliography}\n"
    bbl.write_bytes(data)
    assert annotate_bbl(bbl, {"m\xfcller2010": "Retracted 2010"}) == ["m\xfcller2010"]
    written = bbl.read_bytes()
    assert b"S. M\xfcller." in written and b"\\textbf{Retracted 2010}" in written  # bytes kept


def test_the_documents_own_bibitems_are_its_bibliography() -> None:
    text = (
        "\\documentclass{article}\n"  # 1
        "\\newcommand\\x{\\bibitem{notprinted}}\n"  # 2: outside the environment
        "\\begin{thebibliography}{9}\n"  # 3
        "% \\bibitem{commented} doi:10.1126/science.1256151\n"  # 4
        "\\bibitem{a} A. doi:10.1016/S0140-6736(97)11096-0\n"  # 5
        "\\bibitem[L]%\n  {b} B. \\url{https://doi.org/10.1038/nature12373}\n"  # 6-7
        "\\end{thebibliography}\n"
    )
    found = parse_embedded(text, "p.tex")
    assert [(r.key, r.doi, r.location.line if r.location else None) for r in found.references] == [
        ("a", "10.1016/s0140-6736(97)11096-0", 5),
        ("b", "10.1038/nature12373", 6),
    ]


def test_finding_uncommented_bibitems_is_linear() -> None:
    one_line = "\\bibitem{k} x " * 100_000  # 1.4 MB on one line
    many = "\\bibitem{k} % \\bibitem{c}\n" * 50_000
    start = time.process_time()
    assert len(bibitems(one_line)) == 100_000 and len(bibitems(many)) == 50_000
    assert time.process_time() - start < 5.0  # quadratic: hours
