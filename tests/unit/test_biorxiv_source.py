"""The bioRxiv/medRxiv integrity source against the loopback fake api.biorxiv.org."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.biorxiv import FakeBiorxiv
from rwgate.settings.config import Settings
from rwgate.sources.biorxiv import BiorxivSource
from rwgate.sources.cache import Cache


@pytest.fixture
def fake() -> Iterator[FakeBiorxiv]:
    with FakeBiorxiv() as server:
        yield server


def test_biorxiv_withdrawal_with_the_authors_statement(fake: FakeBiorxiv):
    lookup = BiorxivSource(fake.url).query("10.1101/2020.01.30.927871")
    assert lookup.outcome == "found"
    [notice] = lookup.notices
    assert notice.type == "withdrawal"
    assert str(notice.date) == "2020-02-02"
    assert (notice.label or "").startswith("This paper has been withdrawn by its authors.")
    assert notice.record_id == "biorxiv:10.1101/2020.01.30.927871v2"
    assert [r.path for r in fake.requests] == ["/details/biorxiv/10.1101/2020.01.30.927871/na/json"]


def test_withdrawn_title_prefix_is_not_the_title(fake: FakeBiorxiv):
    lookup = BiorxivSource(fake.url).query("https://doi.org/10.1101/2021.06.15.448512v2")
    assert lookup.title == "A Screen for Regulators of Axon Growth"
    assert lookup.doi == "https://doi.org/10.1101/2021.06.15.448512v2"  # the spelling asked
    assert [n.type for n in lookup.notices] == ["withdrawal"]


def test_medrxiv_is_asked_after_biorxiv(fake: FakeBiorxiv):
    lookup = BiorxivSource(fake.url).query("10.1101/2020.05.02.20080111")
    assert [n.type for n in lookup.notices] == ["withdrawal"]
    assert [r.path.split("/")[2] for r in fake.requests] == ["biorxiv", "medrxiv"]


def test_live_preprints_are_found_clean_with_their_journal_version(fake: FakeBiorxiv):
    got = BiorxivSource(fake.url).query_all(
        ["10.1101/2020.04.14.20062463", "10.1101/2019.12.20.884999"]
    )
    assert got["10.1101/2020.04.14.20062463"].notices == []
    assert got["10.1101/2020.04.14.20062463"].published_doi == "10.1093/ije/dyab010"
    retracted_later = got["10.1101/2019.12.20.884999"]
    assert retracted_later.outcome == "found" and retracted_later.notices == []
    assert retracted_later.published_doi == "10.1126/science.1256151"


def test_cshl_journal_dois_are_never_asked(fake: FakeBiorxiv):
    got = BiorxivSource(fake.url).query_all(["10.1101/gr.277335.122", "10.1126/science.1256151"])
    assert all(lookup.outcome == "not_found" for lookup in got.values())
    assert fake.requests == []


def test_unknown_preprint_doi_proves_nothing(fake: FakeBiorxiv):
    source = BiorxivSource(fake.url)
    assert source.query("10.1101/2022.01.01.000001").outcome == "not_found"
    assert source.absence == "nothing"


def test_empty_collection_is_never_found_clean(fake: FakeBiorxiv):
    fake.fail_next("empty", times=2)
    lookup = BiorxivSource(fake.url).query("10.1101/2020.01.30.927871")
    assert lookup.outcome != "found" and lookup.notices == []


@pytest.mark.parametrize("fault", ["503", "html"])
def test_misbehaving_answers_are_errors(fake: FakeBiorxiv, fault: str):
    fake.fail_next(fault, times=10)
    lookup = BiorxivSource(fake.url, max_attempts=2).query("10.1101/2020.01.30.927871")
    assert lookup.outcome == "error" and lookup.notices == []


def test_429_with_retry_after_is_retried(fake: FakeBiorxiv):
    fake.fail_next("429", retry_after=0)
    lookup = BiorxivSource(fake.url).query("10.1101/2020.01.30.927871")
    assert lookup.outcome == "found" and len(fake.requests) == 2


def test_open_reads_the_users_url(fake: FakeBiorxiv, tmp_path: Path):
    cache = Cache(tmp_path / "cache", quiet=True)
    opened = BiorxivSource.open(Settings(biorxiv_url=fake.url), cache)
    assert opened is not None
    lookup = opened.query("10.1101/2020.01.30.927871")
    assert [n.type for n in lookup.notices] == ["withdrawal"]
    cache.close()
