"""arXiv's pace: one request every three seconds, one connection at a time, for the whole process.

arXiv's API terms ask for "no more than one request every three seconds" and "a single connection
at a time". arXiv advertises no limits to learn, so this pacer is fixed: a request holds the one
turn for its whole length, and starts no sooner than ``interval`` after the previous start. Every
arXiv endpoint and every source of the process share the one pacer (:func:`arxiv_pacer`): the MCP
server answering fifty calls at once still asks arXiv once per 3 s. Time is the injected
``clock`` and ``sleep`` (real by default), so a test orders requests against a fake clock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from rwgate.sources.net.ratelimit import DeadlineExceeded, Limiter

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

    def hold(self, seconds: float) -> None:
        """Start no request for ``seconds`` from now (a ``Retry-After``)."""
        with self._cond:
            self._not_before = max(self._not_before, self._clock() + seconds)

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
