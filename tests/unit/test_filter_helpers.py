"""The shadow .bib helpers of rw-filter, without pandoc."""

from __future__ import annotations

from pathlib import Path

import pytest

from rwgate.frontends.pandoc.shadowbib import latex_escape, shadow_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pandoc"


def test_latex_escape_makes_every_special_literal() -> None:
    hostile = r"\input{/etc/passwd} 100% #1 a_b & c~d ^ $x$ <script>"
    escaped = latex_escape(hostile)
    for raw in ("\\input", "{/etc", "100% ", " #1", "a_b", " & ", "~", "$x$", "<script>"):
        assert raw not in escaped
    assert escaped.count("{") == escaped.count("}")  # BibTeX needs balanced braces


def test_latex_escape_spaces_control_characters() -> None:
    # An escape or a NUL in a note would stop pdflatex ("invalid character"): removed.
    assert latex_escape("a\x1b[31mb\x00c}\u202e") == "a[31mbc\\textbraceright{}"


def test_shadow_text_rewrites_only_flagged_entries() -> None:
    original = (FIXTURES / "refs.bib").read_text(encoding="utf-8")
    shadowed, done = shadow_text(original, {"lacour2014": "Retracted 2015; doi:10.1/a_b"})
    assert done == {"lacour2014"}
    assert "note = {Data collection questioned. {Retracted 2015; doi:10.1/a\\_b}}" in shadowed
    # Everything but the flagged entry keeps its bytes (the @string macro and its use included).
    head, _, _ = original.partition("@article{lacour2014")
    assert shadowed.startswith(head)
    assert original[original.index("@article{njei2011") :] in shadowed


def test_an_entry_already_printing_the_notice_is_not_annotated_again() -> None:
    """The shadow .bib's note, as BibTeX printed it (rewrapped, braced), is the same notice."""
    from rwgate.frontends.latex.bbl import annotate_bibtex
    from rwgate.render.annotation import Annotation
    from rwgate.render.latex import annotation_latex

    note = annotation_latex(
        Annotation("retracted", "Retracted", 2010, "10.1016/s0140-6736(10)60175-4",
                   "Retracted 2010; notice doi:10.1016/s0140-6736(10)60175-4")
    )  # fmt: skip
    bbl = (
        "\\begin{thebibliography}{1}\n\\bibitem{w}\nWakefield. \\newblock The Lancet.\n"
        "\\bibinfo{note}{{Retracted\n  2010; notice doi:10.1016/s0140-6736(10)60175-4}}.\n\n"
        "\\end{thebibliography}\n"
    )
    text, done = annotate_bibtex(bbl, {"w": note})
    assert text == bbl and done == []
    other, done = annotate_bibtex(bbl.replace("2010;", "2011;"), {"w": note})
    assert done == ["w"] and "\\textbf{Retracted 2010" in other


def test_an_allowed_entry_without_a_doi_is_said_beside_the_summary_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # rwgate check lists an allowed entry without a DOI on its own line, with its reason; the
    # summary line counts only the entries nothing allows. rw-filter said the allowed one nowhere.
    from rwgate.contract.models import Citation
    from rwgate.core import CheckResult
    from rwgate.frontends.pandoc.filter import report_messages
    from rwgate.settings.policy import Policy

    citations = [
        Citation(key="plain", status="no_doi", action="warn"),
        Citation(key="kept", status="no_doi", action="warn", allowed=True, reason="allowed: x"),
    ]
    report_messages(CheckResult(citations=citations, policy=Policy(), sources=[]))
    err = capsys.readouterr().err
    assert "1 entry has no DOI and could not be checked (plain)" in err
    assert "kept" in err
