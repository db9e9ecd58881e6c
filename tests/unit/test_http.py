"""The shared retrying GET (rwgate.sources.net.http) against the loopback fakes."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest

from fakes.crossref import FakeCrossref, closed_port_url
from fakes.hostile import WAKEFIELD, HostileCrossref
from fakes.openalex import FakeOpenAlex
from rwgate.identify.openalex import OpenAlexSource, OpenAlexUnavailable
from rwgate.settings.config import Settings
from rwgate.sources.net.http import Failure, GaveUp, Retrying, open_client, transport_reason
from rwgate.sources.net.ratelimit import Limiter

NATURE = "10.1038/nature12373"


@pytest.fixture
def fake_openalex() -> Iterator[FakeOpenAlex]:
    with FakeOpenAlex() as server:
        yield server


def retrying(max_attempts: int = 3) -> Retrying:
    return Retrying(
        "fake",
        Limiter(concurrency=2, limit=100),
        timeout=2.0,
        max_total_seconds=10.0,
        max_attempts=max_attempts,
        backoff_base=0.01,
        backoff_cap=0.1,
    )


def status(response: httpx.Response) -> int:
    if response.status_code != 200:
        raise Failure(f"HTTP {response.status_code}", retry=False)
    return response.status_code


def get(http: Retrying, url: str, cancel: threading.Event | None = None) -> int:
    with open_client(None, 2.0, 2) as client:
        return http.get(http.run(client, cancel), f"{url}/works/{NATURE}", {}, status)


def test_server_trouble_is_retried_and_a_refusal_is_not(fake_crossref: FakeCrossref) -> None:
    http = retrying()
    fake_crossref.fail_next("503", times=2)
    assert get(http, fake_crossref.url) == 200 and http.requests_made == 3

    fake_crossref.fail_next("400")
    with pytest.raises(GaveUp) as refused:
        get(http, fake_crossref.url)
    assert str(refused.value) == "fake: HTTP 400" and not refused.value.down
    assert http.requests_made == 4


def test_running_out_of_attempts_counts_them_in_words(fake_crossref: FakeCrossref) -> None:
    fake_crossref.fail_next("503", times=5)
    with pytest.raises(GaveUp) as once:
        get(retrying(max_attempts=1), fake_crossref.url)
    assert str(once.value) == "fake: HTTP 503 after 1 attempt" and once.value.down


class _HoldingLimiter(Limiter):
    """Says (``holding``) when a ``Retry-After`` hold has begun: the moment to cancel in."""

    def __init__(self) -> None:
        super().__init__(concurrency=2, limit=100)
        self.holding = threading.Event()

    def hold(self, seconds: float) -> None:
        super().hold(seconds)
        self.holding.set()


def test_cancel_ends_a_wait_for_retry_after(fake_crossref: FakeCrossref) -> None:
    """Cancelled once the wait has begun (an event, not a timer that may fire before or after):
    the run ends as cancelled after one request. Were the wait not ended, it would last the
    five seconds and the second request would succeed; so no clock is needed to see it."""
    http, cancel = retrying(), threading.Event()
    limiter = _HoldingLimiter()
    http.limiter = limiter
    fake_crossref.fail_next("503", retry_after=5)

    def stop() -> None:
        if limiter.holding.wait(60):
            cancel.set()
            limiter.wake()

    stopper = threading.Thread(target=stop, daemon=True)
    stopper.start()
    with pytest.raises(GaveUp, match=r"^fake: cancelled$") as cancelled:
        get(http, fake_crossref.url, cancel)
    stopper.join()
    assert not cancelled.value.down
    assert len(fake_crossref.requests) == 1 and http.requests_made == 1


def test_the_deadline_covers_headers_dripped_a_byte_at_a_time() -> None:
    """Issue 28: headers sent a byte every 10 ms never trip a 30 s read timeout, and a run with a
    6 s deadline took 154 s. Now the run gives up at its deadline and says so; how long it
    listened is counted in bytes the server sent (a busy machine sends fewer, never more), held
    to three deadlines' worth. Without the bound the client reads all the headers (ten
    deadlines' worth) and succeeds."""
    budget = 0.5
    with HostileCrossref("drip_headers") as slow:
        slow.drip_limit = int(10 * budget / slow.tick)
        http = Retrying(
            "fake",
            Limiter(concurrency=1, limit=100),
            timeout=30.0,  # per read: far beyond the run's budget
            max_total_seconds=budget,
            max_attempts=3,
            backoff_base=0.01,
            backoff_cap=0.1,
        )
        with open_client(None, 30.0, 1) as client, pytest.raises(GaveUp) as late:
            http.get(http.run(client), f"{slow.url}/works/{WAKEFIELD}", {}, status)
        sent, requests = slow.sent, slow.requests
    assert str(late.value) == "fake: timed out; gave up at the 0.5s deadline after 1 attempt"
    assert late.value.down
    assert requests == 1
    assert 0 < sent < 3 * budget / slow.tick


def test_openalex_stops_at_once_when_nothing_listens() -> None:
    """Issue 38: a refused connection will not heal within the run: one try, then no request."""
    src = OpenAlexSource(Settings(openalex_url=closed_port_url()), backoff_base=0.01)
    refused = r"^openalex: 127\.0\.0\.1:\d+: connection refused; not retried this run$"
    with pytest.raises(OpenAlexUnavailable, match=refused):
        src.work(NATURE)
    assert src.requests_made == 1
    with pytest.raises(OpenAlexUnavailable, match="connection refused"):
        src.search("anything")
    assert src.requests_made == 1  # down for the rest of the run


def test_openalex_names_the_deadline_it_gave_up_at(
    fake_openalex: FakeOpenAlex, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_openalex.fail_next("429", retry_after="3600")
    settings = Settings(openalex_url=fake_openalex.url, max_total_seconds=60.0)
    src = OpenAlexSource(settings)
    holds: list[float] = []
    monkeypatch.setattr(src.http.limiter, "hold", holds.append)
    with pytest.raises(OpenAlexUnavailable) as failure:
        src.work(NATURE)
    assert holds == []  # at once: the Retry-After was never waited out, nor the deadline
    assert str(failure.value) == "openalex: HTTP 429; gave up at the 60s deadline after 1 attempt"


def test_transport_reasons_are_short_and_one_line() -> None:
    def raised(exc: Exception, cause: BaseException) -> Exception:
        try:
            raise exc from cause
        except Exception as chained:
            return chained

    refused = raised(httpx.ConnectError("[Errno 111]"), ConnectionRefusedError(111, "x"))
    reset = raised(httpx.ReadError("read failed"), ConnectionResetError(104, "y"))
    other = httpx.ConnectError("[Errno -2] Name or service\nnot known")
    assert transport_reason(refused) == "connection refused"
    assert transport_reason(reset) == "connection dropped by the server"
    assert str(GaveUp(f"x: {transport_reason(other)}")) == (
        "x: connection failed (ConnectError: [Errno -2] Name or service not known)"
    )
