"""Crossref REST ``/works`` as an integrity source: batched, polite, and honest about failure.

Crossref carries the Retraction Watch notices in each work's ``updated-by``. A whole bibliography is
asked in batches (``filter=doi:A,doi:B,...``, at most ``batch_size`` per request) because Crossref
rate-limits per request, not per DOI. A DOI missing from a batch answer is asked once more on its
own (``/works/{doi}``) before it is called ``not_found``: a list answer that silently leaves a DOI
out is not proof that the DOI does not exist. A request that finally fails gives every DOI in it
``outcome="error"`` so that the core reports ``unverified``, never ``clean``.

``httpx`` is imported only on the path that really talks to the network: rwgate promises that a run
answered from the cache never loads the HTTP client.
"""

from __future__ import annotations

import datetime as dt
import random
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from rwgate import __version__
from rwgate.doi import doi_path
from rwgate.evidence import lookup_from_crossref
from rwgate.models import Lookup, SourceInfo
from rwgate.sources.base import Progress
from rwgate.sources.ratelimit import DeadlineExceeded, Limiter, retry_after_seconds

if TYPE_CHECKING:
    import httpx

SELECT = "DOI,title,container-title,issued,update-to,updated-by"
PROJECT_URL = "https://github.com/rwgate/rwgate"
_MAX_THREADS = 8
_BACKOFF_CAP = 30.0
_MIN_TIMEOUT = 0.05
_Kind = Literal["list", "work", "text"]


def user_agent(mailto: str | None) -> str:
    """Crossref asks for a tool name, a URL and (for the polite pool) a contact address."""
    contact = f"; mailto:{mailto}" if mailto else ""
    return f"rwgate/{__version__} ({PROJECT_URL}{contact})"


@dataclass
class _Failure:
    reason: str
    retry: bool
    retry_after: float | None = None


@dataclass
class _Run:
    """What the worker threads of one ``query_all`` share."""

    client: httpx.Client
    deadline: float
    cancel: threading.Event


@dataclass
class _Reply:
    """One finished GET: a readable answer (status 200 or 404) or the reason there is none."""

    status: int = 0
    data: Any = None
    error: str | None = None


Reply = _Reply
"""The public name of one finished GET, for callers of :meth:`CrossrefSource.request`."""


_Result = tuple[dict[str, Lookup], list[str]]
"""What a worker returns: the look-ups it settled and the DOIs still to confirm one by one."""


class CrossrefSource:
    """The Crossref REST API behind the :class:`~rwgate.sources.base.IntegritySource` protocol."""

    name = "crossref"

    def __init__(
        self,
        base_url: str = "https://api.crossref.org",
        mailto: str | None = None,
        timeout: float = 10.0,
        max_total_seconds: float = 60.0,
        max_attempts: int = 5,
        backoff_base: float = 0.5,
        batch_size: int = 100,
    ) -> None:
        if not 1 <= batch_size <= 1000:
            raise ValueError(
                f"crossref batch_size must be 1..1000 (Crossref's rows limit), not {batch_size}"
            )
        if max_attempts < 1:
            raise ValueError(f"crossref max_attempts must be at least 1, not {max_attempts}")
        mailto = (mailto or "").strip() or None
        if mailto and any(c in mailto for c in "\r\n;()"):
            raise ValueError(f"crossref mailto is not an e-mail address: {mailto!r}")
        self.base_url = base_url.rstrip("/")
        self.mailto = mailto
        self.timeout = timeout
        self.max_total_seconds = max_total_seconds
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.batch_size = batch_size
        self.user_agent = user_agent(mailto)
        self.requests_made = 0
        # Public-pool defaults until the first answer says otherwise; kept across calls.
        self.limiter = Limiter(concurrency=1, limit=5, interval=1.0, max_concurrency=_MAX_THREADS)
        self._count_lock = threading.Lock()
        self._as_of: dt.datetime | None = None

    def info(self) -> SourceInfo:
        return SourceInfo(name=self.name, url=self.base_url, as_of=self._as_of)

    def query_all(self, dois: Sequence[str], progress: Progress | None = None) -> dict[str, Lookup]:
        """One Lookup per distinct DOI; failures become ``outcome="error"``, never an exception."""
        wanted = list(dict.fromkeys(dois))
        self._as_of = dt.datetime.now(dt.UTC)
        if not wanted:
            return {}
        deadline = time.monotonic() + self.max_total_seconds
        # A comma would split the DOI inside filter=doi:A,doi:B, so such DOIs are asked alone.
        batchable = [d for d in wanted if "," not in d]
        batches = [
            batchable[i : i + self.batch_size] for i in range(0, len(batchable), self.batch_size)
        ]
        singles = [d for d in wanted if "," in d]
        run = _Run(self._open_client(), deadline, threading.Event())
        pool = ThreadPoolExecutor(max_workers=_MAX_THREADS, thread_name_prefix="rwgate-crossref")
        completed = False
        try:
            results = self._drive(pool, run, batches, singles, len(wanted), progress)
            completed = True
        finally:
            if not completed:  # Ctrl-C or a failing progress callback: stop the workers now
                run.cancel.set()
                self.limiter.wake()
            pool.shutdown(wait=completed, cancel_futures=True)
            run.client.close()
        return {doi: results[doi] for doi in wanted}

    def _drive(
        self,
        pool: ThreadPoolExecutor,
        run: _Run,
        batches: list[list[str]],
        singles: list[str],
        total: int,
        progress: Progress | None,
    ) -> dict[str, Lookup]:
        """Hand batches to the workers; confirm what a batch left out, one DOI at a time."""
        results: dict[str, Lookup] = {}
        tasks: dict[Future[_Result], list[str]] = {}
        for batch in batches:
            tasks[pool.submit(self._fetch_batch, run, batch)] = batch
        for doi in singles:
            tasks[pool.submit(self._fetch_one, run, doi)] = [doi]
        while tasks:
            finished, _ = wait(tasks, return_when=FIRST_COMPLETED)
            for future in finished:
                lookups, missing = self._collect(future, tasks.pop(future))
                results.update(lookups)
                for doi in missing:
                    tasks[pool.submit(self._fetch_one, run, doi)] = [doi]
                if progress is not None and lookups:
                    progress(len(results), total)
        return results

    # --- workers (run on pool threads; they never raise) ------------------------------------

    def _collect(self, future: Future[_Result], dois: list[str]) -> _Result:
        try:
            return future.result()
        except Exception as exc:  # a bug must not cost the other DOIs their answers
            return {d: self._error(d, f"crossref: internal error: {exc}") for d in dois}, []

    def _fetch_batch(self, run: _Run, dois: list[str]) -> _Result:
        params = {"filter": ",".join(f"doi:{d}" for d in dois), "select": SELECT}
        params["rows"] = str(len(dois))
        reply = self._get(run, f"{self.base_url}/works", params, "list")
        if reply.error is not None:
            return {d: self._error(d, reply.error) for d in dois}, []
        wanted = set(dois)
        found: dict[str, Lookup] = {}
        for item in reply.data["message"]["items"]:
            key = str(item.get("DOI") or "").lower() if isinstance(item, dict) else ""
            if key in wanted and key not in found:
                found[key] = self._parse(key, item)
        return found, [d for d in dois if d not in found]

    def _fetch_one(self, run: _Run, doi: str) -> _Result:
        url = f"{self.base_url}/works/{doi_path(doi)}"
        reply = self._get(run, url, {}, "work")
        if reply.error is not None:
            lookup = self._error(doi, reply.error)
        elif reply.status == 404:
            lookup = Lookup(doi=doi, outcome="not_found", source=self.name, as_of=_now())
        else:
            lookup = self._parse(doi, reply.data["message"])
        return {doi: lookup}, []

    def _parse(self, doi: str, message: Mapping[str, Any]) -> Lookup:
        try:
            lookup = lookup_from_crossref(message, source=self.name)
        except (ValueError, TypeError, AttributeError) as exc:
            return self._error(doi, f"crossref: unreadable record for {doi}: {exc}")
        return lookup.model_copy(update={"doi": doi, "as_of": _now()})

    def _error(self, doi: str, text: str) -> Lookup:
        return Lookup(doi=doi, outcome="error", source=self.name, error=text, as_of=_now())

    # --- HTTP with retries --------------------------------------------------------------------

    def open_client(self) -> httpx.Client:
        """An HTTP client for :meth:`request` (the caller closes it)."""
        return self._open_client()

    def request(
        self, client: httpx.Client, url: str, params: Mapping[str, str], kind: _Kind
    ) -> Reply:
        """One GET on the same retry, ``Retry-After`` and rate-limit path as :meth:`query_all`.

        ``kind`` says what a readable answer is: a work list, one work (404 = not found) or
        plain text (``transform`` answers; 404 = not found). Never raises for HTTP trouble.
        """
        run = _Run(client, time.monotonic() + self.max_total_seconds, threading.Event())
        return self._get(run, url, dict(params), kind)

    def _open_client(self) -> httpx.Client:
        import httpx  # here and only here: see the module docstring

        return httpx.Client(
            headers={"User-Agent": self.user_agent, "Accept": "application/json"},
            timeout=self.timeout,
            follow_redirects=True,
            limits=httpx.Limits(
                max_connections=_MAX_THREADS, max_keepalive_connections=_MAX_THREADS
            ),
        )

    def _get(self, run: _Run, url: str, params: dict[str, str], kind: _Kind) -> _Reply:
        """GET with exponential backoff (full jitter), ``Retry-After`` and the overall deadline."""
        if self.mailto:
            params = {**params, "mailto": self.mailto}
        failure: _Failure | None = None
        attempts = 0
        while attempts < self.max_attempts:
            if failure is not None:
                delay = failure.retry_after
                if delay is None:
                    delay = random.uniform(
                        0, min(_BACKOFF_CAP, self.backoff_base * 2 ** (attempts - 1))
                    )
                if time.monotonic() + delay >= run.deadline:
                    return _Reply(error=self._deadline_text(failure, attempts))
                if failure.retry_after is not None:
                    self.limiter.hold(delay)  # Retry-After is meant for the whole client
                elif run.cancel.wait(delay):
                    return _Reply(error="crossref: cancelled")
            attempts += 1
            try:
                reply, failure = self._attempt(run, url, params, kind)
            except DeadlineExceeded:
                return _Reply(error=self._deadline_text(failure, attempts - 1))
            if failure is None:
                return reply
            if not failure.retry:
                return _Reply(error=f"crossref: {failure.reason}")
        assert failure is not None
        return _Reply(error=f"crossref: {failure.reason} after {attempts} attempts")

    def _deadline_text(self, failure: _Failure | None, attempts: int) -> str:
        last = f"{failure.reason}; " if failure else ""
        return (
            f"crossref: {last}gave up at the {self.max_total_seconds:g}s deadline"
            f" after {attempts} attempt{'s' if attempts != 1 else ''}"
        )

    def _attempt(
        self, run: _Run, url: str, params: dict[str, str], kind: _Kind
    ) -> tuple[_Reply, _Failure | None]:
        import httpx

        with self.limiter.slot(run.deadline, run.cancel):
            remaining = run.deadline - time.monotonic()
            if remaining < _MIN_TIMEOUT:
                raise DeadlineExceeded
            with self._count_lock:
                self.requests_made += 1
            try:
                response = run.client.get(url, params=params, timeout=min(self.timeout, remaining))
            except httpx.TimeoutException:
                return _Reply(), _Failure("timed out", retry=True)
            except httpx.TransportError as exc:
                return _Reply(), _Failure(_transport_reason(exc), retry=True)
            self.limiter.update(response.headers)
        return _interpret(response, kind)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _transport_reason(exc: Exception) -> str:
    """A short name for a network failure; the full chain goes nowhere near the report."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < 8:
        chain.append(current)
        current = current.__cause__ or current.__context__
    if any(isinstance(e, ConnectionRefusedError) or "refused" in str(e).lower() for e in chain):
        return "connection refused"
    if any("disconnected" in str(e).lower() or isinstance(e, ConnectionResetError) for e in chain):
        return "connection dropped by the server"
    return f"connection failed ({type(exc).__name__}: {str(exc)[:80]})"


def _well_formed(data: Any, kind: _Kind) -> bool:
    message = data.get("message") if isinstance(data, dict) else None
    if kind == "list":
        return isinstance(message, dict) and isinstance(message.get("items"), list)
    return isinstance(message, dict)


def _crossref_message(response: httpx.Response) -> str:
    """Crossref's own words from a ``validation-failure`` body, if it sent one."""
    try:
        messages = response.json().get("message")
        first = messages[0] if isinstance(messages, list) and messages else {}
        return str(first.get("message") or "").strip()
    except (ValueError, AttributeError, TypeError):
        return response.text.strip()[:200]


def _interpret(response: httpx.Response, kind: _Kind) -> tuple[_Reply, _Failure | None]:
    status = response.status_code
    if status == 200 and kind == "text":
        return _Reply(status=200, data=response.text), None
    if status == 200:
        try:
            data = response.json()
        except ValueError:
            return _Reply(), _Failure("malformed JSON", retry=True)
        if not _well_formed(data, kind):
            return _Reply(), _Failure("malformed response (no message)", retry=True)
        return _Reply(status=200, data=data), None
    if status == 404 and kind != "list" and response.text.strip().startswith("Resource not found"):
        return _Reply(status=404), None
    if status == 429 or status >= 500:
        wait_for = retry_after_seconds(response.headers.get("retry-after"))
        return _Reply(), _Failure(f"HTTP {status}", retry=True, retry_after=wait_for)
    detail = _crossref_message(response) if status == 400 else ""
    return _Reply(), _Failure(f"HTTP {status}" + (f": {detail}" if detail else ""), retry=False)
