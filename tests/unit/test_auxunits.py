"""The other bibliographies of a BibTeX build (multibib, bibunits, chapterbib), without TeX: which
``.aux`` files LaTeX wrote, which of them bibtex reads on its own, and what the sources say."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rwgate.readers.builds.latexaux import LatexError, bibliography_parts, parse_aux, written_aux
from rwgate.readers.builds.latexdoc import read_latex
from rwgate.readers.builds.texscan import scan_tex
from rwgate.readers.join import cited_references

BIB = """@article{mainwork, title={A}, doi={10.1000/main}}
@article{methwork, title={B}, doi={10.1000/meth}}
"""


def _build(folder: Path, fls: bool = True) -> Path:
    """What pdflatex leaves after one run of a multibib document with an \\include'd chapter."""
    (folder / "refs.bib").write_text(BIB, encoding="utf-8")
    tex = folder / "paper.tex"
    tex.write_text(
        "\\usepackage{multibib}\\newcites{Meth}{Methods}\n"
        "\\cite{mainwork} \\citeMeth{methwork} \\citeAuthor{notakey}\n"
        "\\bibliography{refs} \\bibliographyMeth{refs}\n",
        encoding="utf-8",
    )
    os.utime(tex, (1, 1))  # older than what LaTeX wrote
    (folder / "paper.aux").write_text(
        "\\citation{mainwork}\n\\bibdata{refs}\n\\@input{ch1.aux}\n", encoding="utf-8"
    )
    (folder / "ch1.aux").write_text("\\citation{mainwork}\n", encoding="utf-8")
    (folder / "Meth.aux").write_text("\\citation{methwork}\n\\bibdata{refs}\n", encoding="utf-8")
    (folder / "Supp.aux").write_text("\\relax\n", encoding="utf-8")
    names = ["Meth.aux", "Supp.aux", "paper.aux", "ch1.aux"]
    if fls:
        lines = [f"PWD {folder}", "INPUT paper.tex", *(f"OUTPUT {n}" for n in names)]
        (folder / "paper.fls").write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        log = "".join(f"\\openout{i} = `{n}'.\n\n" for i, n in enumerate(names, 3))
        (folder / "paper.log").write_text(log, encoding="utf-8")
    return tex


@pytest.mark.parametrize("fls", [True, False], ids=["fls", "log"])
def test_the_methods_list_is_a_part_and_the_empty_list_and_the_chapter_are_not(
    tmp_path: Path, fls: bool
) -> None:
    _build(tmp_path, fls)
    assert [p.name for p in written_aux(tmp_path, "paper")] == [
        "Meth.aux",
        "Supp.aux",
        "paper.aux",
        "ch1.aux",
    ]
    main = parse_aux(tmp_path / "paper.aux")
    assert [p.name for p, _ in bibliography_parts(tmp_path, "paper", main)] == ["Meth.aux"]


def test_a_list_missing_from_an_old_fls_is_found_in_the_log(tmp_path: Path) -> None:
    """A .fls left by a build with -recorder on, since turned off: the .log is the last run's."""
    _build(tmp_path, fls=False)
    (tmp_path / "paper.fls").write_text(f"PWD {tmp_path}\nOUTPUT paper.aux\n", encoding="utf-8")
    main = parse_aux(tmp_path / "paper.aux")
    assert [p.name for p, _ in bibliography_parts(tmp_path, "paper", main)] == ["Meth.aux"]


def test_a_chapter_with_its_own_bibliography_is_a_part(tmp_path: Path) -> None:
    _build(tmp_path)
    (tmp_path / "ch1.aux").write_text("\\citation{mainwork}\n\\bibdata{refs}\n", encoding="utf-8")
    main = parse_aux(tmp_path / "paper.aux")
    parts = bibliography_parts(tmp_path, "paper", main)
    assert [p.name for p, _ in parts] == ["Meth.aux", "ch1.aux"]


def test_read_latex_judges_every_list_once(tmp_path: Path) -> None:
    doc = read_latex(_build(tmp_path))
    assert doc.keys == ["mainwork"] and [Path(p.path).name for p in doc.parts] == ["Meth.aux"]
    refs = cited_references(doc).references
    pairs = [(r.key, r.doi) for r in refs]
    assert pairs == [("mainwork", "10.1000/main"), ("methwork", "10.1000/meth")]


def test_before_the_first_run_the_sources_name_the_methods_list(tmp_path: Path) -> None:
    tex = _build(tmp_path)
    scan = scan_tex(tex)
    assert scan.keys == ["mainwork", "methwork"]  # \citeAuthor: no \newcites{Author}
    assert scan.bib_names == ["refs"] and scan.newcites == {"Meth"}


def test_an_aux_the_record_names_outside_the_roots_is_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    _build(root)
    (outside / "x.aux").write_text("\\citation{leak}\n\\bibdata{refs}\n", encoding="utf-8")
    fls = root / "paper.fls"
    fls.write_text(fls.read_text(encoding="utf-8") + f"OUTPUT {outside / 'x.aux'}\n", "utf-8")
    inside = lambda path: path.resolve().is_relative_to(root.resolve())  # noqa: E731
    with pytest.raises(LatexError, match="outside the allowed roots"):
        read_latex(root / "paper.tex", allowed=inside)
