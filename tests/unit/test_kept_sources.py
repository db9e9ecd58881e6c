"""kit.KeptSources: the language server's sources, open across passes (issue 50), judge as a
fresh check does, and see a snapshot replaced on disk at the next pass."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rwgate.contract.models import Reference
from rwgate.frontends.kit import KeptSources, judge
from rwgate.settings.config import load_settings
from rwgate.sources.snapshot.store import import_files

RW = Path(__file__).resolve().parents[1] / "fixtures" / "rw"
WAKE = Reference(key="wake", doi="10.1016/s0140-6736(97)11096-0")


def _snapshot(path: Path, csv: str) -> None:
    import_files(path, [RW / csv], allow_shrink=True)


def test_a_replaced_snapshot_is_seen_and_an_unchanged_one_stays_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = tmp_path / "s.sqlite3"
    _snapshot(snapshot, "retraction-then-reinstatement.csv")  # no Wakefield in it
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(snapshot))
    settings = load_settings(tmp_path, overrides={"offline": True, "snapshot": snapshot})
    kept = KeptSources()
    try:
        first = kept.judge([WAKE], settings)
        opened = kept._sources
        again = kept.judge([WAKE], settings)
        assert kept._sources is opened  # nothing changed: the same open sources
        assert [c.status for c in again.citations] == [c.status for c in first.citations]
        assert first.citations[0].status != "retracted"
        # `rwgate data update` writes a new file and renames it over the old one.
        fresh = tmp_path / "new.sqlite3"
        _snapshot(fresh, "rw-extract-2025.csv")
        os.replace(fresh, snapshot)
        after = kept.judge([WAKE], settings)
        assert after.citations[0].status == "retracted"
        assert kept._sources is not opened
        assert after.citations[0].status == judge([WAKE], settings).citations[0].status
    finally:
        kept.close()
    assert kept._sources is None


def test_each_pass_says_only_its_own_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A look-up that failed in one pass does not make the next pass incomplete."""
    snapshot = tmp_path / "s.sqlite3"
    _snapshot(snapshot, "rw-extract-2025.csv")
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(snapshot))
    settings = load_settings(tmp_path, overrides={"offline": True, "snapshot": snapshot})
    kept = KeptSources()
    try:
        kept.judge([WAKE], settings)
        assert kept._sources is not None
        kept._sources.any_error = True  # as a failed look-up leaves it
        assert kept.judge([], settings).complete  # nothing asked, nothing failed
    finally:
        kept.close()


def test_an_unchanged_document_gets_its_last_verdict_until_something_it_is_judged_from_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Most keystrokes cite no other key: the verdict is not judged again; a saved .bib, other
    keys, or forget() (a network pass filled the cache) are judged afresh."""
    from rwgate.contract.models import CitedDocument

    snapshot = tmp_path / "s.sqlite3"
    _snapshot(snapshot, "rw-extract-2025.csv")
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(snapshot))
    settings = load_settings(tmp_path, overrides={"offline": True, "snapshot": snapshot})
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{wake, doi={10.5555/not-wakefield}}\n")
    doc = CitedDocument(path=str(tmp_path / "paper.md"), keys=["wake"], bibliographies=[str(bib)])
    kept = KeptSources()
    try:
        first = kept.judge_document(doc, settings)
        assert kept.judge_document(doc.model_copy(), settings) is first
        assert first[0].citations[0].status != "retracted"
        bib.write_text("@article{wake,\n  doi={10.1016/S0140-6736(97)11096-0}}\n")  # saved
        saved = kept.judge_document(doc, settings)
        assert saved is not first and saved[0].citations[0].status == "retracted"
        assert kept.judge_document(doc, settings) is saved
        kept.forget()
        assert kept.judge_document(doc, settings) is not saved
        other = doc.model_copy(update={"keys": ["wake", "ghost"]})
        assert [c.key for c in kept.judge_document(other, settings)[0].citations] == [
            "wake",
            "ghost",
        ]
    finally:
        kept.close()
