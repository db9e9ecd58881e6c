"""The interface every integrity source implements, and what a source declares about itself.

A source answers a whole batch with :meth:`IntegritySource.query_all` (the default loops over
:meth:`~IntegritySource.query`; Crossref and the snapshot batch). Failures are answers, not
exceptions: a look-up that could not be made is a :class:`~rwgate.contract.models.Lookup` with
``outcome="error"``, which the core turns into ``unverified``, never ``clean``.

A source also declares what its answers are worth, so the core merges the evidence of any set of
sources without knowing them by name: :attr:`~IntegritySource.answers` (the identifiers it can be
asked), :attr:`~IntegritySource.absence` (what its ``not_found`` means: ``unknown`` for a DOI
registry, ``clean`` for a complete registry of notices, ``nothing`` for an extract),
:attr:`~IntegritySource.vouches` (whether ``found`` with no notices means the work has none:
Crossref's ``updated-by`` yes, OpenAlex's ``is_retracted`` no; off by default, so a new source
must say so) and :attr:`~IntegritySource.settings` (the settings it reads: all the invoking
user's, never a document's).

Adding a source: a module here with a subclass, its name in :data:`rwgate.sources.SOURCES`, and
its settings in :mod:`rwgate.settings.config` if it has new ones. Nothing else changes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from rwgate.contract.models import Lookup, SourceInfo
from rwgate.sources.net.http import NO_NETWORK
from rwgate.titles import TitleRow

if TYPE_CHECKING:
    from rwgate.settings.config import Settings
    from rwgate.sources.cache import Cache

Progress = Callable[[int, int], None]
"""Called with (done, total) as a source works through a batch."""

IdKind = Literal["doi", "pmid", "arxiv"]
"""``arxiv``: an arXiv id without version (:mod:`rwgate.sources.preprint_ids`)."""
Absence = Literal["unknown", "clean", "nothing"]


class IntegritySource(ABC):
    """One source of integrity evidence (Crossref, the Retraction Watch snapshot, ...)."""

    name: str
    """Stable identifier, used in reports (``sources``, ``basis``) and cache keys."""
    title: str
    """How reasons name it for a person: ``Crossref``, ``Retraction Watch snapshot``."""
    answers: frozenset[IdKind] = frozenset({"doi"})
    settings: frozenset[str] = frozenset()
    absence: Absence = "nothing"
    vouches: bool = False
    """Whether ``found`` with no notices means "no notices" (see the module docstring)."""
    ttl: float | None = None
    """How long its answers stay true (seconds); None: until its data changes."""
    servers: frozenset[str] = frozenset()
    """Preprint servers (:class:`~rwgate.sources.preprint_ids.PreprintServer` names) whose
    withdrawals this source states: only its vouching ``found`` clears a preprint of them."""

    @classmethod
    @abstractmethod
    def open(cls, settings: Settings, cache: Cache) -> IntegritySource | None:
        """This source as the invoking user's settings configure it; None when it is not there
        (no snapshot file). Raises an RwgateError (a warning in the report) when it is broken."""

    @abstractmethod
    def query(self, ident: str, kind: IdKind = "doi") -> Lookup:
        """What the source says about one identifier (an ``error`` Lookup if it cannot say)."""

    def query_all(
        self, idents: Sequence[str], progress: Progress | None = None, kind: IdKind = "doi"
    ) -> dict[str, Lookup]:
        """One Lookup per distinct identifier in ``idents``: every identifier gets an answer."""
        wanted = list(dict.fromkeys(idents))
        out: dict[str, Lookup] = {}
        for done, ident in enumerate(wanted, start=1):
            out[ident] = self.query(ident, kind)
            if progress is not None:
                progress(done, len(wanted))
        return out

    def takes(self, kind: IdKind, ident: str) -> bool:
        """Whether to ask this source about ``ident`` at all: a source for one server's DOIs
        (arXiv's DataCite DOIs) is asked only those, and is not in a report that asked it none."""
        return kind in self.answers

    def title_rows(self, keys: Sequence[str]) -> dict[str, list[TitleRow]]:
        """Records of works whose normalised title (:func:`rwgate.titles.title_key`) is each of
        ``keys``: how an entry without a DOI is matched offline. The default: none (a source
        that can only be asked by identifier)."""
        return {}

    def title_lookup(self, rows: Sequence[TitleRow]) -> Lookup | None:
        """This source's answer for the work of ``rows`` (from :meth:`title_rows`), when that
        work has no DOI or PubMed id to ask by; None when the source cannot say."""
        return None

    @abstractmethod
    def info(self) -> SourceInfo:
        """How this source is named in reports, and how fresh its data is."""

    def warnings(self) -> list[str]:
        """Things the user should know about this source's data (age, completeness)."""
        return []

    def close(self) -> None:  # noqa: B027 (a hook with a default, like warnings())
        """Release files and connections; the default holds none."""


def run_state(answered: int, failed: Mapping[str, int], name: str) -> dict[str, Any]:
    """:class:`SourceInfo`'s ``state`` and ``why`` from one run's look-ups: ``answered`` usable
    answers, ``failed`` look-ups without one by reason. Nothing answered but something failed is
    ``not_reached`` with the commonest reason (a source is never shown fresh for a run it did not
    answer); some failed beside answers, ``answered`` with how many did not. Nothing asked: ``{}``
    (the caller knows whether that was offline or nothing to look up)."""
    if not failed:
        return {"state": "answered", "why": None} if answered else {}
    reason = max(failed.items(), key=lambda item: item[1])[0]
    reason = reason.removeprefix(f"{name}: ").removesuffix(f"; {NO_NETWORK}")
    if not answered:
        return {"state": "not_reached", "why": reason}
    missed = sum(failed.values())
    return {"state": "answered", "why": f"{missed} not answered ({reason})"}
