"""OpenAlex ``/works`` as a second opinion: search, single works by DOI, ``is_retracted``.

The two registries fail differently: OpenAlex knows arXiv preprints (DataCite DOIs) that Crossref
does not, and flags retractions with ``is_retracted``. Requests go through
:mod:`rwgate.sources.net.http`; answers are cached with the per-kind time-to-live, failures never
cached but raised as :class:`OpenAlexUnavailable`, so a caller says "OpenAlex could not be asked"
rather than "nothing found".
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from rwgate.contract.doi import doi_path
from rwgate.identify.crossref_search import SourceUnavailable
from rwgate.settings.config import Settings
from rwgate.sources.cache import TTL_SEARCH, TTL_WORK, Cache
from rwgate.sources.net.http import Failure, GaveUp, Retrying, json_body
from rwgate.sources.net.ratelimit import Limiter, shared_limiter

if TYPE_CHECKING:
    import httpx

SELECT = (
    "id,doi,title,display_name,publication_year,publication_date,type,type_crossref,"
    "authorships,primary_location,biblio,is_retracted,ids"
)
MAX_PER_PAGE = 200  # OpenAlex's own limit for ``per-page``
_CONCURRENCY = 4
_NOT_FOUND = {"__rwgate_not_found__": True}


class OpenAlexUnavailable(SourceUnavailable):
    """OpenAlex could not answer (network, HTTP error, offline); the message is one line."""


class OpenAlexSource:
    """Cached, polite, retrying GETs against the OpenAlex API (thread-safe)."""

    name = "openalex"

    def __init__(
        self,
        settings: Settings,
        cache: Cache | None = None,
        backoff_base: float = 0.5,
    ) -> None:
        self.base_url = settings.openalex_url.rstrip("/")
        self.offline = settings.offline
        self.cache = cache or Cache(None)
        # OpenAlex allows 10 requests per second; staying under it avoids 429s altogether.
        self.limiter = shared_limiter(
            self.name,
            self.base_url,
            lambda: Limiter(
                concurrency=_CONCURRENCY, limit=8, interval=1.0, max_concurrency=_CONCURRENCY
            ),
        )
        self.http = Retrying(
            self.name,
            self.limiter,
            timeout=settings.timeout,
            max_total_seconds=settings.max_total_seconds,
            max_attempts=4,
            backoff_base=backoff_base,
            backoff_cap=20.0,
            mailto=settings.mailto,
            connections=_CONCURRENCY,
        )
        self._down: str | None = None  # why OpenAlex is taken to be down for the rest of the run
        self._gone = threading.Event()  # set with _down: stops the threads still retrying

    @property
    def requests_made(self) -> int:
        return self.http.requests_made

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
        self.http.close()

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
        run = self.http.run(cancel=self._gone)
        try:
            data = self.http.get(
                run, self.base_url + path, params, partial(_interpret, list_answer=list_answer)
            )
        except GaveUp as exc:
            if exc.down:
                # OpenAlex is down for this run. Later questions fail at once, and those still
                # retrying stop, instead of each waiting through its own backoff (a .bib of 300
                # entries would wait minutes for a source that is not there).
                self._down = str(exc)
                self._gone.set()
                self.limiter.wake()
            raise OpenAlexUnavailable(self._down or str(exc)) from None
        self.cache.set(key, data if data is not None else _NOT_FOUND, ttl)
        return data or {}


def _interpret(response: httpx.Response, list_answer: bool) -> dict[str, Any] | None:
    """The answer, or None for a work OpenAlex does not know; raises :class:`Failure`."""
    status = response.status_code
    if status == 404 and not list_answer:
        return None
    if status != 200:
        raise Failure(f"HTTP {status}: {_message(response)}", retry=False)
    data = json_body(response)
    shaped = isinstance(data, dict) and (
        isinstance(data.get("results"), list) if list_answer else "id" in data
    )
    if not shaped:
        raise Failure("malformed response")
    return data


def _message(response: httpx.Response) -> str:
    """OpenAlex's own one-line reason from an error body (``{"error": ..., "message": ...}``)."""
    try:
        body = response.json()
        text = str(body.get("message") or body.get("error") or "")
    except (ValueError, AttributeError):
        text = response.text
    return " ".join(text.split())[:200] or "error"
