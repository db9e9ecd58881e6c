"""Issue 28: bibliography commands reached through the document's own macros, and a check from
the sources that cannot see the bibliography never passing (no TeX run: the sources only)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rwgate.readers.builds.latexaux import LatexError
from rwgate.readers.builds.latexdoc import CANNOT_JUDGE, read_latex
from rwgate.readers.builds.texmacros import MAX_DEPTH, bibliography_names, definitions
from rwgate.readers.builds.texscan import scan_tex

CLS = (
    "\\LoadClass{report}"
    "\\newcommand*\\references[1]{\\bibliographystyle{plain}\\bibliography{#1}}\n"
)
MAIN = "\\documentclass{mycls}\\begin{document}\\cite{Zhang2018}\\references{refs}\\end{document}\n"
BIB = "@article{Zhang2018, title={A work}, doi={10.1016/S0140-6736(97)11096-0}}\n"


def _folder(tmp_path: Path, main: str = MAIN, cls: str | None = CLS, bib: str = BIB) -> Path:
    if cls is not None:
        (tmp_path / "mycls.cls").write_text(cls, encoding="utf-8")
    (tmp_path / "refs.bib").write_text(bib, encoding="utf-8")
    tex = tmp_path / "main.tex"
    tex.write_text(main, encoding="utf-8")
    return tex


def test_the_issues_smallest_case_names_refs_through_the_class(tmp_path: Path) -> None:
    scan = scan_tex(_folder(tmp_path))
    assert scan.bib_names == ["refs"]
    assert scan.bib_locations["refs"].line == 1
    doc = read_latex(tmp_path / "main.tex")
    assert doc.bibliographies == [str((tmp_path / "refs.bib").resolve())]
    assert not doc.problems


def test_a_macro_defined_in_the_tex_is_followed_and_its_parameter_is_no_file(
    tmp_path: Path,
) -> None:
    """With the macro in the .tex, the error was "bibliography file not found: #1"."""
    main = (
        "\\documentclass{report}\n\\newcommand{\\references}[1]{\\bibliography{#1}}\n"
        "\\begin{document}\n\\cite{Zhang2018}\n\\references{refs}\n\\end{document}\n"
    )
    doc = read_latex(_folder(tmp_path, main, cls=None))
    assert not doc.problems and len(doc.bibliographies) == 1
    assert scan_tex(tmp_path / "main.tex").bib_locations["refs"].line == 5


@pytest.mark.parametrize(
    "defined",
    [
        "\\def\\references#1{\\bibliography{#1}}",
        "\\providecommand\\references[1]{\\bibliography{#1}}",
        "\\renewcommand*{\\references}[1]{\\chapter*{R}\\bibliography{#1}}",
        "\\newcommand\\refs[2][x]{\\bibliography{#2}}\\newcommand\\references[1]{\\refs[y]{#1}}",
        "\\newcommand\\inner[1]{\\bibliography{#1,extra}}\\def\\references#1{\\inner{#1}}",
    ],
)
def test_each_simple_definition_form(tmp_path: Path, defined: str) -> None:
    tex = _folder(tmp_path, cls=f"\\LoadClass{{report}}\n{defined}\n")
    assert scan_tex(tex).bib_names[0] == "refs"


def test_an_optional_argument_left_out_takes_its_default(tmp_path: Path) -> None:
    cls = "\\newcommand\\references[1][refs]{\\bibliography{#1}}\n"
    main = "\\documentclass{mycls}\\cite{Zhang2018}\\references\n"
    assert scan_tex(_folder(tmp_path, main, cls)).bib_names == ["refs"]


def test_a_parameter_never_becomes_a_file_name() -> None:
    macros = definitions("\\newcommand\\references[2]{\\bibliography{#1,#2}}")
    found = bibliography_names([(Path("m.tex"), "\\references{a}")], macros)
    assert found == []  # one argument of two: not a use TeX would complete
    found = bibliography_names([(Path("m.tex"), "\\references{a}{#3}")], macros)
    assert [n.name for n in found] == ["a"]


def test_self_reference_and_depth_are_bounded() -> None:
    looping = definitions("\\def\\loop#1{\\loop{#1}\\bibliography{#1}}")
    found = bibliography_names([(Path("m.tex"), "\\loop{refs}")], looping)
    assert {n.name for n in found} == {"refs"} and len(found) <= MAX_DEPTH
    chain = "".join(f"\\def\\m{i}#1{{\\m{i + 1}{{#1}}}}" for i in range(MAX_DEPTH + 4))
    chain += f"\\def\\m{MAX_DEPTH + 4}#1{{\\bibliography{{#1}}}}"
    deep = bibliography_names([(Path("m.tex"), "\\m0{refs}")], definitions(chain))
    assert deep == []  # deeper than the bound: not followed (and then not judged: exit 2)


def test_a_system_class_is_never_read(tmp_path: Path) -> None:
    """Only the document's own folder: \\documentclass{report} reads no report.cls of TeX's."""
    tex = _folder(tmp_path, "\\documentclass{report}\\cite{Zhang2018}\\references{refs}\n")
    with pytest.raises(LatexError, match="no bibliography command found"):
        read_latex(tex)


def test_no_bibliography_command_cannot_be_judged(tmp_path: Path) -> None:
    tex = _folder(tmp_path, cls="\\LoadClass{report}\n")
    with pytest.raises(LatexError) as caught:
        read_latex(tex)
    message = str(caught.value)
    assert CANNOT_JUDGE in message and "\n" not in message and "main.tex" in message


def test_every_key_missing_cannot_be_judged(tmp_path: Path) -> None:
    tex = _folder(tmp_path, bib="@article{Other2020, title={B}}\n")
    with pytest.raises(LatexError, match=r"none of the 1 cited keys is in refs\.bib"):
        read_latex(tex)


def test_one_key_found_is_judged_and_the_others_are_missing_entries(tmp_path: Path) -> None:
    main = MAIN.replace("\\cite{Zhang2018}", "\\cite{Zhang2018,nosuchkey}")
    doc = read_latex(_folder(tmp_path, main))
    assert doc.keys == ["Zhang2018", "nosuchkey"]


def test_a_document_citing_nothing_is_not_an_error(tmp_path: Path) -> None:
    doc = read_latex(_folder(tmp_path, "\\documentclass{mycls}\\begin{document}Hi\\end{document}"))
    assert doc.keys == [] and not doc.problems


def test_a_fresh_aux_is_read_from_the_aux(tmp_path: Path) -> None:
    """After a build the .aux names the bibliography: no macro has to be followed."""
    tex = _folder(tmp_path, cls="\\LoadClass{report}\n")
    aux = tmp_path / "main.aux"
    aux.write_text("\\citation{Zhang2018}\n\\bibdata{refs}\n\\bibstyle{plain}\n", "utf-8")
    later = tex.stat().st_mtime + 5
    os.utime(aux, (later, later))
    doc = read_latex(tex)
    assert doc.path == str(tex) and len(doc.bibliographies) == 1 and doc.keys == ["Zhang2018"]
