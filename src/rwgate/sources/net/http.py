"""The one retrying GET behind every registry rwgate asks (Crossref, OpenAlex, arXiv, bioRxiv).

Giving up too early turns a citation ``unverified``; never giving up hangs a build. So every GET
has one discipline: backoff with full jitter, ``Retry-After`` honoured by the whole client (the
shared :class:`~rwgate.sources.net.ratelimit.Limiter`), an overall deadline and a one-line reason
fit for a report; what a usable answer looks like is the caller's ``interpret``. ``httpx`` is
imported only where a request really goes out (a run answered from the cache never loads it).

An upstream is not trusted to behave: every socket wait ends at the run's deadline
(:mod:`rwgate.sources.net.deadline_io`), an answer over :data:`MAX_BODY` bytes, compressed or
decompressed, is refused before it is read whole, and redirects are followed only to the same
scheme and host. A failure that will not heal within a run (:mod:`rwgate.sources.net.netblock`)
ends the look-ups of that server after one try, for every thread of the source, for
:attr:`Retrying.max_total_seconds`; timeouts, 5xx, 429 and dropped connections keep their retries.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from rwgate import __version__
from rwgate.errors import SourceError
from rwgate.sources.net.netblock import (
    blocked_answer,
    blocked_transport,
    redirected_away,
    transport_reason,
    unreachable_reason,
)
from rwgate.sources.net.ratelimit import DeadlineExceeded, Limiter, retry_after_seconds

if TYPE_CHECKING:
    import httpx

PROJECT_URL = "https://github.com/rwgate/rwgate"
NO_NETWORK = "not retried this run"
"""In every reason of a failure that cannot heal within the run (the core adds what to do)."""
MAX_BODY = 20 * 1024 * 1024
"""Largest answer read, compressed or decompressed (a 1,000-record Crossref list is ~5 MB)."""
MAX_REDIRECTS = 3
_MIN_TIMEOUT = 0.05
T = TypeVar("T")


_shared_clients: dict[tuple[str | None, float, int], Any] | None = None
_CLIENTS_LOCK = threading.Lock()


def share_connections() -> None:
    """One connection pool per API for the whole process (the MCP server): every call reuses the
    kept-alive connections instead of opening its own. One-shot commands keep a client a run."""
    global _shared_clients
    with _CLIENTS_LOCK:
        if _shared_clients is None:
            _shared_clients = {}


def open_client(mailto: str | None, timeout: float, connections: int) -> httpx.Client:
    """A client named as Crossref asks: tool, URL and (polite pool) ``mailto`` on every GET.

    With :func:`share_connections`, the process's one client for these settings, whose
    ``close()`` keeps it open for the next caller."""
    with _CLIENTS_LOCK:
        key = (mailto, timeout, connections)
        if _shared_clients is not None and key in _shared_clients:
            return _shared_clients[key]
        client = _new_client(mailto, timeout, connections, kept=_shared_clients is not None)
        if _shared_clients is not None:
            _shared_clients[key] = client
        return client


def _new_client(mailto: str | None, timeout: float, connections: int, kept: bool) -> httpx.Client:
    import httpx  # here and in Retrying._send only: see the module docstring

    class KeptClient(httpx.Client):
        def close(self) -> None:  # shared by every call of the process: never closed by one
            pass

    from rwgate.sources.net.deadline_io import bound_by_deadline

    contact = f"; mailto:{mailto}" if mailto else ""
    client = (KeptClient if kept else httpx.Client)(
        headers={
            "User-Agent": f"rwgate/{__version__} ({PROJECT_URL}{contact})",
            "Accept": "application/json",
        },
        params={"mailto": mailto} if mailto else None,
        timeout=timeout,
        follow_redirects=False,  # followed by hand: same scheme and host only (see _send)
        limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
    )
    bound_by_deadline(client)  # the run's deadline covers the headers too, not only the body
    return client


@dataclass
class Failure(SourceError):
    """Why one attempt brought no usable answer; ``retry`` is false when asking again won't help."""

    reason: str
    retry: bool = True
    retry_after: float | None = None
    unreachable: bool = False
    """Cannot heal within the run: no further request to this server (see the module doc)."""


class GaveUp(SourceError):
    """No answer in the end; ``str()`` is the one-line reason for the report.

    ``down`` is true when retrying ran out (attempts or deadline) rather than the server saying
    no or the caller cancelling: the server looks down, which a caller may remember for its run.
    """

    def __init__(self, text: str, down: bool = False) -> None:
        super().__init__(" ".join(text.split()))  # a server's error body may span lines
        self.down = down


def json_body(response: httpx.Response) -> Any:
    """The decoded body; a cut-off or garbled one is worth another try."""
    try:
        return response.json()
    except ValueError:
        raise Failure("malformed JSON") from None


@dataclass
class Run:
    """What the GETs of one question share: the client, one overall deadline, a way to stop.

    Setting ``cancel`` (then :meth:`Limiter.wake`) ends every GET of the run at its next wait.
    """

    client: httpx.Client
    deadline: float
    cancel: threading.Event


def _backoff_scale() -> float:
    """``RWGATE_RETRY_BACKOFF`` scales the jittered waits between retries (default 1; the tests set
    0: every retry is still made and counted, only not waited for). ``Retry-After`` is the
    server's word and is always honoured."""
    try:
        return max(0.0, float(os.environ.get("RWGATE_RETRY_BACKOFF", "1")))
    except ValueError:
        return 1.0


CANCEL: ContextVar[threading.Event | None] = ContextVar("rwgate_cancel", default=None)
"""Set by a caller that can be cancelled (an MCP tool call): every run started in its context
stops at its next request slot or wait once the event is set, instead of asking on regardless."""

_DOWN: dict[tuple[str, str], tuple[float, str]] = {}
_DOWN_LOCK = threading.Lock()
_remember_failures = 0.0


def remember_failures(seconds: float) -> None:
    """Let a long-running process (the MCP server) skip a server that just failed, for
    ``seconds``: an unreachable OpenAlex cost every call a quarter of a second again. One-shot
    commands keep asking (0, the default): each run is its own chance."""
    global _remember_failures
    _remember_failures = max(0.0, seconds)


def _server(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


@dataclass
class Retrying:
    """The retry discipline of one API, shared by every thread that asks it."""

    name: str
    limiter: Limiter
    timeout: float
    max_total_seconds: float
    max_attempts: int
    backoff_base: float
    backoff_cap: float
    learn_limits: bool = False
    """Adopt the ``x-rate-limit-*`` limits each answer advertises (Crossref does)."""
    mailto: str | None = None
    connections: int = 1
    """What :meth:`client` is opened with (:func:`open_client`)."""
    requests_made: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _client: httpx.Client | None = field(default=None, repr=False)
    _unreachable: dict[str, tuple[float, str]] = field(default_factory=dict, repr=False)
    _answered: set[str] = field(default_factory=set, repr=False)
    """Servers that answered this run: a reset from one of them is passing trouble."""

    def client(self) -> httpx.Client:
        """The API's one HTTP client, opened on first use and kept until :meth:`close`: every
        question to the API in a run (every thread, every caller) shares its connections."""
        with self._lock:
            if self._client is None:
                self._client = open_client(self.mailto, self.timeout, self.connections)
            return self._client

    def close(self) -> None:
        """Close :meth:`client` (its connections end; a later request opens another)."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def run(self, client: httpx.Client | None = None, cancel: threading.Event | None = None) -> Run:
        """A run whose deadline is ``max_total_seconds`` from now, on ``client`` (by default the
        API's own, :meth:`client`)."""
        deadline = time.monotonic() + self.max_total_seconds
        cancel = cancel if cancel is not None else CANCEL.get()
        client = self.client() if client is None else client
        return Run(client, deadline, threading.Event() if cancel is None else cancel)

    def get(
        self,
        run: Run,
        url: str,
        params: Mapping[str, str],
        interpret: Callable[[httpx.Response], T],
    ) -> T:
        """``interpret`` of the first usable answer, else :class:`GaveUp` (never an httpx error).

        429 and 5xx are retried before ``interpret`` sees them; it raises :class:`Failure` for
        any other answer it cannot use.
        """
        key = (self.name, _server(url))
        if _remember_failures:
            with _DOWN_LOCK:
                when, why = _DOWN.get(key, (0.0, ""))
            if time.monotonic() - when < _remember_failures:
                ago = time.monotonic() - when
                raise GaveUp(f"{self.name}: not asked, it failed {ago:.0f}s ago ({why})", down=True)
        last: Failure | None = None
        attempts = 0  # made so far
        try:
            while True:
                if last is not None:
                    self._back_off(last, attempts, run)
                try:
                    return interpret(self._send(run, url, params))
                except Failure as failure:
                    last, attempts = failure, attempts + 1
                except DeadlineExceeded:
                    if run.cancel.is_set():
                        raise GaveUp(f"{self.name}: cancelled") from None
                    raise self._late(last, attempts) from None
        except GaveUp as gave_up:
            if gave_up.down and _remember_failures and not run.cancel.is_set():
                with _DOWN_LOCK:
                    _DOWN[key] = (time.monotonic(), str(gave_up).removeprefix(f"{self.name}: "))
            raise

    def _back_off(self, failure: Failure, attempts: int, run: Run) -> None:
        """Wait before the next attempt, or raise :class:`GaveUp` when there must be none."""
        if failure.unreachable:
            raise GaveUp(f"{self.name}: {failure.reason}", down=True)
        if not failure.retry:
            raise GaveUp(f"{self.name}: {failure.reason}")
        if attempts >= self.max_attempts:
            raise GaveUp(f"{self.name}: {failure.reason} after {_attempts(attempts)}", down=True)
        delay = failure.retry_after
        if delay is None:
            cap = min(self.backoff_cap, self.backoff_base * 2 ** (attempts - 1))
            delay = random.uniform(0, cap) * _backoff_scale()
        if time.monotonic() + delay >= run.deadline:
            raise self._late(failure, attempts)
        if failure.retry_after is not None:
            self.limiter.hold(delay)  # Retry-After is meant for the whole client
        elif run.cancel.wait(delay):
            raise GaveUp(f"{self.name}: cancelled")

    def _not_again(self, server: str) -> None:
        """Fail at once, without a request, when ``server`` could not be reached this run."""
        with self._lock:
            when, why = self._unreachable.get(server, (0.0, ""))
        if why and time.monotonic() - when < self.max_total_seconds:
            raise Failure(f"{why}; {NO_NETWORK}", unreachable=True)

    def _cannot(self, server: str, why: str) -> Failure:
        """The failure of a request that cannot succeed this run, remembered for ``server``: its
        later requests fail at once (:meth:`_not_again`)."""
        with self._lock:
            self._unreachable[server] = (time.monotonic(), why)
        return Failure(f"{why}; {NO_NETWORK}", unreachable=True)

    def _late(self, failure: Failure | None, attempts: int) -> GaveUp:
        last = f"{failure.reason}; " if failure else ""
        return GaveUp(
            f"{self.name}: {last}gave up at the {self.max_total_seconds:g}s deadline"
            f" after {_attempts(attempts)}",
            down=True,
        )

    def _send(self, run: Run, url: str, params: Mapping[str, str]) -> httpx.Response:
        """One GET in a limiter slot, body read under bounds; :class:`Failure` for the network,
        429, 5xx, a refused redirect or an over-size or undecodable body."""
        import httpx

        from rwgate.sources.net.deadline_io import DEADLINE

        server = _server(url)
        self._not_again(server)
        with self.limiter.slot(run.deadline, run.cancel):
            self._not_again(server)  # another thread may have learnt it while this one waited
            remaining = run.deadline - time.monotonic()
            if remaining < _MIN_TIMEOUT:
                raise DeadlineExceeded
            with self._lock:
                self.requests_made += 1
            bound = DEADLINE.set(run.deadline)  # every socket wait, headers included
            try:
                response = _get_following(run, url, params, min(self.timeout, remaining))
            except httpx.TimeoutException:
                raise Failure("timed out") from None
            except httpx.DecodingError:
                raise Failure("undecodable compressed body") from None
            except httpx.TransportError as exc:
                with self._lock:
                    answered = server in self._answered
                cannot = unreachable_reason(exc, server) or blocked_transport(exc, server, answered)
                if cannot is None:
                    raise Failure(transport_reason(exc)) from None
                raise self._cannot(server, cannot) from None
            except Failure as failure:
                if failure.unreachable:  # redirected to another host: a portal's login page
                    raise self._cannot(server, failure.reason) from None
                raise
            finally:
                DEADLINE.reset(bound)
            if self.learn_limits:
                self.limiter.update(response.headers)
        blocked = blocked_answer(response, server)
        if blocked is not None:
            raise self._cannot(server, blocked)
        with self._lock:
            self._answered.add(server)
        status = response.status_code
        if status == 429 or status >= 500:
            wait_for = retry_after_seconds(response.headers.get("retry-after"))
            raise Failure(f"HTTP {status}", retry_after=wait_for)
        return response


def _get_following(run: Run, url: str, params: Mapping[str, str], timeout: float) -> httpx.Response:
    """GET ``url``, following at most :data:`MAX_REDIRECTS` redirects that keep the scheme and
    host; the body is read by :func:`_read_bounded`."""
    request = run.client.build_request("GET", url, params=params, timeout=timeout)
    for _ in range(MAX_REDIRECTS + 1):
        response = run.client.send(request, stream=True)
        try:
            if not response.has_redirect_location:
                _read_bounded(response, run)
                return response
            target = response.next_request
            if target is None or (target.url.scheme, target.url.host) != (
                request.url.scheme,
                request.url.host,
            ):
                where = target.url.host if target is not None else "nowhere"
                raise Failure(redirected_away(_server(url), where), unreachable=True)
            request = target
        finally:
            response.close()
    raise Failure(f"more than {MAX_REDIRECTS} redirects", retry=False)


def _read_bounded(response: httpx.Response, run: Run) -> None:
    """Read the body into ``response`` chunk by chunk, within the deadline and :data:`MAX_BODY`."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise Failure(f"answer of {int(declared)} bytes refused (over {MAX_BODY})", retry=False)
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_BODY or response.num_bytes_downloaded > MAX_BODY:
            raise Failure(f"answer over {MAX_BODY} bytes refused", retry=False)
        if run.cancel.is_set() or time.monotonic() > run.deadline:
            raise DeadlineExceeded
        chunks.append(chunk)
    response._content = b"".join(chunks)  # what .json() and .text read (httpx keeps it there)


def _attempts(n: int) -> str:
    return f"{n} attempt{'s' if n != 1 else ''}"
