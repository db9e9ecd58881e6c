"""Issue 39: a source declares what "found, no notices" vouches for.

A source added by the documented recipe that does not vouch (OpenAlex's ``is_retracted`` misses
many retractions) answers "found" with no notices while Crossref answers 503: the work is
``unverified``, never ``clean`` on that source alone. On 2c1189c's rule any "found" record
decided, and the work came out ``clean`` with basis the made-up source.
"""

from __future__ import annotations

import datetime as dt

from fakes.crossref import FakeCrossref
from rwgate.contract.models import Lookup, Notice, SourceInfo
from rwgate.settings.config import Settings
from rwgate.sources.cache import Cache
from rwgate.sources.crossref import CrossrefSource
from rwgate.sources.interface import IdKind, IntegritySource
from rwgate.verdicts.judge import judge

DOI = "10.1016/S0140-6736(97)11096-0"  # retracted, in the fake's fixtures


class SecondOpinion(IntegritySource):
    """A made-up source that knows every DOI, with notices only for the ones it flags; it does
    not declare that it vouches (the interface's default)."""

    name = "second"
    title = "Second opinion"
    flagged: frozenset[str] = frozenset()

    @classmethod
    def open(cls, settings: Settings, cache: Cache) -> IntegritySource | None:
        return cls()

    def query(self, ident: str, kind: IdKind = "doi") -> Lookup:
        notices = []
        if ident in self.flagged:
            notices = [Notice(type="retraction", date=dt.date(2010, 2, 2), source=[self.name])]
        return Lookup(doi=ident, outcome="found", source=self.name, notices=notices)

    def info(self) -> SourceInfo:
        return SourceInfo(name=self.name)


def _crossref_503() -> tuple[CrossrefSource, Lookup]:
    """What the real Crossref client answers when Crossref says 503 (loopback fake)."""
    with FakeCrossref() as fake:
        fake.fail_next("503", times=10)
        crossref = CrossrefSource(
            fake.url, timeout=2.0, backoff_base=0.01, max_attempts=2, max_total_seconds=15.0
        )
        answer = crossref.query_all([DOI])[DOI]
    assert answer.outcome == "error"
    return crossref, answer


def test_found_without_notices_from_a_source_that_does_not_vouch_is_not_clean() -> None:
    crossref, failed = _crossref_503()
    second = SecondOpinion()
    ev = judge([(crossref, failed), (second, second.query(DOI))], offline=False)
    assert ev.status == "unverified", ev
    assert ev.basis == []
    assert "503" in (ev.reason or "")  # the reason names the failure, not the made-up source


def test_a_source_that_does_not_vouch_still_decides_with_notices() -> None:
    crossref, failed = _crossref_503()
    second = SecondOpinion()
    second.flagged = frozenset({DOI})
    ev = judge([(crossref, failed), (second, second.query(DOI))], offline=False)
    assert (ev.status, ev.basis) == ("retracted", ["second"])


def test_the_built_in_sources_vouch() -> None:
    from rwgate.sources import SOURCES

    assert SecondOpinion.vouches is False
    assert all(source.vouches for source in SOURCES)
