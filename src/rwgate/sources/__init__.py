"""Integrity sources: the family, listed once, and the set of them one check opens.

The core never names a source: it asks every open source for the identifiers that source
answers and merges the evidence by what each declares.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from rwgate.contract.models import Lookup, SourceInfo
from rwgate.errors import RwgateError
from rwgate.settings.config import Settings
from rwgate.sources.arxiv import ArxivSource
from rwgate.sources.biorxiv import BiorxivSource
from rwgate.sources.cache import Cache, CachedSource
from rwgate.sources.crossref import CrossrefSource
from rwgate.sources.interface import IdKind, IntegritySource, Progress, run_state
from rwgate.sources.snapshot.preprints import HarvestedWithdrawals
from rwgate.sources.snapshot.source import Snapshot
from rwgate.titles import TitleRow

SOURCES: tuple[type[IntegritySource], ...] = (
    CrossrefSource,
    Snapshot,
    ArxivSource,
    BiorxivSource,
    HarvestedWithdrawals,
)
"""Every integrity source, in the order reports name them."""

S = TypeVar("S", bound=IntegritySource)
Answers = dict[tuple[IdKind, str], list[tuple[IntegritySource, Lookup]]]
"""(kind, identifier) -> what each source that answers that kind said, in :data:`SOURCES` order."""


@dataclass
class OpenSources:
    """The sources one check uses, the cache they share, and what their answers imply for how long
    a verdict holds (kept as two figures, not as the answers: a check of 100,000 works asks in
    chunks and lets each chunk's answers go)."""

    sources: list[IntegritySource]
    cache: Cache
    warnings: list[str] = field(default_factory=list)
    any_error: bool = False
    """Whether any look-up so far failed."""
    first_end: float = float("inf")
    """When the first answer so far stops being true (its ``as_of`` plus its source's TTL)."""
    tally: dict[str, tuple[int, Counter[str]]] = field(default_factory=dict)
    """Per source name: look-ups answered, and those not answered by reason (for the sources
    that do not say themselves what happened this run: :meth:`infos`)."""
    titles_asked: bool = False

    def ask(
        self, wanted: Mapping[IdKind, Sequence[str]], progress: Progress | None = None
    ) -> Answers:
        """One batched ``query_all`` per source and identifier kind, of the identifiers it takes."""
        answers: Answers = {}
        for source in self.sources:
            for kind, asked in wanted.items():
                if kind not in source.answers:
                    continue
                idents = [i for i in asked if source.takes(kind, i)]
                if not idents:
                    continue
                found = source.query_all(idents, progress, kind=kind)
                ttl = source.ttl
                answered, failed = self.tally.setdefault(source.name, (0, Counter()))
                for ident in dict.fromkeys(idents):
                    lookup = found.get(ident) or Lookup(
                        doi=ident, outcome="error", source=source.name, error="no answer"
                    )
                    answers.setdefault((kind, ident), []).append((source, lookup))
                    if lookup.outcome == "error":
                        self.any_error = True
                        failed[lookup.error or "error"] += 1
                    else:
                        answered += 1
                    if ttl is not None and lookup.as_of is not None:
                        self.first_end = min(self.first_end, lookup.as_of.timestamp() + ttl)
                self.tally[source.name] = (answered, failed)
        return answers

    def titles(self, keys: Sequence[str]) -> list[tuple[IntegritySource, list[TitleRow]]]:
        """Every record any source holds under one of the normalised titles ``keys``, with the
        source holding it (one indexed query per source)."""
        if not keys:
            return []
        self.titles_asked = True
        return [(s, rows) for s in self.sources for rows in s.title_rows(keys).values()]

    def infos(self) -> list[SourceInfo]:
        """Each source as reports name it, with what happened to it this run (told by its
        look-ups for a source that does not say so itself); a preprint source only when asked."""
        infos = []
        for source in self.sources:
            if source.servers and source.name not in self.tally:
                continue  # a preprint source asked nothing this run: reports stay as they were
            info = source.info()
            if info.state is None:
                answered, failed = self.tally.get(source.name, (0, Counter()))
                said = run_state(answered, failed, source.name)
                if not said and not self.titles_asked:
                    said = {"state": "not_asked", "why": "nothing to look up"}
                info = info.model_copy(update=said or {"state": "answered"})
            infos.append(info)
        return infos

    def live(self, kind: type[S]) -> S | None:
        """The run's one ``kind`` source itself (made now if not yet), for the other questions a
        run asks of its API (DOI recovery's and verification's Crossref searches): one client
        per API and run. None when it is not open, or offline."""
        for source in self.sources:
            if isinstance(source, CachedSource) and source.kind is kind:
                real: IntegritySource | None = source.real()
            else:
                real = source
            if isinstance(real, kind):
                return real
        return None

    @property
    def failed(self) -> bool:
        """Whether any look-up failed or the cache could not be used."""
        return self.cache.warning is not None or self.any_error

    def close(self) -> None:
        for source in self.sources:
            source.close()
        self.cache.close()


def open_sources(
    settings: Settings, family: Iterable[type[IntegritySource]] = SOURCES
) -> OpenSources:
    """Open every source of ``family`` the settings allow; one that cannot open is a warning."""
    cache = Cache(settings.lookup_cache, quiet=True)
    opened = OpenSources(sources=[], cache=cache)
    if cache.warning:
        opened.warnings.append(cache.warning)
    for kind in family:
        try:
            source = kind.open(settings, cache)
        except (RwgateError, OSError, ValueError) as exc:  # a broken source must not stop the check
            opened.warnings.append(f"{kind.name} not usable: {exc}")
            continue
        if source is not None:
            opened.sources.append(source)
            opened.warnings.extend(source.warnings())
    return opened
