"""Issue 38: knowing at once that there is no network.

A name that does not resolve, no route to the host, a connection refused: none heals within a
run, so the source's look-ups end after one try and every work it should have answered is
``unverified`` with that reason; one line says what to do. Timeouts, 5xx, 429 and dropped
connections keep their retries. The resolver is a stub (``socket.getaddrinfo`` failing as it does
on a machine with no network, counting its calls); the refused case is a closed loopback port.
What is asserted is what the retry logic causes: resolutions and requests counted, no durations.
"""

from __future__ import annotations

import errno
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from fakes.crossref import FakeCrossref, closed_port_url
from rwgate.frontends.cli.main import main
from rwgate.identify.openalex import OpenAlexSource, OpenAlexUnavailable
from rwgate.settings.config import Settings
from rwgate.sources.crossref import CrossrefSource
from rwgate.sources.net.http import NO_NETWORK, unreachable_reason

NOWHERE = "api.crossref.invalid"  # RFC 6761: never resolves
WAKEFIELD = "10.1016/s0140-6736(97)11096-0"
NATURE = "10.1038/nature12373"
COMMA = "10.5555/with,comma"  # asked alone: a second request the first failure must stop


class Resolver:
    """``socket.getaddrinfo`` as on a machine with no network, for :data:`NOWHERE` only."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self._real = socket.getaddrinfo

    def __call__(self, host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == NOWHERE:
            self.asked.append(host)
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return self._real(host, *args, **kwargs)


@pytest.fixture
def resolver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Resolver]:
    stub = Resolver()
    monkeypatch.setattr(socket, "getaddrinfo", stub)
    yield stub


def test_a_name_that_does_not_resolve_is_asked_once(resolver: Resolver) -> None:
    src = CrossrefSource(f"https://{NOWHERE}", max_attempts=5, max_total_seconds=60.0)
    answers = src.query_all([WAKEFIELD, NATURE, COMMA])
    assert {a.outcome for a in answers.values()} == {"error"}
    reason = f"crossref: {NOWHERE}: the name does not resolve (no network?); {NO_NETWORK}"
    assert {a.error for a in answers.values()} == {reason}
    assert src.requests_made == 1  # of two requests of five attempts each
    assert resolver.asked == [NOWHERE]


def test_a_refused_connection_ends_openalex_too() -> None:
    alex = OpenAlexSource(Settings(openalex_url=closed_port_url()))
    for ask in (lambda: alex.work(NATURE), lambda: alex.search("x"), lambda: alex.work(WAKEFIELD)):
        with pytest.raises(OpenAlexUnavailable, match="connection refused"):
            ask()
    assert alex.requests_made == 1


def test_transient_failures_keep_their_retries(fake_crossref: FakeCrossref) -> None:
    """A 503, a 429 and a dropped connection heal: each is retried, and the work is found."""
    fake_crossref.fail_next("503")
    fake_crossref.fail_next("429")
    fake_crossref.fail_next("drop")
    src = CrossrefSource(fake_crossref.url, max_attempts=5, backoff_base=0.01)
    assert src.query(NATURE).outcome == "found"
    assert len(fake_crossref.requests) == 4


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"), "resolve"),
        (OSError(errno.ENETUNREACH, "Network is unreachable"), "no route"),
        (OSError(errno.EHOSTUNREACH, "No route to host"), "no route"),
        (ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"), "refused"),
    ],
)
def test_failures_that_cannot_heal_within_the_run(error: OSError, said: str) -> None:
    try:
        try:
            raise error
        except OSError as exc:
            raise httpx.ConnectError(str(exc)) from exc
    except httpx.ConnectError as wrapped:
        assert said in (unreachable_reason(wrapped, "https://h.example") or "")


@pytest.mark.parametrize(
    "error",
    [ConnectionResetError(errno.ECONNRESET, "reset"), TimeoutError("timed out"), OSError("x")],
)
def test_failures_that_may_heal_are_not_taken_for_no_network(error: OSError) -> None:
    try:
        try:
            raise error
        except OSError as exc:
            raise httpx.ConnectError(str(exc)) from exc
    except httpx.ConnectError as wrapped:
        assert unreachable_reason(wrapped, "https://h.example") is None


def test_check_says_what_to_do_and_every_work_is_unverified(
    resolver: Resolver,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("RWGATE_CROSSREF_URL", f"https://{NOWHERE}")
    monkeypatch.setenv("RWGATE_NO_CACHE", "1")
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "".join(f"@article{{k{i}, title={{T{i}}}, doi={{10.1000/{i}}}}}\n" for i in range(250)),
        encoding="utf-8",
    )
    code = main(["check", "--format", "json", str(bib)])
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert {c["status"] for c in report["citations"]} == {"unverified"}
    assert all("does not resolve" in (c["reason"] or "") for c in report["citations"])
    assert resolver.asked == [NOWHERE]  # three batches: one resolution, no retry
    (line,) = [w for w in report["warnings"] if "could not be asked" in w]
    assert "--offline" in line and "RWGATE_OFFLINE=1" in line and "rwgate data update" in line
    assert code == 0  # the default policy warns about unverified works
