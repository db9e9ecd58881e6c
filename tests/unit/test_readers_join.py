"""A bibliography of a kind no reader claims, named by a manuscript, is an unreadable input
(exit 2) while the other bibliographies are still read and judged."""

from __future__ import annotations

from pathlib import Path

from rwgate.contract.models import CitedDocument
from rwgate.readers.join import cited_references


def test_unknown_bibliography_kind_is_unreadable_and_the_rest_still_read(tmp_path: Path) -> None:
    good = tmp_path / "refs.bib"
    good.write_text("@article{w, doi={10.1016/S0140-6736(97)11096-0}}\n", encoding="utf-8")
    odd = tmp_path / "refs.enl"
    odd.write_text("binary EndNote library", encoding="utf-8")
    doc = CitedDocument(
        path=str(tmp_path / "p.md"), keys=["w"], bibliographies=[str(odd), str(good)]
    )
    found = cited_references(doc)
    assert [r.key for r in found.references] == ["w"] and not found.references[0].missing
    (problem,) = [p for p in found.problems if p.unreadable]
    assert "refs.enl" in problem.message and "no bibliography reader" in problem.message


def test_a_tex_distributions_latin1_bib_is_read_without_a_warning(tmp_path) -> None:
    """IEEEabrv.bib (TeX Live) is Latin-1: \\bibliography{IEEEabrv,refs} warned on every build."""
    from rwgate.readers import read_text

    system = tmp_path / "texmf-dist" / "bibtex" / "bib" / "ieeetran" / "IEEEabrv.bib"
    system.parent.mkdir(parents=True)
    system.write_bytes('@STRING{IEEE_J_x = "Trans. Se\u00f1al"}\n'.encode("latin-1"))
    text, problems = read_text(system)
    assert "Se\u00f1al" in text and problems == []
    own = tmp_path / "refs.bib"
    own.write_bytes(system.read_bytes())
    assert [p.severity for p in read_text(own)[1]] == ["warning"]  # the user's own file: said
