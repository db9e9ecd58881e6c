"""PubMed ids as real bibliographies carry them, judged against real Retraction Watch rows
(issue 14): Wakefield 1998 is PubMed 9500320 in records 4036 and 17269 of the extract."""

from __future__ import annotations

from pathlib import Path

import pytest
from offline_snapshot import RW, offline_settings

from rwgate.core import check
from rwgate.readers.bibliographies.bibtex import parse_bib
from rwgate.readers.bibliographies.csl import parse_csl_json
from rwgate.settings.config import Settings
from rwgate.sources.snapshot.store import import_files

CLEAN_DOI = "10.1038/nature12373"  # not in the extract


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    return offline_settings(tmp_path, monkeypatch)


@pytest.mark.parametrize(
    "bib",
    [
        "@article{w, title={Ileal}, pmid={009500320}}",  # leading zeros
        "@article{w, title={Ileal}, note={PMID: 9500320}}",
        "@article{w, title={Ileal}, extra={PMID: 9500320 PMCID: PMC0}}",
        "@article{w, title={Ileal}, eprint={9500320}, eprinttype={pubmed}}",
    ],
)
def test_pmid_spellings_find_the_retraction(offline, bib: str) -> None:  # type: ignore[no-untyped-def]
    (ref,) = parse_bib(bib, "t.bib").references
    assert ref.pmid == "9500320"
    (citation,) = check([ref], offline).citations
    assert citation.status == "retracted"
    assert citation.doi == "10.1016/s0140-6736(97)11096-0"  # the paper's DOI, from the row


def test_zotero_csl_note_carries_the_pmid(offline) -> None:  # type: ignore[no-untyped-def]
    found = parse_csl_json('[{"id": "w", "title": "Ileal", "note": "PMID: 9500320"}]', "t.json")
    (citation,) = check(found.references, offline).citations
    assert citation.status == "retracted"


def test_both_identifiers_are_checked_and_the_most_severe_wins(offline) -> None:  # type: ignore[no-untyped-def]
    bib = f"@article{{w, title={{Ileal}}, doi={{{CLEAN_DOI}}}, pmid={{9500320}}}}"
    (citation,) = check(parse_bib(bib, "t.bib").references, offline).citations
    assert citation.status == "retracted"  # a clean DOI does not hide a retracted PMID


def test_an_unlisted_pmid_is_clean_as_of_the_registry(offline) -> None:  # type: ignore[no-untyped-def]
    (citation,) = check(parse_bib("@article{x, pmid={1}}", "t.bib").references, offline).citations
    assert citation.status == "clean" and citation.basis == ["snapshot"]
    assert "not listed in the Retraction Watch snapshot" in (citation.reason or "")


def test_a_notices_own_pmid_is_a_cited_notice(offline) -> None:  # type: ignore[no-untyped-def]
    """PubMed 20137807 is The Lancet's 2010 retraction notice of Wakefield 1998 (record 4036's
    RetractionPubMedID): citing the notice is citing the retraction, not a retracted work."""
    (citation,) = check(
        parse_bib("@article{n, pmid={20137807}}", "t.bib").references, offline
    ).citations
    assert citation.status == "clean" and citation.basis == ["snapshot"]
    assert citation.reason == (
        "PMID 20137807: this record is itself a notice about 10.1016/s0140-6736(97)11096-0"
    )


def test_a_pmid_that_is_both_a_work_and_its_notice_is_judged_as_the_work(offline) -> None:  # type: ignore[no-untyped-def]
    """Record 12407 files a correction under the paper's own PubMed id (24098324 both times)."""
    (citation,) = check(
        parse_bib("@article{p, pmid={24098324}}", "t.bib").references, offline
    ).citations
    assert citation.status == "corrected"


def test_a_schema_1_snapshot_is_read_and_upgraded_by_the_next_import(tmp_path: Path) -> None:
    import sqlite3

    from rwgate.sources.snapshot.source import Snapshot

    snapshot = tmp_path / "s.sqlite3"
    export = RW / "rw-extract-2025.csv"
    import_files(snapshot, [export], allow_shrink=True)
    db = sqlite3.connect(snapshot)  # what rwgate 0.x wrote: no notice_pmid column
    db.execute("DROP INDEX notices_notice_pmid")
    db.execute("ALTER TABLE notices DROP COLUMN notice_pmid")
    db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    with Snapshot(snapshot) as old:
        assert "written by an older rwgate (schema 1)" in old.warnings()[-1]
        assert old.query_pmids(["20137807"])["20137807"].outcome == "not_found"
        assert old.query_pmids(["9500320"])["9500320"].outcome == "found"
    result = import_files(snapshot, [export], allow_shrink=True)
    assert result.rows > 0 and not result.sources[0].unchanged  # read again to fill the column
    with Snapshot(snapshot) as new:
        assert new.schema_version == 3  # upgraded to the current schema
        assert new.query_pmids(["20137807"])["20137807"].notice_for
