"""OpenAlexSource against the loopback fake OpenAlex: retries, faults, cache, offline."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.crossref import closed_port_url
from fakes.openalex import FakeOpenAlex
from rwgate.identify.openalex import OpenAlexSource, OpenAlexUnavailable
from rwgate.settings.config import Settings
from rwgate.sources.cache import Cache

LACOUR = "10.1126/science.1256151"
NATURE = "10.1038/nature12373"


@pytest.fixture
def fake() -> Iterator[FakeOpenAlex]:
    with FakeOpenAlex() as server:
        yield server


def source(url: str, cache: Cache | None = None, **kw: object) -> OpenAlexSource:
    settings = Settings(openalex_url=url, timeout=1.0, max_total_seconds=3.0, **kw)
    return OpenAlexSource(settings, cache, backoff_base=0.01)


def test_work_by_doi_and_retraction_flag(fake: FakeOpenAlex) -> None:
    src = source(fake.url, mailto="lab@example.org")
    work = src.work(LACOUR.upper())
    assert work is not None and work["doi"] == f"https://doi.org/{LACOUR}"
    assert src.is_retracted(LACOUR) is True and src.is_retracted(NATURE) is False
    assert src.work("10.5555/unknown") is None and src.is_retracted("10.5555/unknown") is None
    first = fake.requests[0]
    assert first.path == f"/works/doi:{LACOUR}"
    assert first.query["mailto"] == ["lab@example.org"] and "select" in first.query
    assert "mailto:lab@example.org" in first.headers["user-agent"]


def test_search_with_year_filter(fake: FakeOpenAlex) -> None:
    src = source(fake.url)
    hits = src.search("thermometry living cell", per_page=3, filters={"publication_year": "2013"})
    assert [h["doi"] for h in hits] == [f"https://doi.org/{NATURE}"]
    assert fake.requests[-1].query["per-page"] == ["3"]
    assert src.search("thermometry", filters={"publication_year": "1990-2000"}) == []


@pytest.mark.parametrize("kind", ["503", "429", "malformed", "drop"])
def test_transient_faults_are_retried(fake: FakeOpenAlex, kind: str) -> None:
    fake.fail_next(kind, times=2)
    src = source(fake.url)
    assert src.work(NATURE) is not None
    assert len(fake.requests) == 3 == src.requests_made


def test_retry_after_is_honoured(fake: FakeOpenAlex) -> None:
    retry_after = 0.3
    fake.fail_next("429", retry_after=f"{retry_after:g}")
    start = time.monotonic()
    assert source(fake.url).work(NATURE) is not None
    assert time.monotonic() - start >= retry_after  # waited on the same clock: no slack


def test_persistent_failure_raises_one_line(fake: FakeOpenAlex) -> None:
    fake.fail_next("503", times=10)
    src = source(fake.url)
    with pytest.raises(OpenAlexUnavailable, match=r"^openalex: HTTP 503 after 4 attempts$"):
        src.search("anything")
    # Down for the rest of the run: the next question fails at once, without a request.
    with pytest.raises(OpenAlexUnavailable, match="HTTP 503 after 4 attempts"):
        src.work(NATURE)
    assert src.requests_made == 4 == len(fake.requests)


def test_connection_refused_and_bad_request(fake: FakeOpenAlex) -> None:
    with pytest.raises(OpenAlexUnavailable, match="connection refused"):
        source(closed_port_url()).work(NATURE)
    src = source(fake.url)
    with pytest.raises(OpenAlexUnavailable, match=r"HTTP 400: .*not a valid field"):
        src.search("x", filters={"cited_by_count": "5"})
    assert src.requests_made == 1  # a 400 is not retried


def test_answers_are_cached_errors_are_not(fake: FakeOpenAlex, tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache")
    fake.fail_next("503", times=10)
    with pytest.raises(OpenAlexUnavailable):
        source(fake.url, cache).work(NATURE)
    fake.reset()
    src = source(fake.url, cache)
    assert src.work(NATURE) is not None and src.work("10.5555/unknown") is None
    again = source(fake.url, cache)
    assert again.work(NATURE) is not None and again.work("10.5555/unknown") is None
    assert again.requests_made == 0
    offline = OpenAlexSource(Settings(openalex_url=fake.url, offline=True), cache)
    assert offline.work(NATURE) is not None
    with pytest.raises(OpenAlexUnavailable, match="offline"):
        offline.work(LACOUR)


def test_a_doi_with_dot_segments_stays_under_works(fake: FakeOpenAlex) -> None:
    assert source(fake.url).work("10.1234/../../authors") is None
    # The fake decodes the path; an HTTP client resolving ".." would have asked /authors.
    assert [r.path for r in fake.requests] == ["/works/doi:10.1234/../../authors"]
