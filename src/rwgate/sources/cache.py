"""The look-up cache, and the source wrapper that consults it before the network.

diskcache is SQLite underneath, so several builds (latexmk running bibtex, a pandoc filter and an
MCP server at once) can share one cache safely. A cache that cannot be opened or written degrades
to no cache with one warning: a slow build is better than a broken one. Errors are never stored, so
a failed look-up is retried next time instead of being remembered.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rwgate.config import Settings
from rwgate.models import Lookup, SourceInfo
from rwgate.sources.interface import IdKind, IntegritySource, Progress

# DESIGN.md's per-kind time-to-live, in seconds.
TTL_WORK = 24 * 3600
TTL_SEARCH = 6 * 3600
TTL_FEED = 3600


class CacheWarning(UserWarning):
    """The cache could not be used; rwgate goes on without it."""


class Cache:
    """A thin, failure-tolerant face over ``diskcache.Cache``.

    ``quiet``: the owner reports :attr:`warning` itself (the integrity check puts it in its
    report), so no Python warning is raised as well; the user sees the problem once.
    """

    def __init__(self, directory: Path | None, quiet: bool = False) -> None:
        self.directory = directory
        self.quiet = quiet
        self._db: Any = None
        self.warning: str | None = None
        if directory is None:
            return
        try:
            import diskcache

            directory.mkdir(parents=True, exist_ok=True)
            self._db = diskcache.Cache(str(directory), timeout=2)
        except Exception as exc:  # any failure to open means: work without a cache
            self._disable(f"cache disabled ({directory}): {exc}")

    def _disable(self, message: str) -> None:
        if self.warning is None:
            self.warning = message
            if not self.quiet:
                warnings.warn(message, CacheWarning, stacklevel=3)
        if self._db is not None:
            with contextlib.suppress(Exception):
                self._db.close()
        self._db = None

    @property
    def enabled(self) -> bool:
        return self._db is not None

    def get(self, key: str) -> Any:
        if self._db is None:
            return None
        try:
            return self._db.get(key)
        except Exception as exc:
            self._disable(f"cache disabled ({self.directory}): {exc}")
            return None

    def set(self, key: str, value: Any, ttl: float) -> None:
        if self._db is None:
            return
        try:
            self._db.set(key, value, expire=ttl)
        except Exception as exc:
            self._disable(f"cache disabled ({self.directory}): {exc}")

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


class CachedSource(IntegritySource):
    """Any source behind the cache: answers from the cache, asks the real source for the rest.

    The real source is built by ``factory`` on the first miss, so a fully cached check never
    imports the HTTP client. With no factory (offline) there is no real source: misses are
    errors ("offline and not in cache"), which the core turns into ``unverified`` (or snapshot
    verdicts). It declares what the source it wraps declares.
    """

    def __init__(
        self,
        kind: type[IntegritySource],
        cache: Cache,
        factory: Callable[[], IntegritySource] | None,
        info: SourceInfo,
        ttl: float = TTL_WORK,
    ) -> None:
        self.kind = kind
        self.name, self.title = kind.name, kind.title
        self.answers, self.settings, self.absence = kind.answers, kind.settings, kind.absence
        self.cache = cache
        self.factory = factory
        self.ttl = self._ttl = ttl
        self.default_info = info
        self.inner: IntegritySource | None = None
        self.hits = 0

    @classmethod
    def open(cls, settings: Settings, cache: Cache) -> IntegritySource | None:
        """Never opened from the family: a source wraps itself (see ``CrossrefSource.open``)."""
        raise TypeError("CachedSource wraps a source; open that source instead")

    def _key(self, ident: str, kind: IdKind) -> str:
        return f"{self.name}:work:{ident}" if kind == "doi" else f"{self.name}:{kind}:{ident}"

    def query(self, ident: str, kind: IdKind = "doi") -> Lookup:
        return self.query_all([ident], kind=kind)[ident]

    def query_all(
        self, idents: Sequence[str], progress: Progress | None = None, kind: IdKind = "doi"
    ) -> dict[str, Lookup]:
        results: dict[str, Lookup] = {}
        misses: list[str] = []
        for ident in dict.fromkeys(idents):
            raw = self.cache.get(self._key(ident, kind))
            if raw is not None:
                try:
                    results[ident] = Lookup.model_validate(raw)
                    self.hits += 1
                    continue
                except ValueError:
                    pass  # an entry from an older layout: ask again
            misses.append(ident)
        if misses and self.factory is None:
            for ident in misses:
                results[ident] = Lookup(
                    doi=ident, outcome="error", source=self.name, error="offline and not in cache"
                )
        elif misses:
            if self.inner is None:
                self.inner = self.factory()  # type: ignore[misc]
            fresh = self.inner.query_all(misses, progress, kind=kind)
            now = dt.datetime.now(dt.UTC)
            for ident in misses:
                lookup = fresh.get(ident) or Lookup(
                    doi=ident, outcome="error", source=self.name, error="no answer from the source"
                )
                if lookup.outcome != "error":
                    lookup = lookup.model_copy(update={"as_of": lookup.as_of or now})
                    self.cache.set(
                        self._key(ident, kind), lookup.model_dump(mode="json"), self._ttl
                    )
                results[ident] = lookup
        return results

    def info(self) -> SourceInfo:
        info = self.inner.info() if self.inner is not None else self.default_info
        # The cache's own message is one of the check's warnings; here it is only named.
        notes = [n for n in (info.note, "cache disabled" if self.cache.warning else None) if n]
        if self.hits:
            notes.append(f"{self.hits} answered from cache")
        if self.factory is None:
            notes.append("offline: cache only")
        return info.model_copy(update={"note": "; ".join(notes) or None})

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()
