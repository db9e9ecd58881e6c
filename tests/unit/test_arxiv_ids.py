"""One parser for arXiv ids as authors write them, and the preprint-server classifier."""

from __future__ import annotations

import pytest

from rwgate.sources.preprint_ids import (
    ArxivId,
    arxiv_of_doi,
    biorxiv_doi,
    parse_arxiv,
    preprint_server,
)


@pytest.mark.parametrize(
    ("written", "paper", "version"),
    [
        ("1706.03762", "1706.03762", None),
        ("1706.03762v5", "1706.03762", 5),
        ("arXiv:1706.03762", "1706.03762", None),
        ("arxiv:1706.03762v7", "1706.03762", 7),
        ("arXiv: 1706.03762", "1706.03762", None),
        ("ARXIV:1706.03762", "1706.03762", None),
        ("arXiv preprint arXiv:1706.03762", "1706.03762", None),  # Google Scholar's journal
        ("https://arxiv.org/abs/1706.03762", "1706.03762", None),
        ("http://arxiv.org/abs/1706.03762v2", "1706.03762", 2),
        ("https://arxiv.org/pdf/1706.03762v5.pdf", "1706.03762", 5),
        ("https://arxiv.org/pdf/1706.03762", "1706.03762", None),
        ("https://export.arxiv.org/abs/2201.13452", "2201.13452", None),
        ("www.arxiv.org/abs/0704.0001", "0704.0001", None),
        ("abs/1706.03762", "1706.03762", None),  # DBLP: volume = {abs/1706.03762}
        ("10.48550/arXiv.1706.03762", "1706.03762", None),
        ("https://doi.org/10.48550/arXiv.2104.01234", "2104.01234", None),
        ("hep-th/9901001", "hep-th/9901001", None),
        ("hep-th/9901001v2", "hep-th/9901001", 2),
        ("arXiv:hep-th/9901001v3", "hep-th/9901001", 3),
        ("math.GT/0309136", "math/0309136", None),  # the subject class is not part of the id
        ("arXiv:cond-mat/0102536", "cond-mat/0102536", None),
        ("http://arxiv.org/abs/astro-ph/9904306v1", "astro-ph/9904306", 1),
        ("0704.0001", "0704.0001", None),
        ("1412.7054", "1412.7054", None),
        ("2312.00752", "2312.00752", None),
    ],
)
def test_every_spelling_gives_the_paper(written: str, paper: str, version: int | None):
    assert parse_arxiv(written) == ArxivId(paper, version)


@pytest.mark.parametrize(
    "written",
    [
        "",
        "pages 1706.03762",  # a bare number inside prose is not guessed at
        "1501.0001",  # four digits after 2014: no such id
        "1412.12345",  # five digits before 2015
        "0703.0001",  # before the new scheme (April 2007)
        "1713.00001",  # month 13
        "foo/9901001",  # no such archive
        "hep-th/0801001",  # old scheme after 2007
        "1706.03762v0",
        "10.1101/2020.01.01.123456",
    ],
)
def test_non_ids_are_not_taken(written: str):
    assert parse_arxiv(written) is None


def test_the_datacite_doi():
    assert arxiv_of_doi("10.48550/ARXIV.1706.03762") == ArxivId("1706.03762")
    assert ArxivId("1706.03762", 2).doi == "10.48550/arxiv.1706.03762"
    assert arxiv_of_doi("10.1063/1.4996038") is None


@pytest.mark.parametrize(
    ("doi", "preprint"),
    [
        ("10.1101/2020.03.01.20029983", "10.1101/2020.03.01.20029983"),  # medRxiv
        ("10.1101/2021.05.12.443829v2", "10.1101/2021.05.12.443829"),  # a URL's version
        ("10.1101/086280", "10.1101/086280"),  # early bioRxiv
        ("10.1101/gr.277335.122", None),  # Genome Research: Crossref's
        ("10.1101/gad.1234", None),
        ("10.1101/cshperspect.a041234", None),
        ("10.1101/pdb.prot5080", None),
        ("10.1063/1.4996038", None),
    ],
)
def test_biorxiv_dois_and_the_cshl_journals(doi: str, preprint: str | None):
    assert biorxiv_doi(doi) == preprint


@pytest.mark.parametrize(
    ("doi", "name", "machine"),
    [
        ("10.2139/ssrn.3557504", "SSRN", False),
        ("10.21203/rs.3.rs-12345/v1", "Research Square", False),
        ("10.31219/osf.io/abcde", "OSF Preprints", False),
        ("10.31234/osf.io/xyz12", "OSF Preprints", False),
        ("10.31235/osf.io/xyz12", "OSF Preprints", False),
        ("10.22541/au.158879.123", "Authorea", False),
        ("10.20944/preprints202003.0001.v1", "Preprints.org", False),
        ("10.48550/arXiv.1706.03762", "arXiv", True),
        ("10.1101/2020.03.01.20029983", "bioRxiv/medRxiv", True),
    ],
)
def test_preprint_servers(doi: str, name: str, machine: bool):
    server = preprint_server(doi)
    assert server is not None and server.name == name and server.withdrawals is machine
    if machine:
        assert server.reason is None
    else:
        assert server.reason == f"{name} does not publish withdrawals in a machine-readable form"


def test_journal_dois_are_no_preprint_server():
    assert preprint_server("10.1101/gr.277335.122") is None
    assert preprint_server("10.1126/science.1256151") is None
    assert preprint_server("not a doi") is None


@pytest.mark.parametrize(
    ("written", "paper"),
    [
        ("math.GT/0309136", "math/0309136"),  # arXiv files it without the subject class
        ("arXiv:1706.03762v5", "1706.03762"),
        ("1713.01234", None),  # no month 13: not guessed at
        ("hep-xx/9901001", None),  # no such archive
    ],
)
def test_an_entry_and_the_arxiv_source_read_one_id(written: str, paper: str | None) -> None:
    """The identity stage reads an entry's arXiv id with the arXiv source's one parser, so the
    DataCite DOI it asks by is the paper the source answers for (was: a second, laxer parser)."""
    from rwgate.identify.ids import arxiv_id, identifiers_in_url

    found = parse_arxiv(written)
    assert arxiv_id(written) == (found.id if found else None) == paper
    assert identifiers_in_url(f"https://arxiv.org/abs/{written}") == (None, paper)
