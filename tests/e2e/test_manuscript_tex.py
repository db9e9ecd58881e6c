"""LaTeX manuscripts: .aux, .bcf and .tex sources, and real pdflatex output where TeX exists."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import require_tool
from rwgate.readers.builds.bibfind import resolve_bib_name
from rwgate.readers.builds.latexaux import LatexError, parse_aux, parse_bcf
from rwgate.readers.builds.latexdoc import read_latex
from rwgate.readers.builds.texscan import scan_tex, strip_comments
from rwgate.readers.manuscripts.manuscript import ManuscriptError, read_manuscript

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manuscripts"
NATBIB_KEYS = [
    "intro1",
    "intro2",
    "smith2020",
    "jones2019",
    "wakefield1998",
    "afterpercent",
    "chapter1key",
    "extra2001",
]
BIBLATEX_KEYS = ["smith2020", "jones2019", "wakefield1998", "autokey", "footkey", "inner"]


def _copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(FIXTURES / name, target)
    return target


def _age(path: Path, seconds: int) -> None:
    """Make a file look ``seconds`` old, to control which of .tex/.aux/.bcf is fresh."""
    stamp = path.stat().st_mtime - seconds
    os.utime(path, (stamp, stamp))


def _age_sources(folder: Path, seconds: int) -> None:
    """Make every .tex source look ``seconds`` old (the .aux/.bcf are judged against the newest)."""
    for tex in folder.rglob("*.tex"):
        _age(tex, seconds)


def _pdflatex(folder: Path) -> None:
    subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=folder,
        capture_output=True,
        check=True,
        timeout=120,
    )


# --------------------------------------------------------------------------------------------- .aux


def test_parse_aux_follows_included_aux_files() -> None:
    info = parse_aux(FIXTURES / "natbib" / "paper.aux")
    assert info.keys == NATBIB_KEYS
    assert info.bibdata == ["refs", "bibs/extra"]
    assert info.bibstyle == "plainnat"
    assert info.cite_all is False and info.biblatex is False
    assert [p.name for p in info.files] == ["paper.aux", "chap1.aux"]


def test_parse_aux_star_spaces_missing_includes_and_cycles(tmp_path: Path) -> None:
    (tmp_path / "main.aux").write_text(
        "\\relax \n\\citation{ a , b,,c }\n\\@input{gone.aux}\n\\@input{loop.aux}\n"
        "\\citation{*}\n\\bibdata{x, y}\n"
    )
    (tmp_path / "loop.aux").write_text("\\relax \n\\citation{d}\n\\@input{main.aux}\n")
    info = parse_aux(tmp_path / "main.aux")
    assert info.keys == ["a", "b", "c", "d"]
    assert info.cite_all is True
    assert info.bibdata == ["x", "y"]
    assert info.bibstyle is None


def test_parse_aux_of_biblatex_document() -> None:
    info = parse_aux(FIXTURES / "biblatex" / "paper.aux")
    assert info.biblatex is True and info.cite_all is True
    assert info.keys == BIBLATEX_KEYS
    assert info.bibdata == []


def test_parse_aux_missing_file(tmp_path: Path) -> None:
    with pytest.raises(LatexError, match=r"nothere\.aux: no such file$"):
        parse_aux(tmp_path / "nothere.aux")


# --------------------------------------------------------------------------------------------- .bcf


def test_parse_bcf_collects_every_refsection() -> None:
    info = parse_bcf(FIXTURES / "biblatex" / "paper.bcf")
    assert info.keys == BIBLATEX_KEYS
    assert info.cite_all is True
    assert info.datasources == ["refs.bib", "more.bib", "https://example.org/remote.bib"]


def test_parse_bcf_malformed_is_one_clear_line(tmp_path: Path) -> None:
    bad = tmp_path / "paper.bcf"
    text = (FIXTURES / "biblatex" / "paper.bcf").read_text()
    bad.write_text(text[: len(text) // 2])
    with pytest.raises(LatexError) as info:
        parse_bcf(bad)
    message = str(info.value)
    assert message.startswith(f"{bad}: malformed biblatex control file (.bcf):")
    assert "\n" not in message


def test_parse_bcf_rejects_other_xml(tmp_path: Path) -> None:
    other = tmp_path / "paper.bcf"
    other.write_text("<html><body/></html>")
    with pytest.raises(LatexError, match="not a biblatex control file"):
        parse_bcf(other)


# --------------------------------------------------------------------------------------------- .tex


def test_strip_comments_keeps_lines_and_escaped_percent() -> None:
    text = (
        "a % gone\n50\\% kept % gone\nline\\\\% gone\n\\begin{comment}\n\\cite{x}\n\\end{comment} y"
    )
    assert strip_comments(text) == "a \n50\\% kept \nline\\\\\n\n\n\\end{comment} y"


def test_scan_natbib_document() -> None:
    scan = scan_tex(FIXTURES / "natbib" / "paper.tex")
    # Comments, a comment after "\\", and verbatim text are not citations.
    assert scan.keys == NATBIB_KEYS
    assert scan.cite_all is False
    assert scan.bib_names == ["refs", "bibs/extra"]
    assert (
        str(scan.key_locations["intro2"]) == f"{FIXTURES / 'natbib' / 'sections' / 'intro.tex'}:3"
    )
    assert scan.key_locations["chapter1key"].line == 2
    assert scan.bib_locations["bibs/extra"].line == 18
    (problem,) = scan.problems
    assert problem.severity == "warning"
    assert str(problem).startswith(
        f"{FIXTURES / 'natbib' / 'paper.tex'}:15: included file not found: sections/missing"
    )
    assert problem.unseen  # issue 45: strict cannot judge it


def test_scan_biblatex_document() -> None:
    scan = scan_tex(FIXTURES / "biblatex" / "paper.tex")
    # \cites(pre)(post)[a]{k1}[b]{k2}, \Autocite*[12]{..}, a refsection, \nocite{*}.
    assert scan.keys == BIBLATEX_KEYS
    assert scan.cite_all is True
    assert scan.bib_names == ["refs.bib", "more.bib", "https://example.org/remote.bib"]
    assert scan.problems == []


def test_scan_is_cycle_safe_and_follows_bare_input_and_subfile() -> None:
    scan = scan_tex(FIXTURES / "loop" / "main.tex")
    assert scan.keys == ["mainkey", "partkey", "piecekey"]
    assert [p.name for p in scan.files] == ["main.tex", "part.tex", "piece.tex"]


def test_scan_cite_variants(tmp_path: Path) -> None:
    tex = tmp_path / "v.tex"
    tex.write_text(
        "\\citep[][]{a}\\citet*{b} \\cite [p.~{3}] {c}\n"
        "\\textcites[see][]{d,e}{f} \\includegraphics{notakey} \\citestyle{nature}\n"
        "\\citeyearpar{g}\\footcitetext{h}\\nocite{i}\\supercite{j}\\fullcite{k}\n"
    )
    scan = scan_tex(tex)
    assert scan.keys == list("abcdefghijk")
    assert scan.problems == []


# --------------------------------------------------------------------------------------------- join


def test_read_latex_prefers_a_fresh_aux(tmp_path: Path) -> None:
    folder = _copy("natbib", tmp_path)
    aux = folder / "paper.aux"
    aux.write_text(aux.read_text() + "\\citation{onlyinaux}\n")
    _age_sources(folder, 60)
    doc = read_latex(folder / "paper.tex")
    assert doc.keys == [*NATBIB_KEYS, "onlyinaux"]
    assert doc.bibliographies == [
        str((folder / "refs.bib").resolve()),
        str((folder / "bibs" / "extra.bib").resolve()),
    ]
    assert [p.severity for p in doc.problems] == ["warning"]  # the missing \input only


def test_read_latex_ignores_a_stale_aux(tmp_path: Path) -> None:
    folder = _copy("natbib", tmp_path)
    aux = folder / "paper.aux"
    aux.write_text(aux.read_text() + "\\citation{onlyinaux}\n")
    os.utime(folder / "paper.tex")
    _age(aux, 60)
    doc = read_latex(folder / "paper.tex")
    assert doc.keys == NATBIB_KEYS
    assert "paper.aux is older than paper.tex" in doc.problems[-1].message


def test_read_latex_ignores_an_aux_older_than_an_included_chapter(tmp_path: Path) -> None:
    folder = _copy("natbib", tmp_path)
    aux = folder / "paper.aux"
    aux.write_text(aux.read_text() + "\\citation{onlyinaux}\n")
    _age_sources(folder, 120)
    _age(aux, 60)
    chapter = folder / "chapters" / "chap1.tex"
    chapter.write_text(chapter.read_text() + "\\cite{newcite}\n")  # edited after the last run
    doc = read_latex(folder / "paper.tex")
    assert "newcite" in doc.keys and "onlyinaux" not in doc.keys
    assert "paper.aux is older than chap1.tex" in doc.problems[-1].message


def test_read_latex_fresh_aux_without_citations_falls_back_quietly(tmp_path: Path) -> None:
    tex = tmp_path / "paper.tex"
    tex.write_text(
        "\\documentclass{article}\n\\begin{document}\n\\cite{onlyintex}\n\\bibliography{r}\n"
    )
    (tmp_path / "r.bib").write_text("@misc{onlyintex, title={T}}\n")
    (tmp_path / "paper.aux").write_text("\\relax \n\\gdef \\@abspage@last{1}\n")
    _age(tex, 60)
    doc = read_latex(tex)
    assert doc.keys == ["onlyintex"]
    assert doc.problems == []


def test_read_latex_with_a_separate_aux_dir(tmp_path: Path) -> None:
    folder = _copy("natbib", tmp_path)
    out = tmp_path / "build"
    (out / "chapters").mkdir(parents=True)
    (folder / "paper.aux").rename(out / "paper.aux")
    (folder / "chapters" / "chap1.aux").rename(out / "chapters" / "chap1.aux")
    (out / "chapters" / "chap1.aux").write_text("\\relax \n\\citation{inbuilddir}\n")
    _age_sources(folder, 60)
    assert read_latex(folder / "paper.tex").keys == NATBIB_KEYS  # no aux next to the .tex
    assert "inbuilddir" in read_latex(folder / "paper.tex", aux_dir=out).keys


def test_read_latex_biblatex_uses_the_bcf(tmp_path: Path) -> None:
    folder = _copy("biblatex", tmp_path)
    for name in ("paper.bcf", "paper.aux"):
        os.utime(folder / name)
    _age_sources(folder, 60)
    (folder / "paper.bcf").write_text(
        (folder / "paper.bcf").read_text().replace(">inner<", ">innerfrombcf<")
    )
    doc = read_manuscript(folder / "paper.tex")
    assert doc.keys == [*BIBLATEX_KEYS[:-1], "innerfrombcf"]
    assert doc.cite_all is True
    assert doc.bibliographies == [
        str((folder / "refs.bib").resolve()),
        str((folder / "more.bib").resolve()),
    ]
    (remote,) = doc.problems
    assert remote.severity == "warning" and "remote bibliography not checked" in remote.message


def test_read_latex_unresolved_bibliography_names_its_line(tmp_path: Path) -> None:
    tex = tmp_path / "paper.tex"
    tex.write_text("\\documentclass{article}\n\\begin{document}\n\\cite{a}\n\\bibliography{nope}\n")
    doc = read_latex(tex)
    assert doc.keys == ["a"] and doc.bibliographies == []
    (problem,) = doc.problems
    assert problem.severity == "error"
    assert str(problem) == f"{tex}:4: bibliography file not found: nope"


def test_bibliography_found_through_kpsewhich(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_tool("kpsewhich")
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "faraway.bib").write_text("@misc{x, title={X}}\n")
    monkeypatch.setenv("BIBINPUTS", f"{shelf}:")
    work = tmp_path / "work"
    work.mkdir()
    assert resolve_bib_name("faraway", work) == [(shelf / "faraway.bib").resolve()]
    assert resolve_bib_name("no-such-bibliography-anywhere", tmp_path) == []


def test_missing_tex_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(ManuscriptError, match=r"gone\.tex: no such file$"):
        read_manuscript(tmp_path / "gone.tex")


# ------------------------------------------------------------------------------------ real pdflatex


def test_real_natbib_aux_agrees_with_the_scan(tmp_path: Path) -> None:
    require_tool("pdflatex")
    folder = _copy("natbib", tmp_path)
    for aux in folder.rglob("*.aux"):
        aux.unlink()
    tex = folder / "paper.tex"
    tex.write_text(tex.read_text().replace("\\input{sections/missing}\n", ""))
    _pdflatex(folder)
    info = parse_aux(folder / "paper.aux")
    assert info.keys == scan_tex(tex).keys == NATBIB_KEYS
    assert info.bibdata == ["refs", "bibs/extra"]
    assert read_latex(tex).problems == []


def test_real_biblatex_bcf_agrees_with_the_scan(tmp_path: Path) -> None:
    require_tool("pdflatex")
    folder = _copy("biblatex", tmp_path)
    for name in ("paper.aux", "paper.bcf"):
        (folder / name).unlink()
    _pdflatex(folder)
    info = parse_bcf(folder / "paper.bcf")
    assert info.keys == BIBLATEX_KEYS
    assert info.cite_all is True
    assert info.datasources == ["refs.bib", "more.bib", "https://example.org/remote.bib"]


# ----------------------------------------------------------------------------------------- allowed


def _inside(root: Path) -> Callable[[Path], bool]:
    return lambda path: path.resolve().is_relative_to(root.resolve())


def test_an_input_outside_the_allowed_folders_is_refused_before_it_is_read(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.tex").write_text("\\cite{leaked} SECRET-CONTENT\n", encoding="utf-8")
    tex = root / "paper.tex"
    tex.write_text(f"\\cite{{a}}\n\\input{{{outside / 'secret'}}}\n\\bibliography{{r}}\n", "utf-8")
    (root / "r.bib").write_text("@misc{a, title={T}}\n", encoding="utf-8")
    with pytest.raises(LatexError) as refused:
        read_latex(tex, allowed=_inside(root))
    expected = f"{tex}:2: an included file lies outside the allowed roots; refused"
    assert str(refused.value) == expected  # the line that asks, never the file outside
    with pytest.raises(ManuscriptError, match="outside the allowed roots"):
        read_manuscript(tex, allowed=_inside(root))
    assert read_latex(tex).keys == ["a", "leaked"]  # rwgate check, with no roots, reads it


def test_an_aux_or_bcf_symlinked_outside_is_refused_by_its_own_name(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", _copy("biblatex", tmp_path)
    root.mkdir()
    shutil.copy(outside / "paper.tex", root / "paper.tex")
    _age_sources(root, 60)
    for name in ("paper.aux", "paper.bcf"):
        os.utime(outside / name)  # fresh, so that read_latex reads it
        (root / name).symlink_to(outside / name)
        with pytest.raises(LatexError) as refused:
            read_latex(root / "paper.tex", allowed=_inside(root))
        expected = "a file the document reads lies outside the allowed roots; refused"
        assert str(refused.value) == expected
        (root / name).unlink()
        shutil.copy(outside / name, root / name)  # a real copy inside is read as usual
    assert "innerfrombcf" not in read_latex(root / "paper.tex", allowed=_inside(root)).keys


def test_includes_inside_the_allowed_folders_are_read_as_before(tmp_path: Path) -> None:
    folder = _copy("natbib", tmp_path)
    _age_sources(folder, 60)
    doc = read_latex(folder / "paper.tex", allowed=_inside(tmp_path))
    assert doc.keys == NATBIB_KEYS
    assert doc == read_latex(folder / "paper.tex")


def test_macro_parameters_are_not_cited_keys(tmp_path: Path) -> None:
    """``\\newcommand{\\mycite}[1]{\\cite{#1}}``: ``#1`` is the macro's argument, never a key."""
    tex = tmp_path / "p.tex"
    tex.write_text(
        "\\newcommand{\\mycite}[1]{\\cite{#1}}\\newcommand{\\two}[2]{\\citet{##1,#2}}\n"
        "\\begin{document}\\mycite{smith2020}\\cite{jones2019}\\end{document}\n",
        encoding="utf-8",
    )
    assert scan_tex(tex).keys == ["jones2019"]
