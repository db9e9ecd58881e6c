"""The interface every integrity source implements.

Like pip-audit's vulnerability services, a source answers for a whole batch at once
(:meth:`IntegritySource.query_all`), so a source that can batch (Crossref's ``filter=doi:...``, the
snapshot's indexed ``IN`` query) never gets asked one DOI at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from rwgate.models import Lookup, SourceInfo

Progress = Callable[[int, int], None]
"""Called with (done, total) as a source works through a batch."""


class IntegritySource(Protocol):
    name: str

    def query_all(self, dois: Sequence[str], progress: Progress | None = None) -> dict[str, Lookup]:
        """One :class:`Lookup` per canonical DOI in ``dois`` (every DOI gets an answer)."""
        ...

    def info(self) -> SourceInfo:
        """How this source is named in reports, and how fresh its data is."""
        ...
