"""The .bib reader: DOI recovery, line numbers, broken and duplicate entries, encodings."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rwgate.contract.doi import try_normalize
from rwgate.readers import ReaderError, load_bibliography
from rwgate.readers.bibliographies.bibtex import parse_bib
from rwgate.readers.bibliographies.registry import by_name

read_bib = by_name("bibtex").read

FIXTURES = Path(__file__).parents[1] / "fixtures" / "bib"
SICI = "10.1002/(SICI)1097-4636(199812)43:4<431::AID-JBM11>3.0.CO;2-Y"


def line_of(path: Path, needle: str) -> int:
    """1-based line of the first line containing ``needle``, read independently of the reader."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


@pytest.fixture(scope="module")
def refs() -> dict[str, object]:
    result = read_bib(FIXTURES / "refs.bib")
    assert result.problems == []
    return {ref.key: ref for ref in result.references}


def test_reads_every_entry_in_file_order_as_bibtex_does() -> None:
    result = read_bib(FIXTURES / "refs.bib")
    keys = [ref.key for ref in result.references]
    # BibTeX's @comment ends at its name: the entry written inside it is an entry to BibTeX
    # (tests/e2e/test_bib_parity.py checks this against BibTeX itself).
    assert keys == [
        "commented",
        "wakefield1998",
        "lacour2014",
        "mcnutt2015",
        "njei2011",
        "kucsko2013",
        "watson1953",
        "sici1998",
        "typo2014",
    ]


def test_line_numbers_point_at_the_entry_start(refs: dict) -> None:
    path = FIXTURES / "refs.bib"
    for key, ref in refs.items():
        assert ref.location.file == str(path)
        assert ref.location.line == line_of(path, "{" + key + ","), key


@pytest.mark.parametrize(
    ("key", "doi", "origin"),
    [
        ("wakefield1998", "10.1016/s0140-6736(97)11096-0", "doi"),
        ("lacour2014", "10.1126/science.1256151", "url"),
        ("mcnutt2015", "10.1126/science.aac6638", "note"),
        ("njei2011", "10.1002/14651858.cd009522", "eprint"),
        ("kucsko2013", "10.1038/nature12373", "doi"),
        ("watson1953", "10.1038/171737a0", "doi"),
        ("sici1998", SICI.lower(), "doi"),
    ],
)
def test_doi_found_in_each_field(refs: dict, key: str, doi: str, origin: str) -> None:
    assert refs[key].doi == doi
    assert refs[key].doi_origin == origin
    assert refs[key].raw_doi is None


def test_malformed_doi_field_is_kept_and_never_replaced_by_url(refs: dict) -> None:
    typo = refs["typo2014"]
    assert typo.doi is None
    assert typo.raw_doi == "10.1126science.1256151"
    assert typo.doi_origin == "doi"


def test_macros_latex_and_dates(refs: dict) -> None:
    wakefield = refs["wakefield1998"]
    assert wakefield.journal == "The Lancet"  # @string macro
    assert wakefield.title is not None
    assert wakefield.title.startswith("RETRACTED: Ileal-lymphoid-nodular hyperplasia")
    assert "{" not in wakefield.title and "\n" not in wakefield.title
    assert wakefield.year == 1998
    assert refs["lacour2014"].journal == "Science"  # journaltitle
    assert refs["lacour2014"].year == 2014  # from date
    assert refs["njei2011"].title.endswith("chronic hepatitis B")


def test_latex_decoding_of_title_and_journal() -> None:
    text = r"""@article{k,
  title = {Na{\"\i}ve {M}{\"u}ller \& Caf\'e: 50\% of {DNA}},
  journal = "Revista M{\'e}dica" # " " # {de {\c{C}}ordoba},
  year = {in press, 2021a}
}"""
    (ref,) = parse_bib(text, "t.bib").references
    assert ref.title == "Naïve Müller & Café: 50% of DNA"
    assert ref.journal == "Revista Médica de Çordoba"
    assert ref.year == 2021


def test_authors_are_family_names_from_the_fixture(refs: dict) -> None:
    assert refs["wakefield1998"].authors == ["Wakefield", "Murch", "Anthony"]
    assert refs["lacour2014"].authors == ["LaCour", "Green"]
    assert refs["kucsko2013"].authors == []  # no author field


def test_authors_in_both_name_forms_with_braces_accents_and_others() -> None:
    text = r"""@article{k,
  author = {M{\"u}ller, Hans and Jos{\'e} Garc{\'\i}a-M\'arquez and {Barnes and Noble}
            and Jan van der Berg and King, Jr., Martin Luther and {\'E}mile Zola and
            Smith~John AND others},
  editor = {Ignored, Editor},
  title  = {T}
}"""
    (ref,) = parse_bib(text, "t.bib").references
    assert ref.authors == [
        "Müller",
        "García-Márquez",
        "Barnes and Noble",
        "van der Berg",
        "King",
        "Zola",
        "John",
    ]


def test_authors_fall_back_to_editors_and_follow_macros() -> None:
    text = r"""@string{who = "Doe, Jane"}
@book{b, editor = who # " and Roe, Richard", title = {Edited}}
@book{c, editor = {{World Health Organization}}, title = {Report}}"""
    refs = {r.key: r for r in parse_bib(text, "t.bib").references}
    assert refs["b"].authors == ["Doe", "Roe"]
    assert refs["c"].authors == ["World Health Organization"]


def test_a_doi_less_entry_gives_its_arxiv_id_and_url_as_the_reader_sees_the_entry() -> None:
    text = r"""@string{base = "https://arxiv.org/abs/"}
@misc{v, eprint = {1706.03762}, archivePrefix = {arXiv}, url = base # "1706.03762v5"}
@misc{w, eprint = {10.1000/x}, eprinttype = {doi}, url = {\url{https://ex.org/a\_b}}}
@misc{u, url = {\url{https://ex.org/a\_b}}}
@misc{v, eprint = {9999.99999}, archiveprefix = {arXiv}}"""
    refs = {r.key: r for r in parse_bib(text, "t.bib").references}
    v = refs["v"]
    assert (v.arxiv_id, v.url) == ("1706.03762", "https://arxiv.org/abs/1706.03762v5")
    assert (refs["w"].doi, refs["w"].arxiv_id, refs["w"].url) == ("10.1000/x", None, None)
    assert (refs["u"].arxiv_id, refs["u"].url) == (None, "https://ex.org/a_b")


def test_booktitle_is_the_journal_of_proceedings() -> None:
    text = "@inproceedings{p, booktitle = {Proc. of {ACL}}, year = 2020}"
    (ref,) = parse_bib(text, "t.bib").references
    assert ref.journal == "Proc. of ACL"


def test_tex_escaped_doi_and_url_wrappers() -> None:
    text = r"""@misc{a, doi = {10.1000/abc\_def}}
@misc{b, url = {\url{https://onlinelibrary.wiley.com/doi/full/10.1002/14651858.CD009522}}}
@misc{c, howpublished = {\href{https://doi.org/10.1038/171737a0}{Nature}}}
@misc{d, addendum = {See DOI 10.1038/nature12373}}
@misc{e, eprint = {2101.00001}, archiveprefix = {arXiv}}
@misc{f, eprint = {not a doi}, eprinttype = {doi}}
"""
    refs = {r.key: r for r in parse_bib(text, "t.bib").references}
    assert refs["a"].doi == "10.1000/abc_def"
    assert (refs["b"].doi, refs["b"].doi_origin) == ("10.1002/14651858.cd009522", "url")
    assert (refs["c"].doi, refs["c"].doi_origin) == ("10.1038/171737a0", "howpublished")
    assert (refs["d"].doi, refs["d"].doi_origin) == ("10.1038/nature12373", "addendum")
    assert (refs["e"].doi, refs["e"].raw_doi) == (None, None)
    assert (refs["f"].doi, refs["f"].raw_doi, refs["f"].doi_origin) == (None, "not a doi", "eprint")


def test_empty_doi_field_falls_through_to_url() -> None:
    text = "@misc{a, doi = {}, url = {https://doi.org/10.1038/nature12373}}"
    (ref,) = parse_bib(text, "t.bib").references
    assert (ref.doi, ref.raw_doi, ref.doi_origin) == ("10.1038/nature12373", None, "url")


def test_pmid_from_field_or_pubmed_eprint() -> None:
    text = """@article{a, pmid = {PMID: 13054692}}
@article{b, eprint = {13054692}, eprinttype = {pubmed}}
@article{c, eprint = {13054692}, eprinttype = {arxiv}}
"""
    refs = {r.key: r for r in parse_bib(text, "t.bib").references}
    assert refs["a"].pmid == "13054692"
    assert refs["b"].pmid == "13054692"
    assert refs["c"].pmid is None


def test_half_broken_file_reads_what_bibtex_reads() -> None:
    # lacour2014's title never closes: BibTeX keeps the entry (without its DOI, which the open
    # value swallowed) and the value runs to the end of the file, kucsko2013 included.
    path = FIXTURES / "half-broken.bib"
    result = read_bib(path)
    assert [r.key for r in result.references] == ["wakefield1998", "lacour2014"]
    assert [r.doi for r in result.references] == ["10.1016/s0140-6736(97)11096-0", None]
    (problem,) = result.problems
    assert problem.severity == "error"
    assert problem.location.line == line_of(path, "@article{lacour2014")
    assert "lacour2014" in problem.message
    assert "\n" not in str(problem)


def test_entry_without_comma_after_key_is_reported_not_fatal() -> None:
    text = (
        "@misc{first, doi = {10.1038/171737a0}}\n"
        "@misc{nocomma title = {x}}\n"
        "@misc{last, doi={10.1038/nature12373}}\n"
    )
    result = parse_bib(text, "t.bib")
    assert [r.key for r in result.references] == ["first", "nocomma", "last"]  # as BibTeX
    assert [r.location.line for r in result.references] == [1, 2, 3]
    assert [(p.location.line, "nocomma" in p.message) for p in result.problems] == [(2, True)]


def test_duplicate_keys_keep_the_first_and_name_both_lines() -> None:
    path = FIXTURES / "duplicates.bib"
    result = read_bib(path)
    assert [r.key for r in result.references] == ["lacour2014", "watson1953"]
    assert result.references[0].doi == "10.1126/science.1256151"
    (problem,) = result.problems
    first = line_of(path, "@article{lacour2014")
    second = line_of(path, "Editorial retraction") - 1
    assert problem.location.line == second
    assert f"line {first}" in problem.message and f"line {second}" in problem.message


def test_repeated_field_uses_the_first_value() -> None:
    text = "@misc{a, doi = {10.1038/171737a0}, doi = {10.1126/science.1256151}}"
    result = parse_bib(text, "t.bib")
    assert result.references[0].doi == "10.1038/171737a0"
    assert len(result.problems) == 1 and "doi" in result.problems[0].message


def test_latin1_file_is_read_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "old.bib"
    path.write_bytes(
        b"% export\n@article{watson1953,\n  title = {Mol\xe9cule},\n  doi = {10.1038/171737a0}\n}\n"
    )
    result = read_bib(path)
    (ref,) = result.references
    assert ref.title == "Molécule"
    assert ref.doi == "10.1038/171737a0"
    assert ref.location.line == 2
    (problem,) = result.problems
    assert problem.severity == "warning"
    assert "UTF-8" in problem.message and problem.location.line == 3


def test_utf8_with_bom_is_plain_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bom.bib"
    path.write_bytes("\ufeff@article{a, title = {Müller}, doi = {10.1038/171737a0}}".encode())
    result = read_bib(path)
    assert result.problems == []
    assert result.references[0].title == "Müller"
    assert result.references[0].key == "a"


def test_missing_file_raises_reader_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.bib"
    with pytest.raises(ReaderError, match=r"nope\.bib"):
        read_bib(missing)
    with pytest.raises(ReaderError, match=r"nope\.bib"):
        load_bibliography(missing)
    with pytest.raises(ReaderError, match="directory"):
        read_bib(tmp_path)


def test_empty_file_has_no_references() -> None:
    assert parse_bib("", "e.bib").references == []
    assert parse_bib("% only a comment\n", "e.bib").problems == []


# --- generated files: N entries in, exactly those N references out ---------------------------

_KEY = st.text(string.ascii_letters + string.digits + "_:-", min_size=1, max_size=12)
_TITLE = st.text(string.ascii_letters + string.digits + " ,.", min_size=1, max_size=40).filter(
    lambda t: t.strip() != ""
)
_SUFFIX = st.text(string.ascii_letters + string.digits + "./-_()<>;:", min_size=1, max_size=20)
_DOI = st.builds(
    lambda reg, suffix: f"10.{reg}/{suffix}", st.integers(1000, 99999), _SUFFIX
).filter(
    # Canonical up to case, and recoverable from running text: find_in_text rightly ends a DOI
    # at an HTML closing tag ("</"), which a DOI in a URL or a note cannot then contain.
    lambda d: try_normalize(d) == d.lower() and "</" not in d
)
_ENTRY = st.tuples(_TITLE, _DOI, st.integers(0, 3), st.sampled_from(["doi", "url", "note"]))


def _render(key: str, title: str, doi: str, padding: int, where: str) -> str:
    value = {"doi": doi, "url": f"https://doi.org/{doi}", "note": f"Available at doi:{doi}"}[where]
    return (
        "\n" * padding + f"@article{{{key},\n  title = {{{title}}},\n  {where} = {{{value}}}\n}}\n"
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    # Keys distinct up to case: BibTeX takes 'Q' and 'q' for one key (tested on its own).
    st.dictionaries(_KEY, _ENTRY, min_size=1, max_size=8).filter(
        lambda d: len({k.lower() for k in d}) == len(d)
    )
)
def test_generated_bib_round_trips(entries: dict[str, tuple[str, str, int, str]]) -> None:
    text, expected = "", []
    for key, (title, doi, padding, where) in entries.items():
        line = text.count("\n") + 1 + padding
        text += _render(key, title, doi, padding, where)
        expected.append((key, doi.lower(), line, " ".join(title.split())))
    result = parse_bib(text, "gen.bib")
    assert result.problems == []
    got = [(r.key, r.doi, r.location.line, r.title) for r in result.references]
    assert got == expected
