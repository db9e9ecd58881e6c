"""The look-up cache, and the source wrapper that consults it before the network.

diskcache is SQLite underneath, so several builds (latexmk's bibtex, a pandoc filter, an MCP
server) can share one cache. A cache that cannot be opened or written degrades to no cache with
one warning: a slow build is better than a broken one. Errors are never stored, so a failed
look-up is retried next time.

The cache holds data, never code: diskcache pickles by default, and unpickling a cache someone
else wrote (a CI cache from another branch) could run anything. Here keys are plain strings and
values JSON text (:func:`_data_disk`, in a ``json/`` sub-folder); an entry stored any other way
is refused (a miss and one warning). Every look-up carries its fetch time (``as_of``); one dated
in the future is discarded.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rwgate.contract.models import Lookup, SourceInfo
from rwgate.contract.trusted import trusted
from rwgate.settings.config import Settings
from rwgate.sources.interface import IdKind, IntegritySource, Progress, run_state

# DESIGN.md's per-kind time-to-live, in seconds.
TTL_WORK = 24 * 3600
TTL_SEARCH = 6 * 3600
TTL_FEED = 3600
TTL_AGENCY = 30 * 24 * 3600  # which agency registered a DOI does not change: 30 days
FUTURE_SLACK = 300.0  # seconds a cached fetch time may lie ahead of this clock
OFFLINE = "offline and not in cache"


class CacheWarning(UserWarning):
    """The cache could not be used; rwgate goes on without it."""


class RefusedEntry(ValueError):
    """A cache entry not stored as data (a pickle, a non-text key): never loaded."""


def _data_disk() -> type:
    """A diskcache ``Disk`` that stores and loads JSON only (made here: diskcache loads lazily)."""
    import diskcache
    from diskcache.core import MODE_BINARY, MODE_RAW, UNKNOWN

    class DataDisk(diskcache.Disk):
        def put(self, key: Any) -> Any:
            if not isinstance(key, str):
                raise TypeError("cache keys are strings")
            return super().put(key)

        def get(self, key: Any, raw: bool) -> Any:
            if not raw or not isinstance(key, str):
                raise RefusedEntry("a cache key that is not text")
            return key

        def store(self, value: Any, read: bool, key: Any = UNKNOWN) -> Any:
            data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            return super().store(data, False, key=key)

        def fetch(self, mode: int, filename: Any, value: Any, read: bool) -> Any:
            if mode not in (MODE_RAW, MODE_BINARY):
                raise RefusedEntry("a cache value not stored as data")
            data = super().fetch(mode, filename, value, False)
            if not isinstance(data, bytes | str):
                raise RefusedEntry("a cache value not stored as data")
            try:
                return json.loads(data)
            except ValueError:
                raise RefusedEntry("a cache value that is not JSON") from None

    return DataDisk


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

            folder = directory / "json"
            folder.mkdir(parents=True, exist_ok=True)
            self._db = diskcache.Cache(str(folder), timeout=2, disk=_data_disk())
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

    def get(self, key: str) -> Any:
        if self._db is None:
            return None
        try:
            return self._db.get(key)
        except RefusedEntry as exc:  # someone else's entry: a miss, never code
            if self.warning is None:
                self.warning = f"cache ({self.directory}): {exc} was ignored"
            return None
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
    imports the HTTP client; with no factory (offline) a miss is an error (:data:`OFFLINE`). It
    declares what the source it wraps declares.
    """

    def __init__(
        self,
        kind: type[IntegritySource],
        cache: Cache,
        factory: Callable[[], IntegritySource] | None,
        info: SourceInfo,
    ) -> None:
        self.kind = kind
        self.name, self.title = kind.name, kind.title
        self.answers, self.settings, self.absence = kind.answers, kind.settings, kind.absence
        self.vouches, self.servers = kind.vouches, kind.servers
        self.cache = cache
        self.factory = factory
        self.ttl = TTL_WORK
        self.default_info = info
        self.inner: IntegritySource | None = None
        self.hits = 0
        self.oldest: dt.datetime | None = None
        self.fetched = 0
        """Look-ups the wrapped source answered this run (not from the cache)."""
        self.failed: Counter[str] = Counter()
        """Look-ups the wrapped source could not answer this run, by reason."""

    @classmethod
    def open(cls, settings: Settings, cache: Cache) -> IntegritySource | None:
        """Never opened from the family: a source wraps itself (see ``CrossrefSource.open``)."""
        raise TypeError("CachedSource wraps a source; open that source instead")

    def takes(self, kind: IdKind, ident: str) -> bool:
        return self.kind.takes(self, kind, ident)

    def _key(self, ident: str, kind: IdKind) -> str:
        return f"{self.name}:work:{ident}" if kind == "doi" else f"{self.name}:{kind}:{ident}"

    def query(self, ident: str, kind: IdKind = "doi") -> Lookup:
        return self.query_all([ident], kind=kind)[ident]

    def query_all(
        self, idents: Sequence[str], progress: Progress | None = None, kind: IdKind = "doi"
    ) -> dict[str, Lookup]:
        results: dict[str, Lookup] = {}
        misses: list[str] = []
        now = dt.datetime.now(dt.UTC)
        for ident in dict.fromkeys(idents):
            cached = _cached_lookup(self.cache.get(self._key(ident, kind)), now)
            if cached is not None:
                results[ident] = cached
                self.hits += 1
                self.oldest = min(self.oldest or now, cached.as_of or now)
                continue
            misses.append(ident)
        if misses and self.factory is None:
            for ident in misses:
                results[ident] = trusted(
                    Lookup,
                    {"doi": ident, "outcome": "error", "source": self.name, "error": OFFLINE},
                )
        elif (inner := self.real()) is not None:
            fresh = inner.query_all(misses, progress, kind=kind)
            for ident in misses:
                lookup = fresh.get(ident) or Lookup(
                    doi=ident, outcome="error", source=self.name, error="no answer from the source"
                )
                if lookup.outcome != "error":
                    lookup = lookup.model_copy(update={"as_of": lookup.as_of or now})
                    ttl = TTL_AGENCY if lookup.outcome == "foreign" else TTL_WORK
                    self.cache.set(self._key(ident, kind), lookup.model_dump(mode="json"), ttl)
                    self.fetched += 1
                else:
                    self.failed[lookup.error or "error"] += 1
                results[ident] = lookup
        return results

    def real(self) -> IntegritySource | None:
        """The wrapped source itself, made now if not yet (None offline): what else the run asks
        of the same API goes through it, on its one client."""
        if self.inner is None and self.factory is not None:
            self.inner = self.factory()
        return self.inner

    def info(self) -> SourceInfo:
        info = self.inner.info() if self.inner is not None else self.default_info
        # The cache's own message is one of the check's warnings; here it is only named.
        notes = [n for n in (info.note, "cache disabled" if self.cache.warning else None) if n]
        if self.hits:
            age = ""
            if self.oldest is not None:
                hours = (dt.datetime.now(dt.UTC) - self.oldest).total_seconds() / 3600
                age = f", the oldest fetched {hours:.1f} h ago"
            notes.append(f"{self.hits} answered from cache{age}")
        if self.factory is None:
            notes.append("offline: cache only")
        return info.model_copy(update={"note": "; ".join(notes) or None, **self._state()})

    def _state(self) -> dict[str, Any]:
        """What happened this run (:attr:`SourceInfo.state`): the source's answers when it was
        asked; otherwise offline, all from the cache, or nothing to look up."""
        said = run_state(self.fetched, self.failed, self.name)
        if said.get("state") == "not_reached" and self.hits:  # the cache answered the rest
            missed = sum(self.failed.values())
            return {"state": "cache", "why": f"{missed} not reached ({said['why']})"}
        if said:
            return said
        offline = "offline" if self.factory is None else None
        if self.hits:
            return {"state": "cache", "why": offline}
        return {"state": "not_asked", "why": offline or "nothing to look up"}

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()


def _cached_lookup(raw: Any, now: dt.datetime) -> Lookup | None:
    """A cached answer if it is one: a valid Lookup, not an error, not from the future."""
    if raw is None:
        return None
    try:
        lookup = Lookup.model_validate(raw)
    except ValueError:
        return None  # an entry from an older layout (or not ours): ask again
    if lookup.outcome == "error" or lookup.as_of is None:
        return None
    as_of = lookup.as_of if lookup.as_of.tzinfo else lookup.as_of.replace(tzinfo=dt.UTC)
    if (as_of - now).total_seconds() > FUTURE_SLACK:
        return None
    return lookup
