"""Reading what BibTeX reads (issue 28): bytes line by line, the files of one ``\\bibdata`` as one
stream of ``@string``s, keyless and repeated entries as BibTeX prints them, DOIs written with TeX
escapes, both readings judged where BibTeX and pandoc part, PMIDs of 10 digits."""

from __future__ import annotations

from pathlib import Path

import pytest
from offline_snapshot import offline_settings

from rwgate.contract.models import CitedDocument
from rwgate.core import check
from rwgate.readers import load_bibliography
from rwgate.readers.bibliographies.bibtex import parse_bib
from rwgate.readers.bibliographies.parsed import load_stream
from rwgate.readers.join import cited_references
from rwgate.settings.config import Settings

W = "10.1016/S0140-6736(97)11096-0"  # Wakefield 1998, retracted (in the RW extract)
W_CANON = W.lower()


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    return offline_settings(tmp_path, monkeypatch)


# --- bytes -------------------------------------------------------------------------------------


def _stray_byte_bib(tmp_path: Path, doi: str) -> Path:
    path = tmp_path / "refs.bib"
    path.write_bytes(
        b"@article{other, title={Caf\xe9}, abstract={na\xefve}}\n"  # Latin-1: not UTF-8
        + f"@article{{müller2010, title={{Über}}, doi={{{doi}}}}}\n".encode()
    )
    return path


def test_one_stray_byte_changes_no_other_line(tmp_path: Path) -> None:
    result = load_bibliography(_stray_byte_bib(tmp_path, W))
    keys = [r.key for r in result.references]
    assert keys == ["other", "müller2010"]  # the UTF-8 key as the .aux spells it
    assert result.references[0].title == "Café" and result.references[1].title == "Über"
    (warning,) = [p for p in result.problems if "UTF-8" in p.message]
    assert warning.location is not None and warning.location.line == 1
    assert "each such byte read as Latin-1, the rest as UTF-8" in warning.message


@pytest.mark.parametrize("mark", ["\u200b", "\u2010"])
def test_a_doi_with_invisible_or_dash_characters_survives_a_stray_byte(
    tmp_path: Path, mark: str
) -> None:
    doi = W.replace("-0", "-" + mark + "0") if mark == "\u200b" else W.replace("-", mark)
    (_, ref) = load_bibliography(_stray_byte_bib(tmp_path, doi)).references
    assert ref.doi == W_CANON


def test_a_cited_non_ascii_key_resolves_beside_a_stray_byte(tmp_path: Path) -> None:
    bib = _stray_byte_bib(tmp_path, W)
    doc = CitedDocument(
        path=str(tmp_path / "p.aux"), keys=["müller2010"], bibliographies=[str(bib)]
    )
    (ref,) = cited_references(doc).references
    assert not ref.missing and ref.doi == W_CANON


def test_keys_fold_ascii_only_as_bibtex_does(tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{Müller2010, doi={10.1/a}}\n", encoding="utf-8")
    doc = CitedDocument(
        path=str(tmp_path / "p.aux"),
        keys=["MÜLLER2010"],
        bibliographies=[str(bib)],
        bibtex_keys=True,
    )
    (ref,) = cited_references(doc).references
    assert ref.missing  # BibTeX folds A-Z only: Ü is not ü to it


# --- one stream of @strings --------------------------------------------------------------------


def _abbrev_and_refs(tmp_path: Path) -> list[str]:
    (tmp_path / "abbrev.bib").write_text(
        f'@string{{lancet = "The Lancet"}}\n@string{{wdoi = "{W}"}}\n', encoding="utf-8"
    )
    (tmp_path / "refs.bib").write_text(
        "@article{w, title={Ileal}, journal=lancet, doi=wdoi}\n", encoding="utf-8"
    )
    return [str(tmp_path / "abbrev.bib"), str(tmp_path / "refs.bib")]


@pytest.mark.parametrize("source", ["p.aux", "p.tex", "p.bcf"])
def test_macros_of_an_earlier_bibdata_file_are_defined_in_the_later(
    tmp_path: Path, source: str, offline
) -> None:  # type: ignore[no-untyped-def]
    doc = CitedDocument(
        path=str(tmp_path / source), keys=["w"], bibliographies=_abbrev_and_refs(tmp_path)
    )
    result = cited_references(doc)
    (ref,) = result.references
    assert (ref.doi, ref.journal, ref.conflict) == (W_CANON, "The Lancet", None)
    assert not [p for p in result.problems if "undefined macro" in p.message]
    (citation,) = check([ref], offline).citations
    assert citation.status == "retracted"


def test_pandoc_reads_each_file_on_its_own(tmp_path: Path, offline) -> None:  # type: ignore[no-untyped-def]
    """pandoc 3.9 reads ``doi=wdoi`` in refs.bib as "wdoi"; BibTeX would read the DOI: both
    readings are judged, and the retracted one decides."""
    doc = CitedDocument(
        path=str(tmp_path / "p.md"), keys=["w"], bibliographies=_abbrev_and_refs(tmp_path)
    )
    (ref,) = cited_references(doc).references
    assert ref.conflict and "undefined macro" in ref.conflict
    (citation,) = check([ref], offline).citations
    assert citation.status == "unverified"  # no reading names a flagged work: "wdoi", empty


def test_the_cache_key_holds_the_inherited_macros(tmp_path: Path) -> None:
    files = _abbrev_and_refs(tmp_path)
    cache = tmp_path / "cache"
    alone, _ = load_stream(Path(files[1]), cache, {})
    defined, after = load_stream(Path(files[1]), cache, {"wdoi": W, "lancet": "The Lancet"})
    again, _ = load_stream(Path(files[1]), cache, {})
    assert alone.references[0].doi is None and defined.references[0].doi == W_CANON
    assert again == alone and after["wdoi"] == W


# --- entries BibTeX prints ---------------------------------------------------------------------


def test_an_entry_without_a_key_is_judged_under_nocite_all(tmp_path: Path, offline) -> None:  # type: ignore[no-untyped-def]
    bib = tmp_path / "refs.bib"
    bib.write_text(f"@article{{ , title={{Ileal}}, doi={{{W}}}}}\n@misc{{b, doi={{10.1/b}}}}\n")
    doc = CitedDocument(path=str(tmp_path / "p.aux"), cite_all=True, bibliographies=[str(bib)])
    result = cited_references(doc)
    keys = [r.key for r in result.references]
    assert keys == ["(no key at refs.bib:1)", "b"]
    citation = check(result.references, offline).citations[0]
    assert (citation.key, citation.status) == ("(no key at refs.bib:1)", "retracted")


def test_a_repeated_key_with_unbalanced_braces_swallows_nothing() -> None:
    text = "@misc{a, doi={10.1000/a}}\n@misc{a, title={open\n@misc{b, doi={10.1000/b}}\n"
    assert [(r.key, r.doi) for r in parse_bib(text, "t.bib").references] == [
        ("a", "10.1000/a"),
        ("b", "10.1000/b"),
    ]


# --- both readings judged ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "bib",
    [
        f'@article{{w, title={{Ileal}}, doi="{W}" # nosuchmacro}}',  # BibTeX: the DOI
        f"@article{{w, doi={{10.1038/nature12373}}}}\n@article{{w, doi={{{W}}}}}",  # pandoc: last
        f"@article{{w, doi={{10.1038/nature12373}}, doi={{{W}}}}}",  # pandoc: the last field
        f"@article{{w, doi={{10.1038/nature12373}}}}\n@article{{W, doi={{{W}}}}}",  # case variant
    ],
)
def test_where_bibtex_and_pandoc_part_the_more_severe_reading_decides(offline, bib: str) -> None:  # type: ignore[no-untyped-def]
    refs = parse_bib(bib, "t.bib").references
    citations = check(refs, offline).citations
    flagged = [c for c in citations if c.status == "retracted"]
    assert flagged, citations
    assert all(c.doi == W_CANON for c in flagged)
    assert "the more severe reading decides" in (flagged[0].reason or "")


# --- DOIs with TeX escapes, PMIDs ---------------------------------------------------------------


@pytest.mark.parametrize(
    "written",
    [
        r"10.1016/S0140-6736\(97\)11096-0",
        r"10.1016/S0140{-}6736(97)11096{-}0",
        r"doi:~10.1016/S0140-6736(97)11096-0",
        r"10.1016/S0140-6736(97)11096-0~",
        r"\url{10.1016/S0140-6736\(97\)11096-0}",
    ],
)
def test_a_doi_written_with_tex_escapes_is_read_as_printed(written: str) -> None:
    (ref,) = parse_bib(f"@article{{w, doi={{{written}}}}}", "t.bib").references
    assert ref.doi == W_CANON


@pytest.mark.parametrize(
    ("written", "doi"),
    [
        (r"10.1000/a\_b", "10.1000/a_b"),
        (r"10.1000/a{\_}b", "10.1000/a_b"),
        (r"10.1000/a\%2Fb", "10.1000/a/b"),
        (r"10.1000/a\textunderscore{}b", "10.1000/a_b"),
        (r"10.1000/a\~{}b", "10.1000/a~b"),
        (r"10.1000/a~b", "10.1000/a~b"),  # a space names no DOI: \url's tilde is read
    ],
)
def test_tex_escapes_in_doi_fields(written: str, doi: str) -> None:
    (ref,) = parse_bib(f"@article{{w, doi={{{written}}}}}", "t.bib").references
    assert ref.doi == doi


@pytest.mark.parametrize(
    "written",
    [
        r"10.1016/S0140-6736(97)11096-0\relax",  # issue 38: was read literally, judged clean
        r"10.1016/S0140-6736(97)11096-0\relax ",
        r"10.1016/S0140-\-6736(97)11096-0",  # a hyphenation point prints nothing, not "-"
        r"10.1016/\allowbreak S0140-6736(97)\allowbreak{}11096-0",
        r"10.1016/S0140-6736\discretionary{-}{}{}(97)11096-0",
        r"10.1016/S0140-6736(97)\penalty0 11096-0",
        r"10.1016/S0140-6736(97)\linebreak[0]11096-0",
        r"10.1016/S0140-6736(97)\hspace{0pt}11096-0",
        r"10.1016/S0140\textendash{}6736(97)11096-0",
        r"10.1016/S0140-6736(97)\/11096-0",
        r"{\ttfamily 10.1016/S0140-6736(97)11096-0}",
    ],
)
def test_what_a_doi_field_does_not_print_is_dropped(written: str) -> None:
    (ref,) = parse_bib(f"@article{{w, doi={{{written}}}}}", "t.bib").references
    assert (ref.doi, ref.raw_doi) == (W_CANON, None)


@pytest.mark.parametrize("written", [r"10.1016/S0140-6736(97)11096-0\foo", r"10.1/\textit{x}"])
def test_a_doi_field_with_a_control_word_left_is_no_doi(written: str) -> None:
    """A control word TeX does not print as its letters: the field names no DOI that can be
    read, so it is ``invalid_doi`` (never a literal DOI that a full export calls clean)."""
    (ref,) = parse_bib(f"@article{{w, doi={{{written}}}}}", "t.bib").references
    assert ref.doi is None and ref.raw_doi


def test_a_doi_ending_in_relax_is_wakefields_under_strict(offline: Settings) -> None:
    """Issue 38 reproduction: ``{10.1016/S0140-6736(97)11096-0\relax}`` against a full export."""
    (ref,) = parse_bib(
        r"@article{w, doi = {10.1016/S0140-6736(97)11096-0\relax}}", "t.bib"
    ).references
    (citation,) = check([ref], offline).citations
    assert citation.status == "retracted"


@pytest.mark.parametrize(
    "printed",
    [
        r"\newblock doi: 10.1016/S0140-6736(97)11096-0\relax.",
        r"\newblock \doi{10.1016/S0140-6736(97)\allowbreak 11096-0}.",
        r"\newblock doi:10.1016/S0140-\-6736(97)11096-0\newblock more",
    ],
)
def test_a_bundles_bbl_reads_the_doi_as_it_prints(printed: str) -> None:
    """Issue 38 in an arXiv bundle's ``.bbl`` (the style wrote the field as it was): read
    literally, ``\\relax`` stayed in the DOI and ``\\allowbreak`` cut it short."""
    from rwgate.readers.builds.bbl import parse_bbl

    text = (
        f"\\begin{{thebibliography}}{{1}}\n\\bibitem{{w}} A. {printed}\n\\end{{thebibliography}}\n"
    )
    (ref,) = parse_bbl(text, "paper.bbl").references
    assert ref.doi == W_CANON


def test_a_ten_digit_zero_padded_pmid_is_read(offline) -> None:  # type: ignore[no-untyped-def]
    (ref,) = parse_bib("@article{h, pmid = {0034938348}}", "t.bib").references
    assert ref.pmid == "34938348"
    (citation,) = check([ref], offline).citations
    assert citation.status == "retracted"


def test_a_stray_byte_on_the_keys_own_line_changes_only_itself(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    path.write_bytes(b"@article{m\xc3\xbcller2010, title={Caf\xe9}, doi={" + W.encode() + b"}}\n")
    (ref,) = load_bibliography(path).references
    assert (ref.key, ref.title, ref.doi) == ("müller2010", "Café", W_CANON)


def test_month_macros_are_defined_in_every_file_of_a_stream(tmp_path: Path) -> None:
    """``month = dec`` is the style's macro (every standard .bst defines jan..dec): the files of
    one ``\\bibliography{a,b}`` read it as BibTeX does, never as an undefined macro that would
    make the entry unverified (a real Zotero export writes months this way)."""
    from rwgate.readers.bibliographies.bibtex import read_bib_stream

    first = tmp_path / "a.bib"
    first.write_text("@article{a, title={A}, month = dec, doi={10.1/a}}\n", "utf-8")
    second = tmp_path / "b.bib"
    second.write_text("@article{b, title={B}, month = sep, doi={10.1/b}}\n", "utf-8")
    one, macros = read_bib_stream(first, {})
    two, _ = read_bib_stream(second, macros)
    for result in (one, two):
        assert not result.problems, result.problems
        assert all(ref.conflict is None for ref in result.references)
