"""Citation verification end to end: loopback fake Crossref and fake OpenAlex, real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.crossref import FakeCrossref, closed_port_url
from fakes.openalex import FakeOpenAlex
from rwgate.contract.models import Reference
from rwgate.frontends.verify.export import get_bibtex
from rwgate.frontends.verify.search import search_references
from rwgate.frontends.verify.verify import verify_citation
from rwgate.identify.lookup import open_registries
from rwgate.identify.recover import recover_dois
from rwgate.settings.config import Settings, load_settings

WAKEFIELD = "10.1016/s0140-6736(97)11096-0"
LACOUR = "10.1126/science.1256151"
WATSON = "10.1038/171737a0"
ARXIV = "10.48550/arxiv.1706.03762"
LACOUR_TITLE = (
    "When contact changes minds: An experiment on transmission of support for gay equality"
)
WATSON_TITLE = "Molecular Structure of Nucleic Acids: A Structure for Deoxyribose Nucleic Acid"
INVENTED = "Deep reinforcement learning predicts retraction cascades in peer review networks"


@pytest.fixture
def fake_openalex() -> Iterator[FakeOpenAlex]:
    with FakeOpenAlex() as fake:
        yield fake


def settings_for(tmp_path: Path, crossref: str, openalex: str, **more: object) -> Settings:
    overrides = {"crossref_url": crossref, "openalex_url": openalex, "max_total_seconds": 4.0}
    return load_settings(tmp_path, overrides={**overrides, **more})


@pytest.fixture
def settings(tmp_path: Path, fake_crossref: FakeCrossref, fake_openalex: FakeOpenAlex) -> Settings:
    return settings_for(tmp_path, fake_crossref.url, fake_openalex.url)


def by_field(result, field: str):
    return [d for d in result.discrepancies if d.field == field]


# --- verdicts ---------------------------------------------------------------------------------


def test_exact_citation_is_verified_clean_with_both_sources(settings: Settings) -> None:
    r = verify_citation(
        WATSON_TITLE, ["Watson, J. D.", "Crick, F. H. C."], 1953, venue="Nature", settings=settings
    )
    assert r.verdict == "verified" and r.confidence == 1.0
    assert r.matched is not None and r.matched.doi == WATSON
    assert r.matched.sources == ["crossref", "openalex"]
    assert r.sources_answered == ["crossref", "openalex"] and r.sources_failed == {}
    assert r.errors == [] and r.discrepancies == []
    assert r.integrity is not None and r.integrity.status == "clean"
    assert "DOI recovered from title: 10.1038/171737a0" in r.info


def test_typoed_title_is_verified_with_a_title_warning(settings: Settings) -> None:
    typo = "Molecular structre of nucleic acid: a structure for deoxyribose nucleic acids"
    r = verify_citation(typo, ["Watson", "Crick"], 1953, venue="Nature", settings=settings)
    assert r.verdict == "verified" and r.matched and r.matched.doi == WATSON
    [d] = by_field(r, "title")
    assert d.severity == "warning" and d.found == WATSON_TITLE
    assert r.errors == []


def test_year_one_off_is_a_warning_and_far_off_an_error(settings: Settings) -> None:
    near = verify_citation(
        LACOUR_TITLE, ["LaCour", "Green"], 2015, "", venue="Science", settings=settings
    )
    assert near.verdict == "verified"
    assert "year: cited 2015, found 2014" in near.warnings
    far = verify_citation(
        LACOUR_TITLE, ["LaCour", "Green"], 2009, venue="Science", settings=settings
    )
    assert far.verdict == "partial_match" and 0.5 <= far.confidence < 0.85
    assert "year: cited 2009, found 2014" in far.errors


def test_swapped_author_order_still_verifies_with_an_order_warning(settings: Settings) -> None:
    r = verify_citation(
        LACOUR_TITLE,
        "Green, Donald P. and LaCour, Michael J.",
        2014,
        venue="Science",
        settings=settings,
    )
    assert r.verdict == "verified" and r.score is not None and r.score.authors == 1.0
    [d] = by_field(r, "authors")
    assert d.severity == "warning" and "order differs" in d.message


def test_wrong_authors_are_an_error(settings: Settings) -> None:
    r = verify_citation(LACOUR_TITLE, ["Smith", "Jones"], 2014, venue="Science", settings=settings)
    assert r.verdict == "partial_match"
    assert any(e.startswith("authors: cited Smith, Jones not among") for e in r.errors)


def test_missing_fields_are_warnings_not_errors(settings: Settings) -> None:
    r = verify_citation(WATSON_TITLE, settings=settings)
    assert r.verdict == "verified"
    assert {d.field for d in r.discrepancies} == {"authors", "year", "venue"}
    assert all(d.severity == "warning" for d in r.discrepancies)
    assert "authors: not given in the citation; not checked" in r.warnings
    assert r.errors == []


def test_hallucinated_reference_is_not_found_and_nothing_is_invented(settings: Settings) -> None:
    r = verify_citation(
        INVENTED, ["Smith, J.", "Doe, A."], 2021, venue="Nature Methods", settings=settings
    )
    assert r.verdict == "not_found" and r.confidence < 0.5
    assert r.matched is None and r.bibtex is None and r.integrity is None
    assert r.sources_answered == ["crossref", "openalex"]


def test_retracted_match_carries_verdict_status_notice_and_bibtex_note(settings: Settings) -> None:
    r = verify_citation(
        LACOUR_TITLE,
        ["LaCour, Michael J.", "Green, Donald P."],
        2014,
        venue="Science",
        settings=settings,
    )
    assert r.verdict == "verified"
    assert r.integrity is not None and r.integrity.status == "retracted"
    assert [n.doi for n in r.integrity.notices] == ["10.1126/science.aac6638"]
    assert (
        "matched work is retracted: Retracted 2015; notice doi:10.1126/science.aac6638" in r.errors
    )
    assert r.matched is not None and r.matched.is_retracted is True
    assert (
        r.bibtex is not None
        and "note      = {Retracted 2015; notice doi:10.1126/science.aac6638}" in r.bibtex
    )


def test_doi_naming_another_work_caps_the_verdict_at_partial_match(settings: Settings) -> None:
    """The right title with another work's DOI (issue 16): citing it as given sends readers to
    LaCour 2014, so it never verifies, whatever the title says."""
    r = verify_citation(WATSON_TITLE, ["Watson", "Crick"], 1953, doi=LACOUR, settings=settings)
    assert r.verdict == "partial_match" and r.matched and r.matched.doi == WATSON
    assert r.confidence < 0.85 and not r.verified and r.matched_paper is None
    assert r.possible_match is not None and r.possible_match.doi == WATSON
    assert f"doi: cited {LACOUR}, found {WATSON}" in r.errors


def test_unregistered_doi_is_reported(settings: Settings) -> None:
    r = verify_citation(WATSON_TITLE, doi="10.5555/no-such-work-rwgate", settings=settings)
    assert any("10.5555/no-such-work-rwgate is not registered" in e for e in r.errors)
    assert r.verdict == "partial_match" and r.matched and r.matched.doi == WATSON


def test_doi_only_citation_is_checked_by_its_record(settings: Settings) -> None:
    r = verify_citation("", doi=f"https://doi.org/{WAKEFIELD.upper()}", settings=settings)
    assert r.verdict == "verified" and r.matched and r.matched.doi == WAKEFIELD
    assert r.integrity is not None and r.integrity.status == "retracted"
    assert "only the DOI could be checked: the citation gives no metadata" in r.warnings


def test_arxiv_id_and_url_resolve_through_the_datacite_doi(
    settings: Settings, fake_openalex: FakeOpenAlex, fake_crossref: FakeCrossref
) -> None:
    for kw in ({"arxiv_id": "arXiv:1706.03762v5"}, {"url": "https://arxiv.org/abs/1706.03762v5"}):
        r = verify_citation(
            "Attention is all you need", ["Vaswani", "Shazeer"], 2017, settings=settings, **kw
        )
        assert r.verdict == "verified" and r.matched and r.matched.doi == ARXIV
        assert r.integrity is not None and r.integrity.status == "unverified"
        assert "DataCite" in (r.integrity.reason or "")
        assert r.bibtex and "eprint    = {1706.03762}" in r.bibtex
    assert any(q.path == f"/works/doi:{ARXIV}" for q in fake_openalex.requests)
    assert all("arxiv.org" not in q.path for q in fake_crossref.requests)


def test_doi_in_a_url_is_read_without_fetching(settings: Settings, fake_crossref) -> None:
    url = f"https://www.science.org/doi/full/{LACOUR}?utm_source=x"
    r = verify_citation(LACOUR_TITLE, url=url, settings=settings)
    assert f"DOI {LACOUR} read from the URL (not fetched)" in r.info
    assert r.matched and r.matched.doi == LACOUR


# --- sources down -----------------------------------------------------------------------------


def test_openalex_down_crossref_answers(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    s = settings_for(tmp_path, fake_crossref.url, closed_port_url())
    r = verify_citation(LACOUR_TITLE, ["LaCour"], 2014, settings=s)
    assert r.verdict == "verified" and r.matched and r.matched.sources == ["crossref"]
    assert r.sources_answered == ["crossref"]
    assert "connection refused" in r.sources_failed["openalex"]
    assert any(w.startswith("sources answered: crossref (openalex") for w in r.warnings)
    assert r.integrity is not None and r.integrity.status == "retracted"


def test_crossref_down_openalex_answers_and_integrity_is_unverified(
    tmp_path: Path, fake_openalex: FakeOpenAlex
) -> None:
    s = settings_for(tmp_path, closed_port_url(), fake_openalex.url, max_total_seconds=2.0)
    r = verify_citation(LACOUR_TITLE, ["LaCour"], 2014, settings=s)
    assert r.verdict == "verified" and r.sources_answered == ["openalex"]
    assert r.integrity is not None and r.integrity.status == "unverified"
    assert any("OpenAlex marks the matched work as retracted" in w for w in r.warnings)


def test_no_source_answers_gives_unverified_not_not_found(tmp_path: Path) -> None:
    s = settings_for(tmp_path, closed_port_url(), closed_port_url(), max_total_seconds=2.0)
    r = verify_citation(INVENTED, settings=s)
    assert r.verdict == "unverified" and r.matched is None
    assert set(r.sources_failed) == {"crossref", "openalex"}


def test_transient_openalex_faults_are_retried(settings: Settings, fake_openalex) -> None:
    fake_openalex.fail_next("503", times=2, retry_after="0")
    r = verify_citation(WATSON_TITLE, settings=settings)
    assert r.sources_answered == ["crossref", "openalex"]
    assert r.matched and "openalex" in r.matched.sources


# --- DOI recovery -----------------------------------------------------------------------------


def test_recover_dois_fills_verified_matches_only(settings: Settings) -> None:
    refs = [
        Reference(key="lacour", title=LACOUR_TITLE, journal="Science", year=2014),
        Reference(key="invented", title=INVENTED, journal="Nature", year=2020),
        Reference(key="bare", title=WATSON_TITLE),
        Reference(key="has", doi=WATSON, title=WATSON_TITLE, year=1953),
    ]
    regs = open_registries(settings)
    try:
        recovery = recover_dois(refs, regs)
    finally:
        regs.close()
    out = recovery.references
    assert out[0].doi == LACOUR and out[0].doi_origin == "title"
    assert out[1].doi is None and out[2].doi is None
    assert out[3] == refs[3]
    assert refs[0].doi is None  # the input is not modified
    assert list(recovery.confidence) == [0] and 0.85 <= recovery.confidence[0] <= 1.0
    assert recovery.warnings == []


# --- search_references ------------------------------------------------------------------------


def test_search_dedupes_across_sources_with_integrity(settings: Settings) -> None:
    res = search_references("contact changes minds gay equality", max_results=5, settings=settings)
    dois = [h.work.doi for h in res.results]
    assert len(dois) == len(set(dois)) and dois[0] == LACOUR
    first = res.results[0]
    assert first.work.sources == ["crossref", "openalex"]
    assert first.integrity is not None and first.integrity.status == "retracted"
    assert res.sources_answered == ["crossref", "openalex"]


def test_search_year_range_and_source_choice(settings: Settings, fake_crossref) -> None:
    res = search_references(
        "nature cell nucleic", year_from=2013, year_to=2013, sources=["openalex"], settings=settings
    )
    assert res.results and all(h.work.year == 2013 for h in res.results)
    assert res.sources_answered == ["openalex"]
    assert not fake_crossref.requests_to("/works?") and not [
        r for r in fake_crossref.requests if "query.bibliographic" in r.query
    ]


def test_search_arguments_are_checked(settings: Settings) -> None:
    with pytest.raises(ValueError, match="max_results"):
        search_references("x", max_results=31, settings=settings)
    with pytest.raises(ValueError, match="unknown source"):
        search_references("x", sources=["scholar"], settings=settings)


def test_search_for_nonsense_returns_nothing(settings: Settings) -> None:
    res = search_references("zzyzx qqxq", settings=settings)
    assert res.results == []


# --- get_bibtex -------------------------------------------------------------------------------


def test_get_bibtex_by_doi_uses_content_negotiation(settings: Settings, fake_crossref) -> None:
    res = get_bibtex(doi=f"doi:{LACOUR}", settings=settings)
    [entry] = res.entries
    assert entry.origin == "content_negotiation" and entry.key == "lacour2014when"
    assert entry.bibtex.startswith("@article{lacour2014when,")
    assert "title     = {When contact changes minds: {An} experiment" in entry.bibtex
    assert "note      = {Retracted 2015; notice doi:10.1126/science.aac6638}" in entry.bibtex
    assert entry.integrity is not None and entry.integrity.status == "retracted"
    assert any("/transform/application/x-bibtex" in r.path for r in fake_crossref.requests)


def test_get_bibtex_falls_back_to_metadata_and_never_invents(settings: Settings) -> None:
    res = get_bibtex(
        dois=[ARXIV, "10.5555/not-registered", "not a doi"], title=INVENTED, settings=settings
    )
    [entry] = res.entries
    assert entry.origin == "metadata" and entry.key == "vaswani2017attention"
    assert "journal" not in entry.bibtex and "volume" not in entry.bibtex
    assert res.not_found == ["not a doi", INVENTED, "10.5555/not-registered"]


def test_get_bibtex_by_title_and_unique_keys(settings: Settings) -> None:
    res = get_bibtex(dois=[WATSON], title=WATSON_TITLE, settings=settings)
    assert [e.doi for e in res.entries] == [WATSON]
    res = get_bibtex(dois=[WAKEFIELD, WATSON], settings=settings)
    assert [e.key for e in res.entries] == ["wakefield1998ileal", "watson1953molecular"]
    assert "{RETRACTED}" in res.text and "Retracted 2010" in res.text


def test_an_unreachable_registry_makes_get_bibtex_unverified_never_not_found(
    tmp_path: Path,
) -> None:
    """Issue 16: the server's instructions tell agents never to cite a not_found work, so a
    real DOI must not be called not_found because the network was down."""
    s = settings_for(tmp_path, closed_port_url(), closed_port_url(), max_total_seconds=2.0)
    res = get_bibtex(doi=WATSON, title=WATSON_TITLE, settings=s)
    assert res.entries == [] and res.not_found == []
    assert sorted(res.unverified) == sorted([WATSON, WATSON_TITLE])
    assert any(
        w.startswith(f"{WATSON}: unverified, a registry could not be asked") for w in res.warnings
    )


def test_an_unreachable_registry_makes_a_search_incomplete(tmp_path: Path) -> None:
    s = settings_for(tmp_path, closed_port_url(), closed_port_url(), max_total_seconds=2.0)
    res = search_references("contact changes minds", settings=s)
    assert res.results == [] and res.complete is False and res.sources_failed
