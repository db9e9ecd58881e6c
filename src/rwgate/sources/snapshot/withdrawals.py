"""The snapshot's harvested preprint withdrawals as an offline source.

``rwgate data harvest`` stores arXiv's and bioRxiv/medRxiv's withdrawals in the snapshot
(:mod:`rwgate.sources.snapshot.preprints`). Offline, where the live arXiv and bioRxiv sources can
only answer from the cache, this source answers from those tables: a listed preprint is ``found``
with its withdrawal notice (``withdrawn``, the reason in the authors' words). A preprint it does not
list proves nothing (``absence`` ``nothing``; it is never ``found`` without its notice): it was not
withdrawn when its part was harvested, or it is newer than the harvest, so it stays ``unverified``
unless a cached live answer clears it. Online the live sources answer and this one is not opened.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from rwgate.contract.models import Lookup, SourceInfo
from rwgate.settings.config import Settings
from rwgate.settings.paths import default_snapshot_path
from rwgate.sources.cache import Cache
from rwgate.sources.interface import IdKind, IntegritySource, Progress
from rwgate.sources.preprint_ids import arxiv_of_doi, biorxiv_doi
from rwgate.sources.snapshot import preprints as snapshot_preprints

NAME = "preprint_withdrawals"


def _where(doi: str) -> tuple[tuple[str, ...], str] | None:
    """The snapshot parts and the ident a preprint DOI is stored under, if it is a preprint's."""
    arxiv = arxiv_of_doi(doi)
    if arxiv is not None:
        return ("arxiv",), arxiv.id
    preprint = biorxiv_doi(doi)
    if preprint is not None:
        return ("biorxiv", "medrxiv"), preprint
    return None


class HarvestedWithdrawals(IntegritySource):
    """Harvested withdrawals of arXiv and bioRxiv/medRxiv, read offline from the snapshot."""

    name = NAME
    title = "harvested preprint withdrawals"
    settings = frozenset({"snapshot", "offline"})
    absence = "nothing"  # only withdrawals are stored: an unlisted preprint is not cleared
    vouches = True  # every "found" of it carries its withdrawal notice
    servers = frozenset({"arXiv", "bioRxiv/medRxiv"})

    def __init__(self, path: Path, parts: list[snapshot_preprints.PreprintPart]) -> None:
        self.path = path
        self.parts = parts
        self.conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)

    @classmethod
    def open(cls, settings: Settings, cache: Cache) -> IntegritySource | None:
        """Offline only, and only when the snapshot holds a harvested part."""
        if not settings.offline:
            return None
        path = Path(settings.snapshot or default_snapshot_path())
        if not path.is_file():
            return None
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            parts = snapshot_preprints.parts(conn)
        finally:
            conn.close()
        return cls(path, parts) if parts else None

    def takes(self, kind: IdKind, ident: str) -> bool:
        return kind == "doi" and _where(ident) is not None

    def query_all(
        self, idents: Sequence[str], progress: Progress | None = None, kind: IdKind = "doi"
    ) -> dict[str, Lookup]:
        """``found`` with the withdrawal notice of each listed preprint, else ``not_found``."""
        now = dt.datetime.now(dt.UTC)
        out = {i: Lookup(doi=i, outcome="not_found", source=NAME, as_of=now) for i in idents}
        by_parts: dict[tuple[str, ...], dict[str, str]] = {}
        for ident in out:
            where = _where(ident) if kind == "doi" else None
            if where is not None:
                by_parts.setdefault(where[0], {})[ident] = where[1]
        for servers, wanted in by_parts.items():
            listed = snapshot_preprints.withdrawals(self.conn, servers, wanted.values())
            for ident, key in wanted.items():
                if key in listed:
                    notice, published = listed[key]
                    out[ident] = Lookup(
                        doi=ident,
                        outcome="found",
                        source=NAME,
                        notices=[notice],
                        published_doi=published,
                        as_of=self._as_of(),
                    )
        if progress is not None:
            progress(len(out), len(out))
        return out

    def _as_of(self) -> dt.datetime | None:
        days = [p.through for p in self.parts if p.through]
        return dt.datetime.combine(min(days), dt.time(), dt.UTC) if days else None

    def info(self) -> SourceInfo:
        return SourceInfo(name=self.name, url=str(self.path), as_of=self._as_of())

    def close(self) -> None:
        self.conn.close()
