"""The arXiv integrity source against the loopback fake arXiv: withdrawals with their reasons,
live preprints vouched for, the published version reported, arXiv's pace kept (counted against
an injected clock, never slept), and every misbehaving answer an error, never a record."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.arxiv import FakeArxiv
from rwgate.settings.config import Settings
from rwgate.sources.arxiv import ArxivSource
from rwgate.sources.arxiv_xml import XMLShapeError, parse_atom
from rwgate.sources.cache import Cache
from rwgate.sources.net.ratelimit import Pacer

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "arxiv"


class FakeClock:
    """Time that passes only when the pacer waits: requests are ordered, never slept for."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.starts: list[float] = []
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def pacer(self) -> Pacer:
        return Pacer(clock=self, sleep=self.sleep, on_start=self.starts.append)


@pytest.fixture
def fake() -> Iterator[FakeArxiv]:
    with FakeArxiv() as server:
        yield server


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def source(fake: FakeArxiv, clock: FakeClock, **kw: object) -> ArxivSource:
    return ArxivSource(fake.api_url, fake.oai_url, pacer=clock.pacer(), **kw)  # type: ignore[arg-type]


def test_withdrawn_version_is_a_withdrawal_with_its_reason(fake: FakeArxiv, clock: FakeClock):
    lookup = source(fake, clock).query("arXiv:2104.01234v1")
    assert lookup.outcome == "found"
    assert lookup.doi == "arXiv:2104.01234v1"  # answered under the spelling asked
    [notice] = lookup.notices
    assert notice.type == "withdrawal"
    assert notice.label == (
        "This paper has been withdrawn by the authors due to an error in the proof of Lemma 3"
    )
    assert notice.record_id == "arXiv:2104.01234v2"
    assert str(notice.date) == "2021-05-11"
    # The Atom comment only hinted; the per-version flag came from arXivRaw.
    assert [r.query["verb"] for r in fake.requests_to("/oai")] == [["GetRecord"]]


def test_old_style_id_withdrawn_for_a_benign_reason(fake: FakeArxiv, clock: FakeClock):
    lookup = source(fake, clock).query("https://arxiv.org/abs/hep-th/0601001")
    [notice] = lookup.notices
    assert notice.type == "withdrawal"  # never a retraction
    assert "duplicates hep-th/0512345" in (notice.label or "")


def test_live_preprint_is_found_without_notices_and_names_its_journal_version(
    fake: FakeArxiv, clock: FakeClock
):
    lookup = source(fake, clock).query("1706.01836")
    assert lookup.outcome == "found" and lookup.notices == []
    assert lookup.published_doi == "10.1063/1.4996038"
    assert lookup.journal == "The Journal of Chemical Physics 147, 114113 (2017)"
    assert lookup.year == 2017
    assert not fake.requests_to("/oai")  # no hint, no second request


def test_published_version_of_a_preprint_is_reported_for_the_core_to_judge(
    fake: FakeArxiv, clock: FakeClock
):
    lookup = source(fake, clock).query("1905.06789")
    assert lookup.notices == []
    assert lookup.published_doi == "10.1126/science.1256151"  # retracted: Crossref's to say


def test_comment_saying_withdrawn_without_the_flag_is_no_withdrawal(
    fake: FakeArxiv, clock: FakeClock
):
    lookup = source(fake, clock).query("2203.04567")
    assert lookup.outcome == "found" and lookup.notices == []
    assert len(fake.requests_to("/oai")) == 1


def test_unknown_id_is_not_found_from_its_empty_entry(fake: FakeArxiv, clock: FakeClock):
    got = source(fake, clock).query_all(["2201.99999", "1706.01836"])
    assert got["2201.99999"].outcome == "not_found"
    assert got["1706.01836"].outcome == "found"


def test_datacite_doi_is_asked_as_its_paper(fake: FakeArxiv, clock: FakeClock):
    lookup = source(fake, clock).query("10.48550/arxiv.2104.01234", kind="doi")
    assert lookup.doi == "10.48550/arxiv.2104.01234"
    assert [n.type for n in lookup.notices] == ["withdrawal"]


def test_a_batch_is_one_request_and_requests_keep_arxivs_pace(fake: FakeArxiv, clock: FakeClock):
    arxiv = source(fake, clock, batch_size=2)
    got = arxiv.query_all(["1706.01836", "2104.01234", "2203.04567", "1905.06789", "x"])
    assert got["x"].outcome == "error"  # no arXiv id: never sent
    # 4 papers in batches of 2 = 2 Atom requests, plus 2 arXivRaw look-ups (two hints).
    assert len(fake.requests_to("/api/query")) == 2
    assert len(fake.requests_to("/oai")) == 2
    assert len(clock.starts) == len(fake.requests) == 4
    gaps = [b - a for a, b in zip(clock.starts, clock.starts[1:], strict=False)]
    assert all(gap >= 3.0 for gap in gaps)
    assert fake.peak_in_flight == 1  # one connection at a time


def test_the_pace_is_shared_by_sources_of_one_process(fake: FakeArxiv, clock: FakeClock):
    pacer = clock.pacer()
    first = ArxivSource(fake.api_url, fake.oai_url, pacer=pacer)
    second = ArxivSource(fake.api_url, fake.oai_url, pacer=pacer)
    first.query("1706.01836")
    second.query("1905.06789")
    assert clock.starts[1] - clock.starts[0] >= 3.0


def test_429_retry_after_is_honoured_by_the_pacer(fake: FakeArxiv, clock: FakeClock):
    fake.fail_next("429", retry_after=7)
    lookup = source(fake, clock).query("1706.01836")
    assert lookup.outcome == "found"
    assert len(fake.requests_to("/api/query")) == 2
    assert clock.starts[1] - clock.starts[0] >= 7.0


@pytest.mark.parametrize("fault", ["503", "html", "empty"])
def test_misbehaving_answers_are_errors_never_records(
    fake: FakeArxiv, clock: FakeClock, fault: str
):
    fake.fail_next(fault, times=10)
    got = source(fake, clock, max_attempts=2).query_all(["1706.01836", "2104.01234"])
    for lookup in got.values():
        assert lookup.outcome == "error", (fault, lookup)
        assert lookup.notices == []


def test_failing_arxivraw_makes_a_hinted_paper_an_error(fake: FakeArxiv, clock: FakeClock):
    fake.fail_next("pass")  # the Atom answer is fine...
    fake.fail_next("html", times=5)  # ...the arXivRaw one never is
    got = source(fake, clock, max_attempts=2).query("2104.01234")
    assert got.outcome == "error" and got.notices == []
    assert "web page" in (got.error or "")


def test_recorded_missing_id_answer_reads_empty_entries_as_unknown():
    feed = parse_atom((FIXTURES / "atom-missing-id.xml").read_bytes())
    assert feed.total == 4 and feed.empty == 3
    assert [e.arxiv.versioned for e in feed.entries] == ["2201.13452v1"]


def test_recorded_entry_gives_the_journal_doi():
    [entry] = parse_atom((FIXTURES / "atom-published.xml").read_bytes()).entries
    assert entry.doi == "10.1063/1.4996038" and not entry.hints_withdrawal


@pytest.mark.parametrize(
    "body",
    [
        b"<html><body>Rate exceeded</body></html>",
        b'<?xml version="1.0"?><!DOCTYPE feed [<!ENTITY a "aaaa">]><feed>&a;</feed>',
        b'<feed xmlns="http://www.w3.org/2005/Atom"><entry/></feed>',  # no totalResults
        b"",
    ],
)
def test_answers_that_are_not_feeds_are_refused(body: bytes):
    with pytest.raises(XMLShapeError):
        parse_atom(body)


def test_open_reads_the_users_urls_behind_the_cache(fake: FakeArxiv, tmp_path: Path):
    settings = Settings(arxiv_url=fake.api_url, arxiv_oai_url=fake.oai_url)
    cache = Cache(tmp_path / "cache", quiet=True)
    opened = ArxivSource.open(settings, cache)
    assert opened is not None and opened.answers == frozenset({"arxiv", "doi"})
    offline = ArxivSource.open(Settings(offline=True, no_cache=True), cache)
    assert offline is None
    cache.close()
