"""Client-side politeness for rate-limited APIs (Crossref's ``x-rate-limit-*`` headers).

Crossref advertises its limits on every answer (``x-rate-limit-limit`` requests per
``x-rate-limit-interval``, at most ``x-concurrency-limit`` in flight) and blocks clients that ignore
them, so a :class:`Limiter` learns them from the answers; shared by all threads of a source, it
bounds how many requests are in flight and how many start in any sliding window of one interval.

arXiv advertises nothing and asks for "no more than one request every three seconds" and "a
single connection at a time": its :class:`Pacer` is fixed, and one for every arXiv endpoint and
source of the process (:func:`arxiv_pacer`). Its time is an injected ``clock`` and ``sleep``
(real by default), so a test orders requests against a fake clock.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from rwgate.errors import SourceError

_INTERVAL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$", re.IGNORECASE)
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


class DeadlineExceeded(SourceError):
    """No request slot opened before the caller's deadline (or the caller gave up)."""


def parse_interval(value: str | None) -> float | None:
    """Seconds in an ``x-rate-limit-interval`` value such as ``1s``; None when unreadable."""
    match = _INTERVAL.match(value or "")
    if not match:
        return None
    seconds = float(match.group(1)) * _UNIT_SECONDS[(match.group(2) or "s").lower()]
    return seconds if seconds > 0 else None


def parse_positive_int(value: str | None) -> int | None:
    try:
        number = int(str(value).strip())
    except ValueError:
        return None
    return number if number > 0 else None


def retry_after_seconds(value: str | None, now: dt.datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP-date), or None."""
    if not value or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - (now or dt.datetime.now(dt.UTC))).total_seconds())


class Limiter:
    """Concurrency and request-rate bound shared by the threads talking to one API.

    Starts conservative (the caller's numbers) and follows whatever the server advertises via
    :meth:`update`; :meth:`hold` makes every thread wait (a ``Retry-After`` applies to the client,
    not just to the request that got it).
    """

    def __init__(
        self,
        concurrency: int = 1,
        limit: int = 5,
        interval: float = 1.0,
        max_concurrency: int = 8,
        clock: Callable[[], float] = time.monotonic,
        on_start: Callable[[float], None] | None = None,
    ) -> None:
        """``on_start`` is told the clock's time of each request start it grants (a test reads
        the window the limiter kept from it, without the jitter of a server's arrival times)."""
        self.on_start = on_start
        self.max_concurrency = max_concurrency
        self.concurrency = min(max(1, concurrency), max_concurrency)
        self.limit = max(1, limit)
        self.interval = interval
        self._clock = clock
        self._cond = threading.Condition()
        self._in_flight = 0
        self._starts: deque[float] = deque()
        self._not_before = 0.0

    def update(self, headers: Mapping[str, str]) -> None:
        """Adopt the limits a response advertised; unreadable or absent values change nothing."""
        concurrency = parse_positive_int(headers.get("x-concurrency-limit"))
        limit = parse_positive_int(headers.get("x-rate-limit-limit"))
        interval = parse_interval(headers.get("x-rate-limit-interval"))
        with self._cond:
            if concurrency is not None:
                self.concurrency = min(concurrency, self.max_concurrency)
            if limit is not None:
                self.limit = limit
            if interval is not None:
                self.interval = interval
            self._cond.notify_all()

    def hold(self, seconds: float) -> None:
        """Start no request for ``seconds`` from now (on any thread)."""
        with self._cond:
            self._not_before = max(self._not_before, self._clock() + seconds)
            self._cond.notify_all()

    def wake(self) -> None:
        """Make waiting threads look at their cancel events again."""
        with self._cond:
            self._cond.notify_all()

    @contextmanager
    def slot(self, deadline: float, cancel: threading.Event | None = None) -> Iterator[None]:
        """Hold one request slot; raises :class:`DeadlineExceeded` if none opens in time.

        ``cancel`` (checked whenever the thread wakes; see :meth:`wake`) gives up early.
        """
        self._acquire(deadline, cancel)
        try:
            yield
        finally:
            with self._cond:
                self._in_flight -= 1
                self._cond.notify_all()

    def _acquire(self, deadline: float, cancel: threading.Event | None) -> None:
        with self._cond:
            while True:
                if cancel is not None and cancel.is_set():
                    raise DeadlineExceeded
                now = self._clock()
                wait = self._wait_needed(now)
                if wait is not None and wait <= 0:
                    self._in_flight += 1
                    self._starts.append(now)
                    if self.on_start is not None:
                        self.on_start(now)
                    return
                if now >= deadline:
                    raise DeadlineExceeded
                self._cond.wait(deadline - now if wait is None else min(wait, deadline - now))

    def _wait_needed(self, now: float) -> float | None:
        """0 when a request may start now, else seconds to wait (None: until a slot frees)."""
        if self._in_flight >= self.concurrency:
            return None
        if now < self._not_before:
            return self._not_before - now
        while self._starts and self._starts[0] <= now - self.interval:
            self._starts.popleft()
        if len(self._starts) >= self.limit:
            return self._starts[0] + self.interval - now
        return 0.0


_SHARED: dict[tuple[str, str], Limiter] = {}
_SHARED_LOCK = threading.Lock()


def shared_limiter(service: str, base_url: str, make: Callable[[], Limiter]) -> Limiter:
    """The one limiter of this process for ``service`` at ``base_url``.

    A long-running process (the MCP server) answers many calls at once; each opens its own source,
    and a limiter per source let 50 concurrent calls put 20-40 requests in flight against
    Crossref's advertised 5 per second and concurrency 1. One limiter per API and server, made on
    first use and kept, bounds them all together, with the limits learned from any answer.
    """
    key = (service, base_url.rstrip("/"))
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = make()
        return _SHARED[key]


INTERVAL = 3.0
"""Seconds between two request starts, as arXiv asks."""


class Pacer(Limiter):
    """One request at a time, starts at least ``interval`` apart (see the module docstring)."""

    def __init__(
        self,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] | None = None,
        on_start: Callable[[float], None] | None = None,
    ) -> None:
        super().__init__(concurrency=1, limit=1, interval=interval, max_concurrency=1, clock=clock)
        self.on_start = on_start
        self._sleep = sleep
        self._turn = threading.Lock()
        self._last_start: float | None = None
        self.starts = 0
        """Requests started through this pacer (the benchmark counts them)."""

    def update(self, headers: Mapping[str, str]) -> None:
        """arXiv advertises no limits: nothing to learn."""

    @contextmanager
    def slot(self, deadline: float, cancel: threading.Event | None = None) -> Iterator[None]:
        """Hold the one turn, started on arXiv's pace; :class:`DeadlineExceeded` when it cannot
        start before ``deadline`` (a ``time.monotonic()`` instant) or ``cancel`` is set."""
        if not self._turn.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise DeadlineExceeded
        try:
            self._wait_turn(deadline, cancel)
            with self._cond:
                self._last_start = self._clock()
                self.starts += 1
            if self.on_start is not None:
                self.on_start(self._last_start)
            yield
        finally:
            self._turn.release()

    def _wait_turn(self, deadline: float, cancel: threading.Event | None) -> None:
        while True:
            if cancel is not None and cancel.is_set():
                raise DeadlineExceeded
            with self._cond:
                ready = self._not_before
                if self._last_start is not None:
                    ready = max(ready, self._last_start + self.interval)
                wait = ready - self._clock()
            if wait <= 0:
                return
            if time.monotonic() + wait > deadline:
                raise DeadlineExceeded
            self._pause(wait, cancel)

    def _pause(self, seconds: float, cancel: threading.Event | None) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
        elif cancel is not None:
            cancel.wait(seconds)
        else:
            time.sleep(seconds)


_PACER: Pacer | None = None
_PACER_LOCK = threading.Lock()


def arxiv_pacer() -> Pacer:
    """The process's one pacer for every arXiv endpoint (made on first use)."""
    global _PACER
    with _PACER_LOCK:
        if _PACER is None:
            _PACER = Pacer()
        return _PACER


def use_pacer(pacer: Pacer | None) -> Pacer | None:
    """Make ``pacer`` the process's arXiv pacer (a test's fake clock); the previous one back."""
    global _PACER
    with _PACER_LOCK:
        previous, _PACER = _PACER, pacer
        return previous
