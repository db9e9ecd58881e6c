"""CrossrefSource against the loopback fake Crossref: the real HTTP path, real faults."""

from __future__ import annotations

import datetime as dt
import email.utils
import re
import threading
from typing import Any

import httpx
import pytest

from fakes.crossref import FakeCrossref, PoolLimits, closed_port_url
from rwgate.sources.crossref import CrossrefSource
from rwgate.sources.net.ratelimit import parse_interval, retry_after_seconds

WAKEFIELD = "10.1016/s0140-6736(97)11096-0"
LACOUR = "10.1126/science.1256151"
LACOUR_NOTICE = "10.1126/science.aac6638"
COCHRANE = "10.1002/14651858.cd009522"
NATURE = "10.1038/nature12373"
WATSON_CRICK = "10.1038/171737a0"
UNKNOWN = "10.5555/no-such-work-anywhere"
FIXTURE_DOIS = [WAKEFIELD, LACOUR, LACOUR_NOTICE, COCHRANE, NATURE, WATSON_CRICK]


def source(fake_or_url: FakeCrossref | str, **kw: Any) -> CrossrefSource:
    """Small timeouts and backoff so that failure paths stay fast."""
    url = fake_or_url if isinstance(fake_or_url, str) else fake_or_url.url
    options: dict[str, Any] = {"timeout": 2.0, "backoff_base": 0.01, "max_total_seconds": 15.0}
    return CrossrefSource(url, **{**options, **kw})


def gap(fake: FakeCrossref, first: int, second: int) -> float:
    return fake.requests[second].time - fake.requests[first].time


# --- what the records say ---------------------------------------------------------------------


def test_fixture_records_come_back_from_one_batch_request(fake_crossref: FakeCrossref) -> None:
    src = source(fake_crossref)
    answers = src.query_all(FIXTURE_DOIS)

    assert list(answers) == FIXTURE_DOIS
    assert all(a.outcome == "found" and a.source == "crossref" for a in answers.values())
    assert len(fake_crossref.requests) == 1 == src.requests_made
    request = fake_crossref.requests[0]
    assert request.path == "/works"
    assert request.query["rows"] == ["6"]
    assert request.query["select"] == ["DOI,title,container-title,issued,update-to,updated-by"]
    assert sorted(request.query["filter"][0].split(",")) == sorted(f"doi:{d}" for d in FIXTURE_DOIS)


def test_wakefield_has_correction_then_retraction(fake_crossref: FakeCrossref) -> None:
    wakefield = source(fake_crossref).query_all([WAKEFIELD])[WAKEFIELD]

    assert [(n.type, n.doi, n.date, n.record_id) for n in wakefield.notices] == [
        ("correction", "10.1016/s0140-6736(04)15715-2", dt.date(2004, 3, 6), "17269"),
        ("retraction", "10.1016/s0140-6736(10)60175-4", dt.date(2010, 2, 6), "4036"),
    ]
    assert wakefield.notices[1].source == ["crossref:retraction-watch"]
    assert wakefield.journal == "The Lancet"
    assert wakefield.year == 1998
    assert wakefield.title is not None and wakefield.title.startswith("RETRACTED:")


def test_lacour_article_retracted_and_its_notice_is_not(fake_crossref: FakeCrossref) -> None:
    answers = source(fake_crossref).query_all([LACOUR, LACOUR_NOTICE])

    article, notice = answers[LACOUR], answers[LACOUR_NOTICE]
    assert [(n.type, n.doi, n.date) for n in article.notices] == [
        ("retraction", LACOUR_NOTICE, dt.date(2015, 6, 5))
    ]
    assert notice.outcome == "found"
    assert notice.notices == []
    assert notice.notice_for == [LACOUR]


def test_cochrane_withdrawal_and_clean_controls(fake_crossref: FakeCrossref) -> None:
    answers = source(fake_crossref).query_all([COCHRANE, NATURE, WATSON_CRICK])

    assert [(n.type, n.source) for n in answers[COCHRANE].notices] == [
        ("withdrawal", ["crossref:publisher"])
    ]
    for clean in (NATURE, WATSON_CRICK):
        assert answers[clean].outcome == "found"
        assert answers[clean].notices == []
        assert answers[clean].notice_for == []
    assert answers[WATSON_CRICK].year == 1953
    assert answers[NATURE].journal == "Nature"


# --- batching ---------------------------------------------------------------------------------


def test_250_dois_take_three_batch_requests(fake_crossref: FakeCrossref) -> None:
    dois = [f"10.5555/batch.{i:03d}" for i in range(250)]
    for doi in dois:
        fake_crossref.add_synthetic(doi)
    calls: list[tuple[int, int]] = []

    answers = source(fake_crossref).query_all(dois, progress=lambda d, t: calls.append((d, t)))

    assert all(answers[d].outcome == "found" for d in dois)
    assert [r.path for r in fake_crossref.requests] == ["/works"] * 3
    assert sorted(int(r.query["rows"][0]) for r in fake_crossref.requests) == [50, 100, 100]
    asked = [
        s.removeprefix("doi:")
        for r in fake_crossref.requests
        for s in r.query["filter"][0].split(",")
    ]
    assert sorted(asked) == dois
    # Batches finish in any order; progress is reported once per batch, cumulatively.
    done = [d for d, _ in calls]
    assert {t for _, t in calls} == {250}
    assert sorted(b - a for a, b in zip([0, *done], done, strict=False)) == [50, 100, 100]
    assert done[-1] == 250


def test_unknown_doi_is_confirmed_once_then_not_found(fake_crossref: FakeCrossref) -> None:
    answers = source(fake_crossref).query_all([NATURE, UNKNOWN])

    assert answers[UNKNOWN].outcome == "not_found"
    assert answers[UNKNOWN].error is None
    assert answers[NATURE].outcome == "found"
    assert [r.path for r in fake_crossref.requests] == ["/works", f"/works/{UNKNOWN}"]


def test_case_and_odd_characters_survive_the_round_trip(fake_crossref: FakeCrossref) -> None:
    sici = "10.1002/(sici)1097-4636(199812)43:4<431::aid-jbm11>3.0.co;2-y"
    plus = "10.5555/a+b#c?d&e=f"
    comma = "10.5555/one,two"
    fake_crossref.add_synthetic("10.5555/MiXeD.Case")
    for doi in (sici, plus, comma):
        fake_crossref.add_synthetic(doi)

    answers = source(fake_crossref).query_all(["10.5555/mixed.case", sici, plus, comma])

    assert {d: a.outcome for d, a in answers.items()} == dict.fromkeys(answers, "found")
    assert answers["10.5555/mixed.case"].doi == "10.5555/mixed.case"
    # The comma DOI cannot go in a filter, so it is the only single-record request.
    assert sorted(r.path for r in fake_crossref.requests) == ["/works", f"/works/{comma}"]


def test_duplicate_input_dois_get_one_answer(fake_crossref: FakeCrossref) -> None:
    answers = source(fake_crossref).query_all([NATURE, NATURE, LACOUR])
    assert list(answers) == [NATURE, LACOUR]
    assert fake_crossref.requests[0].query["rows"] == ["2"]


def test_empty_query_makes_no_request(fake_crossref: FakeCrossref) -> None:
    src = source(fake_crossref)
    assert src.query_all([]) == {}
    assert fake_crossref.requests == [] and src.requests_made == 0


def test_an_interrupted_query_stops_its_workers(fake_crossref: FakeCrossref) -> None:
    """Ctrl-C (here: a failing progress callback) must not leave threads asking Crossref."""
    fake_crossref.latency = 0.2
    dois = [NATURE, LACOUR, COCHRANE, WAKEFIELD, WATSON_CRICK]

    def interrupt(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        source(fake_crossref, batch_size=1).query_all(dois, progress=interrupt)
    # Once the workers have ended, none can ask again: wait for that (no sleep that may be too
    # short on a busy machine), then count. A request on its way may have landed; five were queued.
    workers = [t for t in threading.enumerate() if t.name.startswith("rwgate-crossref")]
    for worker in workers:
        worker.join(timeout=60)
    assert not any(w.is_alive() for w in workers)
    assert len(fake_crossref.requests) <= 2


# --- retries and failures ---------------------------------------------------------------------


def test_429_retry_after_is_honoured(fake_crossref: FakeCrossref) -> None:
    retry_after = 0.3  # Crossref sends whole seconds; any number is read
    fake_crossref.fail_next("429", retry_after=retry_after)

    answers = source(fake_crossref).query_all([NATURE])

    assert answers[NATURE].outcome == "found"
    assert len(fake_crossref.requests) == 2
    # The first arrival is recorded before its answer is sent, the second after the client has
    # waited: the gap is at least the wait on any machine, so no slack.
    assert gap(fake_crossref, 0, 1) >= retry_after


@pytest.mark.parametrize("kind", ["503", "malformed", "drop"])
def test_transient_failure_then_success(fake_crossref: FakeCrossref, kind: str) -> None:
    fake_crossref.fail_next(kind)

    answers = source(fake_crossref).query_all([WAKEFIELD])

    assert answers[WAKEFIELD].outcome == "found"
    assert len(answers[WAKEFIELD].notices) == 2
    assert len(fake_crossref.requests) == 2


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("503", "crossref: HTTP 503 after 3 attempts"),
        ("malformed", "crossref: malformed JSON after 3 attempts"),
        ("drop", "crossref: connection dropped by the server after 3 attempts"),
        ("429", "crossref: HTTP 429 after 3 attempts"),
    ],
)
def test_persistent_failure_is_an_error_for_every_doi(
    fake_crossref: FakeCrossref, kind: str, reason: str
) -> None:
    fake_crossref.fail_next(kind, times=3)

    answers = source(fake_crossref, max_attempts=3).query_all([WAKEFIELD, NATURE])

    assert {d: (a.outcome, a.error) for d, a in answers.items()} == {
        WAKEFIELD: ("error", reason),
        NATURE: ("error", reason),
    }
    assert all(a.notices == [] for a in answers.values())
    assert len(fake_crossref.requests) == 3


def test_slow_answer_times_out_and_is_retried(fake_crossref: FakeCrossref) -> None:
    fake_crossref.slow_seconds = 3.0
    fake_crossref.fail_next("slow")

    answers = source(fake_crossref, timeout=0.3).query_all([LACOUR])

    assert answers[LACOUR].outcome == "found"
    assert len(fake_crossref.requests) == 2  # the slow one was given up on, not waited out


def test_slow_answers_end_as_timeout_errors(fake_crossref: FakeCrossref) -> None:
    fake_crossref.fail_next("slow", times=2)

    answers = source(fake_crossref, timeout=0.2, max_attempts=2).query_all([LACOUR])

    assert answers[LACOUR].outcome == "error"
    assert answers[LACOUR].error == "crossref: timed out after 2 attempts"


def test_closed_port_gives_every_doi_an_error_after_one_try() -> None:
    """Issue 38: nothing listens there, which will not heal within the run: the first refused
    connection ends Crossref's look-ups (no retry, and the other request is never sent)."""
    dois = [NATURE, UNKNOWN, "10.5555/with,comma"]
    src = source(closed_port_url(), max_attempts=3)

    answers = src.query_all(dois)

    assert {a.outcome for a in answers.values()} == {"error"}
    assert list(answers) == dois
    assert all(
        re.fullmatch(
            r"crossref: 127\.0\.0\.1:\d+: connection refused; not retried this run",
            a.error or "",
        )
        for a in answers.values()
    ), answers
    assert src.requests_made == 1  # of two requests (batch + comma DOI), three attempts each


def test_400_is_an_error_without_retries(fake_crossref: FakeCrossref) -> None:
    fake_crossref.fail_next("400")

    answers = source(fake_crossref).query_all([NATURE, LACOUR])

    assert len(fake_crossref.requests) == 1
    assert {a.error for a in answers.values()} == {
        "crossref: HTTP 400: Injected validation failure"
    }


def test_overall_deadline_stops_retrying(fake_crossref: FakeCrossref) -> None:
    fake_crossref.fail_next("503", times=50)
    budget = 0.8

    answers = source(
        fake_crossref, max_total_seconds=budget, backoff_base=0.2, max_attempts=50
    ).query_all([NATURE])

    assert len(fake_crossref.requests) < 50  # the deadline, not the attempts, ended it
    error = answers[NATURE].error or ""
    assert answers[NATURE].outcome == "error"
    assert error.startswith("crossref: HTTP 503; gave up at the 0.8s deadline after ")


def test_retry_after_beyond_the_deadline_gives_up_at_once(
    fake_crossref: FakeCrossref, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_crossref.fail_next("429", retry_after=3600)
    src = source(fake_crossref, max_total_seconds=60.0)
    holds: list[float] = []
    monkeypatch.setattr(src.http.limiter, "hold", holds.append)

    answers = src.query_all([NATURE])

    assert holds == []  # at once: the Retry-After was never waited out
    assert (
        answers[NATURE].error == "crossref: HTTP 429; gave up at the 60s deadline after 1 attempt"
    )
    assert len(fake_crossref.requests) == 1


# --- politeness -------------------------------------------------------------------------------


def test_mailto_goes_in_the_query_and_the_user_agent(fake_crossref: FakeCrossref) -> None:
    source(fake_crossref, mailto="dev@example.org").query_all([NATURE, UNKNOWN])

    assert len(fake_crossref.requests) == 2
    for request in fake_crossref.requests:
        assert request.query["mailto"] == ["dev@example.org"]
        assert request.headers["user-agent"] == (
            "rwgate/0.1.0 (https://github.com/rwgate/rwgate; mailto:dev@example.org)"
        )


def test_without_mailto_the_public_pool_is_used(fake_crossref: FakeCrossref) -> None:
    source(fake_crossref).query_all([NATURE])

    request = fake_crossref.requests[0]
    assert "mailto" not in request.query
    assert request.headers["user-agent"] == "rwgate/0.1.0 (https://github.com/rwgate/rwgate)"
    assert not request.polite


@pytest.mark.parametrize("advertised", [1, 2])
def test_concurrency_follows_the_advertised_limit(
    fake_crossref: FakeCrossref, advertised: int
) -> None:
    fake_crossref.limits["public"] = PoolLimits(rate=100, interval="1s", concurrency=advertised)
    if advertised > 1:
        fake_crossref.meet = advertised  # a barrier: the requests after the first must overlap
    else:
        fake_crossref.latency = 0.05  # room for a second request that should not come
    dois = [f"10.5555/conc.{i}" for i in range(8)]
    for doi in dois:
        fake_crossref.add_synthetic(doi)

    answers = source(fake_crossref, batch_size=1).query_all(dois)

    assert {a.outcome for a in answers.values()} == {"found"}
    assert fake_crossref.peak_in_flight == advertised


def test_request_rate_stays_within_the_advertised_window(fake_crossref: FakeCrossref) -> None:
    fake_crossref.limits["public"] = PoolLimits(rate=4, interval="1s", concurrency=3)
    dois = [f"10.5555/rate.{i}" for i in range(8)]
    for doi in dois:
        fake_crossref.add_synthetic(doi)

    src = source(fake_crossref, batch_size=1)
    starts: list[float] = []  # on the limiter's own clock: no arrival jitter, so no slack
    src.limiter.on_start = starts.append
    answers = src.query_all(dois)

    assert {a.outcome for a in answers.values()} == {"found"}
    assert len(fake_crossref.requests) == len(starts) == 8
    window = 1.0  # the advertised interval
    # No window of one interval holds more than 4 request starts.
    assert all(starts[i + 4] - starts[i] >= window for i in range(len(starts) - 4))


def test_info_names_the_source_and_when_it_was_asked(fake_crossref: FakeCrossref) -> None:
    src = source(fake_crossref)
    assert src.info().as_of is None
    before = dt.datetime.now(dt.UTC)
    src.query_all([NATURE])

    info = src.info()
    assert (info.name, info.url) == ("crossref", fake_crossref.url)
    assert info.as_of is not None and before <= info.as_of <= dt.datetime.now(dt.UTC)


@pytest.mark.parametrize("bad", [{"batch_size": 0}, {"batch_size": 1001}, {"max_attempts": 0}])
def test_bad_settings_are_refused(bad: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="crossref"):
        CrossrefSource(**bad)  # type: ignore[arg-type]


# --- helpers ------------------------------------------------------------------------------------


def test_retry_after_accepts_seconds_and_http_dates() -> None:
    now = dt.datetime(2026, 6, 16, 12, 0, 0, tzinfo=dt.UTC)
    later = email.utils.format_datetime(now + dt.timedelta(seconds=90), usegmt=True)
    assert retry_after_seconds("7", now) == 7.0
    assert retry_after_seconds(later, now) == 90.0
    assert retry_after_seconds("Tue, 16 Jun 2026 11:00:00 GMT", now) == 0.0
    assert retry_after_seconds("soon", now) is None
    assert retry_after_seconds(None, now) is None


def test_interval_header_values() -> None:
    assert parse_interval("1s") == 1.0
    assert parse_interval("500ms") == 0.5
    assert parse_interval("1m") == 60.0
    assert parse_interval("fast") is None
    assert parse_interval("0s") is None


# --- the fake itself mimics the recorded Crossref answers ---------------------------------------


def test_fake_answers_like_the_recordings(fake_crossref: FakeCrossref) -> None:
    with httpx.Client(base_url=fake_crossref.url) as client:
        missing = client.get("/works/10.1371/notarealdoi")
        too_many = client.get("/works", params={"rows": "1001"})
        bad_filter = client.get("/works", params={"filter": "has-assertion:true"})
        polite = client.get("/works", params={"filter": f"doi:{NATURE.upper()}", "mailto": "a@b.c"})
        by_notice = client.get("/works", params={"filter": "updates:10.1016/s0140-6736(20)31180-6"})

    assert (missing.status_code, missing.text) == (404, "Resource not found.")
    assert missing.headers["content-type"] == "text/plain"
    assert missing.headers["x-api-pool"] == "public"
    assert missing.headers["x-concurrency-limit"] == "1"
    assert too_many.status_code == 400
    assert too_many.json()["message"][0]["type"] == "integer-not-valid"
    assert bad_filter.json()["message"][0]["type"] == "filter-not-available"
    assert polite.headers["x-api-pool"] == "polite"
    assert [i["DOI"] for i in polite.json()["message"]["items"]] == [NATURE]
    assert by_notice.json()["message"]["total-results"] == 5
