"""CrossrefQuery against the loopback fake Crossref: searches, records, BibTeX, cache, failures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.crossref import FakeCrossref
from rwgate.identify.crossref_search import CrossrefQuery, SourceUnavailable
from rwgate.settings.config import Settings
from rwgate.sources.cache import Cache

WAKEFIELD = "10.1016/s0140-6736(97)11096-0"
SURGISPHERE = "10.1016/s0140-6736(20)31180-6"


@pytest.fixture
def fake() -> Iterator[FakeCrossref]:
    with FakeCrossref(notices=True) as running:
        yield running


def _query(fake: FakeCrossref, tmp_path: Path, **kw: object) -> CrossrefQuery:
    settings = Settings(crossref_url=fake.url, cache_dir=tmp_path / "cache", **kw)  # type: ignore[arg-type]
    return CrossrefQuery(settings)


def test_author_query_ranks_matching_works(fake: FakeCrossref, tmp_path: Path) -> None:
    found = _query(fake, tmp_path).works({"query.author": "Wakefield", "rows": "5"})
    assert [i["DOI"] for i in found.items] == [WAKEFIELD]
    assert found.total == 1
    assert fake.requests[-1].query["query.author"] == ["Wakefield"]


def test_update_filters_follow_crossref(fake: FakeCrossref, tmp_path: Path) -> None:
    q = _query(fake, tmp_path)
    notices = q.works({"filter": f"updates:{SURGISPHERE},update-type:retraction", "rows": "20"})
    # Filters test the record, not one update-to entry: 31528-2 retracts 31174-0 and is an
    # erratum to the Surgisphere paper, so it passes both; the EoC and the erratum-only do not.
    assert sorted(i["DOI"] for i in notices.items) == [
        "10.1016/s0140-6736(20)31174-0",
        "10.1016/s0140-6736(20)31324-6",
        "10.1016/s0140-6736(20)31528-2",
    ]
    updates = q.works({"filter": "is-update:true", "rows": "1000"})
    assert updates.total > 0 and all(i.get("update-to") for i in updates.items)
    works = q.works({"filter": "is-update:false", "rows": "1000"})
    assert WAKEFIELD in {i["DOI"] for i in works.items}
    assert not any(i.get("update-to") for i in works.items)


def test_dates_sort_order_and_paging(fake: FakeCrossref, tmp_path: Path) -> None:
    q = _query(fake, tmp_path)
    params = {
        "filter": "is-update:true,from-update-date:2020-06-01,until-update-date:2020-12-31",
        "sort": "updated",
        "order": "asc",
        "rows": "2",
    }
    first = q.works(params)
    second = q.works({**params, "offset": "2"})
    dois = [i["DOI"] for i in first.items + second.items]
    assert first.total == second.total == 3
    # Notices dated 2020-06-03, 2020-06-13 (latest update-to) and 2020-07-18, oldest first.
    assert dois == [
        "10.1016/s0140-6736(20)31290-3",
        "10.1016/s0140-6736(20)31324-6",
        "10.1016/s0140-6736(20)31528-2",
    ]
    old = q.works({"filter": "until-pub-date:1999", "rows": "100"})
    assert WAKEFIELD in {i["DOI"] for i in old.items}
    assert all(i["DOI"] != "10.1038/nature12373" for i in old.items)


def test_invalid_sort_is_refused_and_not_cached(fake: FakeCrossref, tmp_path: Path) -> None:
    q = _query(fake, tmp_path)
    with pytest.raises(SourceUnavailable, match="HTTP 400: Sort field specified as posted"):
        q.works({"sort": "posted"})
    with pytest.raises(SourceUnavailable):
        q.works({"sort": "posted"})
    assert len(fake.requests) == 2  # a refusal is never remembered


def test_answers_are_cached_by_url_and_params(fake: FakeCrossref, tmp_path: Path) -> None:
    cache = Cache(tmp_path / "shared")
    settings = Settings(crossref_url=fake.url)
    first = CrossrefQuery(settings, cache).works({"query": "lancet", "rows": "3"})
    again = CrossrefQuery(settings, cache).works({"rows": "3", "query": "lancet"})
    assert again == first and len(fake.requests) == 1
    CrossrefQuery(settings, cache).works({"query": "lancet", "rows": "4"})
    assert len(fake.requests) == 2


def test_work_record_and_unknown_doi(fake: FakeCrossref, tmp_path: Path) -> None:
    q = _query(fake, tmp_path)
    record = q.work(WAKEFIELD.upper())
    assert record is not None and record["DOI"] == WAKEFIELD
    assert [u["type"] for u in record["updated-by"]] == ["correction", "retraction"]
    assert q.work("10.5555/no-such-work") is None


def test_bibtex_in_crossref_layout(fake: FakeCrossref, tmp_path: Path) -> None:
    q = _query(fake, tmp_path)
    text = q.bibtex(WAKEFIELD)
    assert text is not None
    assert text.strip().startswith("@article{Wakefield_1998, title={RETRACTED: Ileal")
    assert f"DOI={{{WAKEFIELD}}}" in text and "journal={The Lancet}" in text
    assert "author={Wakefield, AJ and Murch, SH" in text and "month=feb" in text
    assert q.bibtex("10.5555/no-such-work") is None
    assert fake.requests[0].path == f"/works/{WAKEFIELD}/transform/application/x-bibtex"


def test_server_errors_retry_then_fail_in_one_line(fake: FakeCrossref, tmp_path: Path) -> None:
    q = _query(fake, tmp_path)
    fake.fail_next("503", times=5, retry_after=0)
    with pytest.raises(SourceUnavailable) as failure:
        q.work(WAKEFIELD)
    assert str(failure.value) == "crossref: HTTP 503 after 5 attempts"
    assert q.work(WAKEFIELD) is not None  # the failure was not cached


def test_transient_error_is_retried(fake: FakeCrossref, tmp_path: Path) -> None:
    fake.fail_next("429", retry_after=0)
    assert _query(fake, tmp_path).works({"query.title": "hydroxychloroquine"}).total == 4
    assert len(fake.requests) == 2


def test_offline_answers_from_cache_only(fake: FakeCrossref, tmp_path: Path) -> None:
    _query(fake, tmp_path).work(WAKEFIELD)
    offline = _query(fake, tmp_path, offline=True)
    assert offline.work(WAKEFIELD) is not None
    with pytest.raises(SourceUnavailable, match="offline"):
        offline.work("10.1038/nature12373")
    assert len(fake.requests) == 1


def test_polite_pool_mailto(fake: FakeCrossref, tmp_path: Path) -> None:
    _query(fake, tmp_path, mailto="me@example.org").works({"query": "science"})
    request = fake.requests[-1]
    assert request.query["mailto"] == ["me@example.org"]
    assert "mailto:me@example.org" in request.headers["user-agent"]


def test_a_doi_with_dot_segments_asks_only_for_that_doi(fake: FakeCrossref, tmp_path: Path) -> None:
    # 10.1234/../../members/1 is a well-formed DOI; an HTTP client would resolve the dot
    # segments and ask /members/1 instead of /works/{doi}.
    assert _query(fake, tmp_path).work("10.1234/../../members/1") is None
    # The fake decodes the path; an HTTP client resolving ".." would have asked /members/1.
    assert [r.path for r in fake.requests] == ["/works/10.1234/../../members/1"]
