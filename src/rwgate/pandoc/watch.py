"""The cached Crossref source, remembering what it answered.

The verdict memo must expire no later than the look-ups behind it would; the core keeps only the
verdicts, so the filter hands it this source and reads the answers' dates afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence

from rwgate.models import Lookup
from rwgate.sources.base import Progress
from rwgate.sources.cache import CachedSource


class WatchedSource(CachedSource):
    """Takes the place of the :class:`CachedSource` it is made from, with the same state."""

    def __init__(self, source: CachedSource) -> None:
        super().__init__(source.name, source.cache, source.factory, source.default_info, source.ttl)
        self.answers: dict[str, Lookup] = {}

    def query_all(self, dois: Sequence[str], progress: Progress | None = None) -> dict[str, Lookup]:
        found = super().query_all(dois, progress)
        self.answers.update(found)
        return found

    @property
    def failed(self) -> bool:
        """Whether any look-up failed or the cache could not be used."""
        return self.cache.warning is not None or any(
            lk.outcome == "error" for lk in self.answers.values()
        )

    def expires(self, cap: float) -> float:
        """When the first of the answers would leave the look-up cache (at most ``cap``)."""
        ends = [lk.as_of.timestamp() + self.ttl for lk in self.answers.values() if lk.as_of]
        return min([cap, *ends])
