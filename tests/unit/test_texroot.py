"""A chapter staged alone is judged with its main document's bibliography (the pre-commit hook
hands ``rwgate check`` only the staged files): never "cannot judge", never a silent pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from rwgate.readers.builds.latexdoc import CANNOT_JUDGE, read_latex
from rwgate.readers.builds.latexread import LatexError

MAIN = (
    "\\documentclass{article}\\begin{document}\\input{chapters/intro}\n"
    "\\bibliographystyle{plain}\\bibliography{refs}\\end{document}\n"
)
CHAPTER = "As \\cite{wakefield1998} showed.\n"


def _project(root: Path, main: str = MAIN, chapter: str = CHAPTER) -> Path:
    (root / "chapters").mkdir(parents=True)
    (root / "main.tex").write_text(main, encoding="utf-8")
    (root / "refs.bib").write_text("@article{wakefield1998, doi={10.1/x}}\n", encoding="utf-8")
    (root / "chapters" / "intro.tex").write_text(chapter, encoding="utf-8")
    return root / "chapters" / "intro.tex"


def test_a_chapter_is_judged_with_the_bibliography_of_the_document_that_includes_it(
    tmp_path: Path,
) -> None:
    chapter = _project(tmp_path)
    doc = read_latex(chapter)
    assert doc.keys == ["wakefield1998"]
    assert [Path(b).resolve() for b in doc.bibliographies] == [(tmp_path / "refs.bib").resolve()]
    assert doc.key_locations["wakefield1998"].file.endswith("intro.tex")


def test_the_magic_comment_names_the_main_document(tmp_path: Path) -> None:
    chapter = _project(tmp_path / "book", main=MAIN.replace("chapters/intro", "other"))
    chapter.write_text("% !TEX root = ../main.tex\n" + CHAPTER, encoding="utf-8")
    (tmp_path / "book" / "other.tex").write_text("Other.\n", encoding="utf-8")  # no kpsewhich
    doc = read_latex(chapter)  # main.tex does not \input it, but the comment says it is its root
    assert [Path(b).name for b in doc.bibliographies] == ["refs.bib"]


def test_two_main_documents_are_no_guess(tmp_path: Path) -> None:
    chapter = _project(tmp_path)
    (tmp_path / "slides.tex").write_text(MAIN.replace("refs", "other"), encoding="utf-8")
    with pytest.raises(LatexError, match=CANNOT_JUDGE.split(":")[0]):
        read_latex(chapter)


def test_a_fragment_no_document_includes_cannot_be_judged(tmp_path: Path) -> None:
    chapter = _project(tmp_path, main=MAIN.replace("\\input{chapters/intro}", ""))
    with pytest.raises(LatexError, match="no bibliography command found"):
        read_latex(chapter)


def test_outside_the_allowed_roots_nothing_is_read(tmp_path: Path) -> None:
    chapter = _project(tmp_path)
    inside = chapter.parent.resolve()

    def allowed(path: Path) -> bool:
        return path.resolve().is_relative_to(inside)

    with pytest.raises(LatexError, match="no bibliography command found"):
        read_latex(chapter, allowed=allowed)


def test_a_chapter_none_of_whose_keys_its_main_bibliography_holds_cannot_be_judged(
    tmp_path: Path,
) -> None:
    """The same rule as for a whole document: keys that reach no entry are no pass."""
    chapter = _project(tmp_path, chapter="As \\cite{elsewhere2020} showed.\n")
    with pytest.raises(LatexError, match=r"none of the 1 cited keys is in refs\.bib"):
        read_latex(chapter)
