"""Crossref look-ups beyond the integrity batch: searches, single records and BibTeX.

The MCP tools and citation verification ask Crossref questions that are not "what are the notices
of these DOIs". They go through :meth:`~rwgate.sources.crossref.CrossrefSource.request` (the same
retries, ``Retry-After``, learned rate limits and polite pool), so one process never has two
clients competing for Crossref's limits. Answers are cached by URL and parameters; failures are
never cached and raise :class:`SourceUnavailable` ("could not ask", not "nothing found").
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from rwgate.contract.doi import doi_path
from rwgate.errors import SourceError
from rwgate.settings.config import Settings
from rwgate.sources.cache import TTL_SEARCH, TTL_WORK, Cache

if TYPE_CHECKING:
    from rwgate.sources.crossref import CrossrefSource, Kind, Reply

BIBTEX_TYPE = "application/x-bibtex"
_SOURCE = "crossref"


class SourceUnavailable(SourceError):
    """Crossref could not answer (network, HTTP error, offline); the message is one line."""


class WorkList(BaseModel):
    """One page of a ``/works`` answer: the items and Crossref's count of all matches."""

    items: list[dict[str, Any]]
    total: int


class CrossrefQuery:
    """Cached, polite Crossref GETs for searches, records and BibTeX (thread-safe).

    ``source``: the run's Crossref client (a check's integrity source, made on first use), so a
    run has one; None: one of its own, made on first use and closed by :meth:`close`."""

    def __init__(
        self,
        settings: Settings,
        cache: Cache | None = None,
        source: Callable[[], CrossrefSource | None] | None = None,
    ) -> None:
        self.settings = settings
        self.cache = cache if cache is not None else Cache(settings.lookup_cache)
        self.base_url = settings.crossref_url.rstrip("/")
        self._given = source
        self._source: CrossrefSource | None = None
        self._own = False
        self._lock = threading.Lock()

    def works(self, params: Mapping[str, str], ttl: float = TTL_SEARCH) -> WorkList:
        """``GET /works?params``: items and ``total-results``."""
        data = self._json(f"{self.base_url}/works", params, "list", ttl)
        message = data["message"]
        items = [i for i in message.get("items") or [] if isinstance(i, dict)]
        total = message.get("total-results")
        return WorkList(items=items, total=total if isinstance(total, int) else len(items))

    def work(self, doi: str, ttl: float = TTL_WORK) -> dict[str, Any] | None:
        """``GET /works/{doi}``: the record, or None when Crossref does not know the DOI."""
        data = self._json(self._work_url(doi), {}, "work", ttl)
        return data.get("message") if data else None

    def bibtex(self, doi: str) -> str | None:
        """Crossref's BibTeX for ``doi`` (content negotiation by URL), or None when unknown."""
        url = f"{self._work_url(doi)}/transform/{BIBTEX_TYPE}"
        key = self._key(url, {})
        cached = self.cache.get(key)
        if isinstance(cached, dict) and "text" in cached:
            text = cached["text"]
            return str(text) if text is not None else None
        reply = self._fetch(url, {}, "text")
        text = reply.data if reply.status == 200 else None
        self.cache.set(key, {"text": text}, TTL_WORK)
        return text if isinstance(text, str) else None

    def close(self) -> None:
        with self._lock:
            if self._own and self._source is not None:
                self._source.close()
            self._source = None

    def _work_url(self, doi: str) -> str:
        doi = doi.strip().lower()
        if not doi:
            raise SourceUnavailable("crossref: empty DOI")
        return f"{self.base_url}/works/{doi_path(doi)}"

    def _key(self, url: str, params: Mapping[str, str]) -> str:
        query = json.dumps(sorted(params.items()), separators=(",", ":"))
        return f"{_SOURCE}:query:{url}?{query}"

    def _json(self, url: str, params: Mapping[str, str], kind: Kind, ttl: float) -> dict[str, Any]:
        """The decoded answer (``{}`` for a 404 of one work), from the cache when fresh."""
        key = self._key(url, params)
        cached = self.cache.get(key)
        if isinstance(cached, dict):
            return cached
        reply = self._fetch(url, params, kind)
        data: dict[str, Any] = reply.data if reply.status == 200 else {}
        self.cache.set(key, data, ttl)
        return data

    def _fetch(self, url: str, params: Mapping[str, str], kind: Kind) -> Reply:
        if self.settings.offline:
            raise SourceUnavailable("crossref: offline (RWGATE_OFFLINE=1) and not in the cache")
        reply = self._open().request(url, params, kind)
        if reply.error is not None:
            raise SourceUnavailable(reply.error)
        return reply

    def _open(self) -> CrossrefSource:
        """The run's Crossref source, or one of its own made on first use (so ``httpx`` loads
        only then)."""
        with self._lock:
            if self._source is None and self._given is not None:
                self._source = self._given()
            if self._source is None:
                from rwgate.sources.crossref import CrossrefSource

                self._source, self._own = CrossrefSource.from_settings(self.settings), True
            return self._source
