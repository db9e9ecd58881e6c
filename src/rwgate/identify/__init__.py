"""Which work does each entry name? One stage between the references and the sources.

The core calls it once per chunk (:meth:`Identifier.chunk`), for ``rwgate check``, the builds,
the MCP server and ``rwgate verify``'s integrity alike:

1. the identifiers each entry gives are read once (:func:`rwgate.identify.ids.read_ids`);
2. shortDOIs (``10/f8vrcz``) are resolved (:mod:`rwgate.identify.shortdoi`);
3. with ``recover_dois`` and online, an entry without a DOI gets the DOI of a ``verified`` match
   from the Crossref and OpenAlex searches (:mod:`rwgate.identify.recover`);
4. an entry still without a DOI is matched offline against the sources' title index
   (:mod:`rwgate.identify.bytitle`).

Every service here shares the check's one look-up cache. Search services are not integrity
sources: they live here, not in :mod:`rwgate.sources`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rwgate.contract.models import Reference
from rwgate.identify.bytitle import TitleWork, title_works
from rwgate.identify.ids import read_ids

if TYPE_CHECKING:
    from rwgate.identify.lookup import Registries
    from rwgate.settings.config import Settings
    from rwgate.sources import OpenSources
    from rwgate.sources.interface import IdKind


_STAY = "entries without a DOI stay unchecked"


@dataclass
class Identified:
    """One chunk's entries as the sources are asked about them (position for position), and,
    by position, the registry works the title of a DOI-less entry fits."""

    refs: list[Reference]
    by_title: dict[int, list[TitleWork]] = field(default_factory=dict)

    def wanted(self) -> dict[IdKind, list[str]]:
        """The distinct DOIs and PubMed ids of the chunk, its title candidates' included: the
        sources are asked once per chunk."""
        works = [w for ws in self.by_title.values() for w in ws]
        named: list[Reference | TitleWork] = [*(r for r in self.refs if not r.missing), *works]
        return {
            "doi": list(dict.fromkeys(n.doi for n in named if n.doi)),
            "pmid": list(dict.fromkeys(n.pmid for n in named if n.pmid)),
        }


@dataclass
class Identifier:
    """The stage for one check: the settings, the open sources (their cache is the only one
    any service here opens) and the warnings the check reports."""

    settings: Settings
    srcs: OpenSources
    warnings: list[str]
    _registries: Registries | None = field(default=None, init=False)

    def chunk(self, refs: Sequence[Reference]) -> Identified:
        """Every entry of ``refs`` identified (module docstring)."""
        read = [read_ids(ref)[0] for ref in refs]
        read = self._short_dois(read)
        read = self._recover(read)
        return Identified(read, title_works(read, self.srcs))

    def _short_dois(self, refs: list[Reference]) -> list[Reference]:
        """ShortDOIs replaced by the DOIs the resolver says they stand for; one that cannot be
        resolved keeps its value and is judged ``unverified`` (never ``invalid_doi``)."""
        from rwgate.contract.doi import short_doi

        wanted = {i: s for i, r in enumerate(refs) if r.doi is None and (s := short_doi(r.raw_doi))}
        if not wanted:
            return refs
        from rwgate.identify.shortdoi import resolve_short_dois

        full = resolve_short_dois(list(wanted.values()), self.settings, self.srcs.cache)
        for index, short in wanted.items():
            if (doi := full.get(short)) is not None:
                refs[index] = refs[index].model_copy(update={"doi": doi, "doi_origin": "shortdoi"})
        return refs

    def _recover(self, refs: list[Reference]) -> list[Reference]:
        """With ``recover_dois``, entries without a DOI get the DOI of a verified title match.

        Recovery is an extra: whatever goes wrong, the DOIs the user gave are still checked,
        unmatched entries stay ``no_doi``, and a warning says why.
        """
        if not self.settings.recover_dois or not any(
            r.doi is None and r.raw_doi is None and not r.missing for r in refs
        ):
            return refs
        if self.settings.offline:
            self.warnings.append(f"DOI recovery skipped: offline; {_STAY}")
            return refs
        # The search clients and rapidfuzz load only here: a check without recovery (every
        # pandoc build) does not pay for them.
        from rwgate.identify.recover import recover_dois

        try:
            if self._registries is None:
                from rwgate.identify.lookup import open_registries

                self._registries = open_registries(self.settings, sources=self.srcs)
            recovery = recover_dois(refs, self._registries)
        except Exception as exc:  # any failure of the extra must leave the check itself intact
            self.warnings.append(f"DOI recovery failed ({exc}); {_STAY}")
            return refs
        self.warnings.extend(recovery.warnings)
        return recovery.references

    def close(self) -> None:
        if self._registries is not None:
            self._registries.close()
