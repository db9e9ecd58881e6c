"""The integrity sources are one family: the core merges any of them by what they declare.

A made-up third source (answering DOIs, a complete registry of its own notices) is opened beside
the real ones through ``open_sources(family=...)``: the core judges with it without knowing it.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from rwgate.contract.models import Lookup, Notice, Reference, SourceInfo
from rwgate.core import check
from rwgate.settings.config import DOCUMENT_KEYS, USER_KEYS, Settings, load_settings
from rwgate.sources import SOURCES, open_sources
from rwgate.sources.cache import Cache
from rwgate.sources.interface import IdKind, IntegritySource

RETRACTED = "10.5555/third.retracted"
UNLISTED = "10.5555/third.unlisted"


class ThirdSource(IntegritySource):
    """A complete registry of notices that knows one retracted work."""

    name = "third"
    title = "Third registry"
    absence = "clean"
    settings = frozenset({"offline"})

    @classmethod
    def open(cls, settings: Settings, cache: Cache) -> IntegritySource | None:
        return cls()

    def query(self, ident: str, kind: IdKind = "doi") -> Lookup:
        if ident == RETRACTED:
            notice = Notice(type="retraction", date=dt.date(2020, 1, 2), source=[self.name])
            return Lookup(doi=ident, outcome="found", source=self.name, notices=[notice])
        return Lookup(doi=ident, outcome="not_found", source=self.name)

    def info(self) -> SourceInfo:
        return SourceInfo(name=self.name, as_of=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))


def _settings(tmp_path: Path) -> Settings:
    return load_settings(tmp_path, overrides={"offline": True, "no_cache": True})


def test_a_new_source_is_merged_without_touching_the_core(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    refs = [Reference(key="a", doi=RETRACTED), Reference(key="b", doi=UNLISTED)]
    sources = open_sources(settings, family=(*SOURCES, ThirdSource))
    result = check(refs, settings, sources=sources)
    a, b = result.citations
    assert (a.status, a.basis) == ("retracted", ["third"])
    assert (b.status, b.basis) == ("clean", ["third"])
    assert b.reason == "not listed in the Third registry of 2026-01-01"
    # Offline without a cache Crossref has nothing to answer from: it is not opened at all.
    assert [s.name for s in result.sources] == ["third"]


def test_without_it_the_same_works_are_unverified_offline(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    result = check([Reference(key="a", doi=RETRACTED)], settings)
    assert result.citations[0].status == "unverified"
    assert result.citations[0].basis == []


def test_every_source_setting_is_the_invoking_users() -> None:
    for source in SOURCES:
        assert source.settings <= USER_KEYS, source.name
        assert not source.settings & DOCUMENT_KEYS, source.name
