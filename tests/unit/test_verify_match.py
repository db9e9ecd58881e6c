"""The scorer, normalisation, identifiers and BibTeX building (pure functions, plus properties)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rwgate.contract.models import Reference
from rwgate.frontends.verify import bibtex_export as bx
from rwgate.frontends.verify.models import Author, Work
from rwgate.identify.ids import arxiv_id, identifiers_in_url
from rwgate.identify.lookup import score_work as verify_score
from rwgate.identify.same import (
    PARTIAL,
    WEIGHTS,
    author_overlap,
    normalize_title,
    score,
    title_similarity,
    venue_similarity,
    verdict_for,
)
from rwgate.identify.works import family_of

# --- normalisation and components -------------------------------------------------------------


def test_titles_normalise_markup_case_accents_and_retraction_marker() -> None:
    assert normalize_title("{RETRACTED}: {DNA} <i>in vivo</i> — Café!") == "dna in vivo cafe"
    assert normalize_title("Retraction: a notice") == "retraction a notice"  # a notice's title


def test_title_fragment_is_not_identical() -> None:
    full = "When contact changes minds: An experiment on transmission of support for gay equality"
    assert title_similarity("When contact changes minds", full) < 0.85
    assert title_similarity(full.upper(), full) == 1.0


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("Wakefield, A. J.", "Wakefield"),
        ("A. J. Wakefield", "Wakefield"),
        ("Wakefield AJ", "Wakefield"),
        ("Jan van der Berg", "van der Berg"),
        ("van der Berg, Jan", "van der Berg"),
        ("Łukasz Kaiser", "Kaiser"),
    ],
)
def test_family_names(name: str, family: str) -> None:
    assert family_of(name) == family


def test_author_overlap_is_order_free_and_counts_the_shorter_list() -> None:
    assert (
        author_overlap(["Green, D.", "LaCour, M."], ["Michael J. LaCour", "Donald P. Green"]) == 1
    )
    assert author_overlap(["Wakefield"], ["Wakefield", "Murch", "Anthony"]) == 1.0
    assert author_overlap(["Wakefeld"], ["Wakefield"]) == 1.0  # one typo
    assert author_overlap(["Smith", "Murch"], ["Wakefield", "Murch", "Anthony"]) == 0.5
    assert author_overlap([], ["Murch"]) is None


def test_venue_abbreviations() -> None:
    full = "Proceedings of the National Academy of Sciences"
    assert venue_similarity("Proc. Natl. Acad. Sci.", full) == 1.0
    assert venue_similarity("Lancet", "The Lancet") == 1.0
    assert venue_similarity("Nature", "Science") < 0.5  # type: ignore[operator]


def test_weights_and_thresholds() -> None:
    assert sum(WEIGHTS.values()) == pytest.approx(1.0)
    assert [verdict_for(x) for x in (0.85, 0.8499, 0.5, 0.4999)] == [
        "verified",
        "partial_match",
        "partial_match",
        "not_found",
    ]


def test_missing_components_do_not_count_and_poor_titles_cap_the_score() -> None:
    only_title = score("A title of a paper", "A title of a paper")
    assert only_title.authors is None and only_title.total == 1.0
    other_paper = score(
        "Completely different words here",
        "A title of a paper",
        ["Smith"],
        ["Smith"],
        2020,
        2020,
        "Nature",
        "Nature",
    )
    assert other_paper.title is not None and other_paper.total <= other_paper.title


def test_an_untitled_candidate_never_verifies_a_titled_citation() -> None:
    # A registry record without a title (Crossref components, reviews) by the same author in
    # the same year must not verify a titled citation, nor lend it a recovered DOI.
    cited = Reference(
        key="k",
        title="Ileal-lymphoid-nodular hyperplasia in children",
        authors=["Wakefield"],
        year=1998,
        journal="The Lancet",
    )
    for untitled in (None, "", "<i></i>"):
        work = Work(
            title=untitled, authors=[Author(family="Wakefield")], year=1998, venue="The Lancet"
        )
        parts = verify_score(cited, work)
        assert parts.title is None and parts.total == PARTIAL
        assert verdict_for(parts.total) == "partial_match"
    by_doi = Reference(
        key="k", doi="10.1/x", authors=["Wakefield"], year=1998
    )  # no title to confirm
    titled = Work(
        title="Ileal-lymphoid-nodular hyperplasia", authors=[Author(family="Wakefield")], year=1998
    )
    assert verify_score(by_doi, titled).total == 1.0


def test_identifiers() -> None:
    assert arxiv_id("arXiv:1706.03762v5") == "1706.03762"
    assert arxiv_id("hep-th/9901001") == "hep-th/9901001"
    assert arxiv_id("1706.037") is None and arxiv_id("10.1038/x") is None
    assert identifiers_in_url("https://arxiv.org/pdf/1706.03762v2.pdf") == (None, "1706.03762")
    assert identifiers_in_url("https://doi.org/10.1038/NATURE12373") == (
        "10.1038/nature12373",
        None,
    )
    assert identifiers_in_url("https://example.org/paper") == (None, None)


# --- properties of the scorer -----------------------------------------------------------------

words = st.text(alphabet="abcdefgh XYZéü-:{}", max_size=40)
names = st.lists(st.text(alphabet="abcdeAB, .ł", min_size=1, max_size=12), max_size=5)
years = st.none() | st.integers(min_value=1900, max_value=2030)
venues = st.none() | st.text(alphabet="abc JNP.&", max_size=20)


@settings(max_examples=300, deadline=None)
@given(words, words, names, names, years, years, venues, venues)
def test_score_is_symmetric_and_bounded(ta, tb, aa, ab, ya, yb, va, vb) -> None:
    one = score(ta, tb, aa, ab, ya, yb, va, vb)
    two = score(tb, ta, ab, aa, yb, ya, vb, va)
    assert one == two
    for part in (one.title, one.authors, one.year, one.venue, one.total):
        assert part is None or 0.0 <= part <= 1.0


@settings(max_examples=150, deadline=None)
@given(words, names, years, venues)
def test_a_citation_matches_itself_fully(title, authors, year, venue) -> None:
    parts = score(title, title, authors, authors, year, year, venue, venue)
    present = [p for p in (parts.title, parts.authors, parts.year, parts.venue) if p is not None]
    assert all(p == 1.0 for p in present)
    assert parts.total == (1.0 if present else 0.0)


# --- BibTeX building --------------------------------------------------------------------------


def test_title_protection() -> None:
    assert bx.protect_title("Molecular Structure of DNA: a note") == (
        "Molecular {Structure} of {DNA}: a note"
    )
    assert bx.protect_title("RNA-seq in COVID-19 patients") == "{RNA-seq} in {COVID-19} patients"
    # Registry values are plain text: a brace is a character to print, never markup.
    assert bx.protect_title("Odd } title") == r"Odd \textbraceright{} title"


def test_escape_treats_values_as_plain_text() -> None:
    assert bx.escape(r"R&D 50% \& more_x") == r"R\&D 50\% \textbackslash{}\& more\_x"


def test_keys_use_only_what_the_record_has() -> None:
    work = Work(title="The Structure of DNA", authors=[Author(family="Müller")], year=2001)
    assert bx.make_key(work) == "muller2001structure"
    assert bx.make_key(Work(title="On Things")) == "things"
    assert bx.make_key(Work(doi="10.1/x.y")) == "doi101xy"
    assert bx.unique_keys(["a", "a", "b", "a"]) == ["a", "aa", "b", "ab"]


def test_metadata_entry_writes_no_guessed_field() -> None:
    work = Work(doi="10.1/x", title="A & B", year=2020, type="journal-article")
    text = bx.from_work(work)
    assert (
        text == "@article{2020b,\n  title     = {A \\& {B}},\n  year      = {2020},\n"
        "  doi       = {10.1/x}\n}\n"
    )


def test_registry_entry_is_rekeyed_and_keeps_month_macro() -> None:
    cn = (
        " @article{Watson_1953, title={Molecular Structure of Nucleic Acids}, "
        "DOI={10.1038/171737a0}, journal={Nature}, year={1953}, month=apr }"
    )
    out = bx.from_registry_text(cn, "watson1953molecular")
    assert out is not None and out.startswith("@article{watson1953molecular,\n")
    assert "month     = apr" in out and "{Nucleic} {Acids}" in out
    assert bx.from_registry_text("<html>not bibtex</html>", "k") is None
