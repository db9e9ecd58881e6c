"""OpenAlex ``/works`` as a second opinion: search, single works by DOI, ``is_retracted``.

Citation verification asks OpenAlex what it asks Crossref (does a work with this title exist, what
is the record behind this DOI), because the two registries fail differently: OpenAlex knows arXiv
preprints (DataCite DOIs) that Crossref does not, and flags retractions with ``is_retracted``.
The discipline is the core's: a shared :class:`~rwgate.sources.ratelimit.Limiter`, exponential
backoff with full jitter, ``Retry-After`` honoured, an overall deadline, successful answers cached
with the per-kind time-to-live, failures never cached and raised as :class:`OpenAlexUnavailable`
so a caller says "OpenAlex could not be asked" rather than "nothing found".

``httpx`` is imported only when a request really goes out (a cached answer never loads it).
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rwgate.config import Settings
from rwgate.doi import doi_path
from rwgate.sources.cache import TTL_SEARCH, TTL_WORK, Cache
from rwgate.sources.crossref import user_agent
from rwgate.sources.crossref_search import SourceUnavailable
from rwgate.sources.ratelimit import DeadlineExceeded, Limiter, retry_after_seconds

if TYPE_CHECKING:
    import httpx

SELECT = (
    "id,doi,title,display_name,publication_year,publication_date,type,type_crossref,"
    "authorships,primary_location,biblio,is_retracted,ids"
)
MAX_PER_PAGE = 200  # OpenAlex's own limit for ``per-page``
_BACKOFF_CAP = 20.0
_MIN_TIMEOUT = 0.05
_NOT_FOUND = {"__rwgate_not_found__": True}
_REFUSED = "connection refused"


class OpenAlexUnavailable(SourceUnavailable):
    """OpenAlex could not answer (network, HTTP error, offline); the message is one line."""


class _Down(Exception):
    """Every retry failed: the source is taken to be down for the rest of the run."""


@dataclass
class _Failure:
    reason: str
    retry: bool
    retry_after: float | None = None


class OpenAlexSource:
    """Cached, polite, retrying GETs against the OpenAlex API (thread-safe)."""

    name = "openalex"

    def __init__(
        self,
        settings: Settings,
        cache: Cache | None = None,
        max_attempts: int = 4,
        backoff_base: float = 0.5,
    ) -> None:
        self.base_url = settings.openalex_url.rstrip("/")
        self.mailto = settings.mailto
        self.offline = settings.offline
        self.timeout = settings.timeout
        self.max_total_seconds = settings.max_total_seconds
        self.max_attempts = max(1, max_attempts)
        self.backoff_base = backoff_base
        self.cache = cache or Cache(None)
        self.requests_made = 0
        # OpenAlex allows 10 requests per second; staying under it avoids 429s altogether.
        self.limiter = Limiter(concurrency=4, limit=8, interval=1.0, max_concurrency=4)
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()
        self._down: str | None = None

    # --- public look-ups ---------------------------------------------------------------------

    def search(
        self, text: str, per_page: int = 10, filters: Mapping[str, str] | None = None
    ) -> list[dict[str, Any]]:
        """Works OpenAlex ranks for the free-text ``text`` (``GET /works?search=``)."""
        params = {"search": text, "per-page": str(min(max(per_page, 1), MAX_PER_PAGE))}
        if filters:
            params["filter"] = ",".join(f"{k}:{v}" for k, v in filters.items())
        params["select"] = SELECT
        data = self._json("/works", params, TTL_SEARCH, list_answer=True)
        results = data.get("results") if data else None
        return [r for r in results or [] if isinstance(r, dict)]

    def work(self, doi: str) -> dict[str, Any] | None:
        """The work registered under ``doi`` (canonical form), or None when OpenAlex lacks it."""
        path = "/works/doi:" + doi_path(doi.strip().lower(), safe="/:;()._-")
        data = self._json(path, {"select": SELECT}, TTL_WORK, list_answer=False)
        return data or None

    def is_retracted(self, doi: str) -> bool | None:
        """OpenAlex's retraction flag for ``doi``; None when OpenAlex does not know the work."""
        record = self.work(doi)
        flag = record.get("is_retracted") if record else None
        return flag if isinstance(flag, bool) else None

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # --- the request path --------------------------------------------------------------------

    def _json(
        self, path: str, params: Mapping[str, str], ttl: float, list_answer: bool
    ) -> dict[str, Any]:
        """The decoded answer (``{}`` for a work OpenAlex does not know), cached when fresh."""
        key = "openalex:" + path + "?" + json.dumps(sorted(params.items()), separators=(",", ":"))
        cached = self.cache.get(key)
        if isinstance(cached, dict):
            return {} if cached == _NOT_FOUND else cached
        if self.offline:
            raise OpenAlexUnavailable("openalex: offline (RWGATE_OFFLINE=1) and not in the cache")
        if self._down is not None:
            raise OpenAlexUnavailable(self._down)
        try:
            data = self._get(self.base_url + path, dict(params), list_answer)
        except _Down as exc:
            # Retries are exhausted: OpenAlex is down for this run. Later questions fail at once
            # instead of each waiting through its own backoff (a .bib of 300 entries would wait
            # minutes for a source that is not there).
            self._down = str(exc)
            raise OpenAlexUnavailable(str(exc)) from None
        self.cache.set(key, data if data is not None else _NOT_FOUND, ttl)
        return data or {}

    def _open(self) -> httpx.Client:
        import httpx  # here and only here: see the module docstring

        with self._lock:
            if self._client is None:
                self._client = httpx.Client(
                    headers={"User-Agent": user_agent(self.mailto), "Accept": "application/json"},
                    timeout=self.timeout,
                    follow_redirects=True,
                )
            return self._client

    def _get(self, url: str, params: dict[str, str], list_answer: bool) -> dict[str, Any] | None:
        """GET with backoff; the answer, None for a 404, or :class:`OpenAlexUnavailable`."""
        if self.mailto:
            params = {**params, "mailto": self.mailto}
        client = self._open()
        deadline = time.monotonic() + self.max_total_seconds
        failure: _Failure | None = None
        made = 0
        for attempt in range(self.max_attempts):
            if failure is not None and self._down is not None:
                raise _Down(self._down)  # another thread already gave up on OpenAlex
            if failure is not None:
                delay = failure.retry_after
                if delay is None:
                    cap = min(_BACKOFF_CAP, self.backoff_base * 2 ** (attempt - 1))
                    delay = random.uniform(0, cap)
                if time.monotonic() + delay >= deadline:
                    break
                self.limiter.hold(delay)
            try:
                status, data, failure = self._attempt(client, url, params, deadline, list_answer)
            except DeadlineExceeded:
                break
            made += 1
            if failure is None:
                return data if status == 200 else None
            if not failure.retry:
                raise OpenAlexUnavailable(f"openalex: {failure.reason}")
            if failure.reason == _REFUSED and made >= 2:
                break  # nothing listens there: one retry covers a restarting server
        reason = failure.reason if failure else "no answer before the deadline"
        raise _Down(f"openalex: {reason} after {made} attempt{'s' * (made != 1)}")

    def _attempt(
        self,
        client: httpx.Client,
        url: str,
        params: dict[str, str],
        deadline: float,
        list_answer: bool,
    ) -> tuple[int, dict[str, Any] | None, _Failure | None]:
        import httpx

        with self.limiter.slot(deadline):
            remaining = deadline - time.monotonic()
            if remaining < _MIN_TIMEOUT:
                raise DeadlineExceeded
            with self._lock:
                self.requests_made += 1
            try:
                response = client.get(url, params=params, timeout=min(self.timeout, remaining))
            except httpx.TimeoutException:
                return 0, None, _Failure("timed out", retry=True)
            except httpx.TransportError as exc:
                return 0, None, _Failure(_transport_reason(exc), retry=True)
        return _interpret(response, list_answer)


def _interpret(
    response: httpx.Response, list_answer: bool
) -> tuple[int, dict[str, Any] | None, _Failure | None]:
    status = response.status_code
    if status == 200:
        try:
            data = response.json()
        except ValueError:
            return 0, None, _Failure("malformed JSON", retry=True)
        shaped = isinstance(data, dict) and (
            isinstance(data.get("results"), list) if list_answer else "id" in data
        )
        if not shaped:
            return 0, None, _Failure("malformed response", retry=True)
        return 200, data, None
    if status == 404 and not list_answer:
        return 404, None, None
    if status == 429 or status >= 500:
        wait_for = retry_after_seconds(response.headers.get("retry-after"))
        return 0, None, _Failure(f"HTTP {status}", retry=True, retry_after=wait_for)
    return 0, None, _Failure(f"HTTP {status}: {_message(response)}", retry=False)


def _message(response: httpx.Response) -> str:
    """OpenAlex's own one-line reason from an error body (``{"error": ..., "message": ...}``)."""
    try:
        body = response.json()
        text = str(body.get("message") or body.get("error") or "")
    except (ValueError, AttributeError):
        text = response.text
    return " ".join(text.split())[:200] or "error"


def _transport_reason(exc: Exception) -> str:
    text = f"{type(exc).__name__} {exc}".lower()
    if "refused" in text or "connecterror" in text:
        return _REFUSED
    if "disconnect" in text or "reset" in text or "protocol" in text:
        return "connection dropped by the server"
    return f"connection failed ({type(exc).__name__})"
