"""A check of 100,000 works (issue 14): asked and judged in chunks, its JSON report written in
pieces, its models sharing what they can. Each shortcut must give what the plain way gives."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pytest

import rwgate.core as core
from rwgate.contract.models import Citation, Location, Lookup, Notice, Reference, SourceInfo
from rwgate.contract.trusted import trusted
from rwgate.core import CheckResult, check
from rwgate.render import View
from rwgate.render.report import JsonFormat
from rwgate.settings.config import Settings, load_settings
from rwgate.settings.policy import Policy
from rwgate.sources import open_sources
from rwgate.sources.cache import Cache
from rwgate.sources.interface import IdKind, IntegritySource


class Registry(IntegritySource):
    """A complete registry: DOIs ending in 'r' are retracted, ending in 'e' cannot be asked."""

    name = "registry"
    title = "Test registry"
    absence = "clean"
    settings = frozenset({"offline"})
    asked: list[int]

    @classmethod
    def open(cls, settings: Settings, cache: Cache) -> IntegritySource | None:
        source = cls()
        source.asked = []
        return source

    def query(self, ident: str, kind: IdKind = "doi") -> Lookup:
        if ident.endswith("r"):
            notice = Notice(type="retraction", date=dt.date(2020, 1, 2), source=[self.name])
            return Lookup(doi=ident, outcome="found", source=self.name, notices=[notice])
        if ident.endswith("e"):
            return Lookup(doi=ident, outcome="error", source=self.name, error="timed out")
        return Lookup(doi=ident, outcome="not_found", source=self.name)

    def query_all(self, idents, progress=None, kind="doi"):  # type: ignore[no-untyped-def]
        self.asked.append(len(idents))
        answers = {i: self.query(i, kind) for i in idents}
        if progress:
            progress(len(idents), len(idents))
        return answers

    def info(self) -> SourceInfo:
        return SourceInfo(name=self.name, as_of=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))


def _refs() -> list[Reference]:
    ends = ["r", "c", "e", "c", "r", "c", "e"]
    return [Reference(key=f"k{i}", doi=f"10.5555/w{i}{end}") for i, end in enumerate(ends)]


def _run(tmp_path: Path, chunk: int, monkeypatch: pytest.MonkeyPatch) -> tuple[CheckResult, list]:
    monkeypatch.setattr(core, "CHUNK", chunk)
    settings = load_settings(tmp_path, overrides={"no_cache": True})
    sources = open_sources(settings, family=(Registry,))
    seen: list[tuple[int, int]] = []
    result = check(_refs(), settings, progress=lambda d, t: seen.append((d, t)), sources=sources)
    assert sources.sources[0].asked == [len(_refs()[i : i + chunk]) for i in range(0, 7, chunk)]
    return result, seen


def test_a_check_in_chunks_gives_the_verdicts_of_one_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole, _ = _run(tmp_path, 1_000, monkeypatch)
    chunked, seen = _run(tmp_path, 3, monkeypatch)
    assert chunked.citations == whole.citations
    assert [c.status for c in chunked.citations] == [
        "retracted", "clean", "unverified", "clean", "retracted", "clean", "unverified",
    ]  # fmt: skip
    # One warning line per failing source, not one per chunk; the progress counts the whole check.
    assert chunked.warnings == whole.warnings
    assert sum("could not be asked" in w for w in chunked.warnings) == 1
    assert seen == [(3, 7), (6, 7), (7, 7)]


def _result(count: int) -> CheckResult:
    notice = Notice(type="retraction", doi="10.1/n", date=dt.date(2011, 2, 3), source=["crossref"])
    citations = [
        Citation(
            key=f'k{i} «é» "q"\n',
            doi=f"10.1/{i}",
            status="retracted" if i % 3 == 0 else "clean",
            action="annotate" if i % 3 == 0 else "ignore",
            notices=[notice] if i % 3 == 0 else [],
            title="Title with a\nnewline and \\ backslash" if i % 5 == 0 else None,
            location=Location(file="refs.bib", line=i + 1),
        )
        for i in range(count)
    ]
    return CheckResult(citations=citations, policy=Policy(), sources=[], warnings=["w\n"])


@pytest.mark.parametrize("count", [0, 1, 999, 1_000, 2_501])
def test_the_json_report_written_in_pieces_is_the_rendered_one(count: int) -> None:
    result, view = _result(count), View(exit_code=2)
    out = io.BytesIO()
    JsonFormat().write(result, view, out)
    assert out.getvalue() == (JsonFormat().render(result, view) + "\n").encode("utf-8")


def test_models_sharing_a_fields_set_are_copied_apart() -> None:
    a = trusted(Location, {"file": "a.bib", "line": 1})
    b = trusted(Location, {"file": "b.bib", "line": 2})
    assert a.model_fields_set is b.model_fields_set  # shared: one set per field-name tuple
    c = a.model_copy(update={"line": 9})
    assert (c.line, a.line, b.line) == (9, 1, 2)
    assert a == Location(file="a.bib", line=1) and b.model_fields_set == {"file", "line"}
