"""One base for the integrity sources asked over HTTP at their server's pace (Crossref, arXiv,
bioRxiv/medRxiv): a :class:`~rwgate.sources.net.http.Retrying` on the server's limiter, the run's
tally of what answered, and an ``open`` that puts the source behind the look-up cache.

A source keeps one client for its run (:class:`~rwgate.sources.OpenSources` closes it), so the
integrity batches and the searches of DOI recovery and ``rwgate verify`` share one client, one
retry discipline and one memory of a server that could not be reached.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar, Self

from rwgate.contract.models import Lookup, SourceInfo
from rwgate.settings.config import Settings
from rwgate.sources.cache import Cache, CachedSource
from rwgate.sources.interface import IdKind, IntegritySource, run_state
from rwgate.sources.net.http import Retrying, Run

if TYPE_CHECKING:
    from rwgate.sources.net.ratelimit import Limiter


class PacedSource(IntegritySource):
    """An integrity source on one HTTP API: its retry discipline, its client, its run's tally."""

    url_setting: ClassVar[str]
    """The setting naming the server, for how reports name the source before it is asked."""
    arg_settings: ClassVar[dict[str, str]]
    """Constructor argument -> the setting it is read from, beside the timeouts every source
    reads (:meth:`from_settings`)."""
    connections: ClassVar[int] = 1
    """Connections its client may hold at once (arXiv and bioRxiv ask for one)."""

    def __init__(
        self,
        url: str,
        limiter: Limiter,
        timeout: float,
        max_total_seconds: float,
        max_attempts: int,
        *,
        backoff_base: float = 1.0,
        learn_limits: bool = False,
        mailto: str | None = None,
    ) -> None:
        self.url = url
        self.http = Retrying(
            self.name,
            limiter,
            timeout=timeout,
            max_total_seconds=max_total_seconds,
            max_attempts=max_attempts,
            backoff_base=backoff_base,
            backoff_cap=30.0,
            learn_limits=learn_limits,
            mailto=mailto,
            connections=self.connections,
        )
        self._answered = 0
        self._failed: Counter[str] = Counter()
        """Look-ups this run that got no usable answer, by reason."""
        self._as_of: dt.datetime | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        """The source as the invoking user's settings configure it (never offline)."""
        named = {arg: getattr(settings, name) for arg, name in cls.arg_settings.items()}
        return cls(timeout=settings.timeout, max_total_seconds=settings.max_total_seconds, **named)

    @classmethod
    def open(cls, settings: Settings, cache: Cache) -> IntegritySource | None:
        """Behind the look-up cache (:class:`CachedSource`); offline without a cache there is
        nothing to ask: not opened."""
        if settings.offline and settings.no_cache:
            return None
        info = SourceInfo(name=cls.name, url=getattr(settings, cls.url_setting))
        factory = None if settings.offline else lambda: cls.from_settings(settings)
        return CachedSource(cls, cache, factory, info)

    def query(self, ident: str, kind: IdKind = "doi") -> Lookup:
        return self.query_all([ident], kind=kind)[ident]

    @property
    def requests_made(self) -> int:
        return self.http.requests_made

    def info(self) -> SourceInfo:
        """Named with what happened this run: answered (dated when the first answer came), or
        not reached (with the commonest reason); never dated when nothing answered."""
        info = SourceInfo(name=self.name, url=self.url, as_of=self._as_of)
        return info.model_copy(update=run_state(self._answered, self._failed, self.name))

    def _answer(self, ident: str, outcome: str, error: str | None = None) -> Lookup:
        return Lookup.model_validate(
            {"doi": ident, "outcome": outcome, "source": self.name, "error": error, "as_of": now()}
        )

    def _tally(self, lookups: Iterable[Lookup]) -> None:
        """Count this run's look-ups for :meth:`info`."""
        for lookup in lookups:
            if lookup.outcome == "error":
                self._failed[lookup.error or "error"] += 1
                continue
            self._answered += 1
            if self._as_of is None or (lookup.as_of and lookup.as_of < self._as_of):
                self._as_of = lookup.as_of or now()

    def run(self) -> Run:
        """A run of GETs on the source's one client, with its own deadline."""
        return self.http.run()

    def close(self) -> None:
        self.http.close()


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)
