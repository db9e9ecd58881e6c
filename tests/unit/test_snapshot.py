"""The SQLite snapshot: import (CSV and Crossref JSON), atomicity, idempotency and look-ups."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from rwgate.contract import trusted as trusted_module
from rwgate.contract.evidence import status_from_notices
from rwgate.sources.snapshot import rwcsv
from rwgate.sources.snapshot import store as snapshot_store
from rwgate.sources.snapshot.source import (
    Snapshot,
    SnapshotError,
    default_snapshot_path,
    import_files,
    snapshot_status,
)

RW = Path(__file__).parents[1] / "fixtures" / "rw"
REAL = [RW / "rw-extract-2025.csv", RW / "rw-labs-2023-one-row-20-columns.csv"]
WAKEFIELD = "10.1016/s0140-6736(97)11096-0"


def dump(db: Path) -> list[tuple[object, ...]]:
    """The snapshot's content, without import times, for comparisons."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT * FROM notices ORDER BY key").fetchall()
        rows += conn.execute("SELECT * FROM works ORDER BY doi").fetchall()
        rows += conn.execute("SELECT source, sha256, rows FROM provenance ORDER BY id").fetchall()
        return rows
    finally:
        conn.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "snap" / "snapshot.sqlite3"
    result = import_files(path, REAL)
    assert result.failed == [] and result.rows == 40
    return path


def lookup(db: Path, doi: str):  # type: ignore[no-untyped-def]
    with Snapshot(db) as snap:
        return snap.query_all([doi])[doi]


def test_both_real_exports_import(db: Path) -> None:
    with Snapshot(db) as snap:
        answers = snap.query_all(["10.1155/2021/6907871", "10.1063/5.0182988", WAKEFIELD])
    assert all(a.outcome == "found" for a in answers.values())
    assert answers["10.1155/2021/6907871"].notices[0].record_id == "50438"


def test_found_doi_carries_notices_with_reasons_and_record_ids(db: Path) -> None:
    found = lookup(db, WAKEFIELD)
    assert found.outcome == "found" and found.source == "snapshot"
    assert [(n.type, n.doi, n.date, n.record_id, n.label) for n in found.notices] == [
        ("correction", "10.1016/s0140-6736(04)15715-2", dt.date(2004, 3, 6), "17269", "Correction"),
        ("retraction", "10.1016/s0140-6736(10)60175-4", dt.date(2010, 2, 6), "4036", "Retraction"),
    ]
    assert all(n.source == ["retraction-watch-csv"] for n in found.notices)
    assert "Falsification/Fabrication of Data" in found.notices[1].reasons
    assert (found.journal, found.year) == ("Lancet", 1998)
    assert found.title and found.title.startswith("Ileal-lymphoid-nodular")
    assert found.as_of == dt.datetime(2025, 11, 24, tzinfo=dt.UTC)


def test_unlisted_doi_is_not_found(db: Path) -> None:
    answer = lookup(db, "10.1038/nature12373")
    assert answer.outcome == "not_found" and answer.notices == []


def test_mixed_case_query_matches_and_keeps_the_callers_key(db: Path) -> None:
    with Snapshot(db) as snap:
        answers = snap.query_all(["10.1016/S0140-6736(97)11096-0"])
    assert answers["10.1016/S0140-6736(97)11096-0"].outcome == "found"


def test_percent_encoded_and_url_dois_in_the_csv_are_found(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    import_files(path, [RW / "quirk-doi-spellings.csv"])
    with Snapshot(path) as snap:
        answers = snap.query_all([WAKEFIELD, "10.1038/nature11367", "10.1186/2047-783x-18-44"])
    assert [a.outcome for a in answers.values()] == ["found"] * 3


def test_notice_doi_is_known_as_a_notice_not_as_a_retracted_work(db: Path) -> None:
    answer = lookup(db, "10.1016/s0140-6736(10)60175-4")
    assert answer.outcome == "found"
    assert answer.notices == [] and answer.notice_for == [WAKEFIELD]


def test_rows_without_doi_are_found_by_pubmed_id(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    import_files(path, [RW / "quirk-missing-ids.csv"])
    with Snapshot(path) as snap:
        by_pmid = snap.query_pmids(["32522602", "123"])
        by_doi = snap.query_all(["10.1016/j.neulet.2020.135139"])
    assert by_pmid["32522602"].outcome == "found" and by_pmid["32522602"].doi == ""
    assert by_pmid["32522602"].notices[0].record_id == "25503"
    assert by_pmid["123"].outcome == "not_found"
    assert by_doi["10.1016/j.neulet.2020.135139"].outcome == "not_found"


def test_pubmed_id_lookup_gives_the_original_papers_doi(db: Path) -> None:
    with Snapshot(db) as snap:
        answer = snap.query_pmids(["9500320"])["9500320"]
    assert answer.doi == WAKEFIELD
    assert {n.record_id for n in answer.notices} == {"4036", "17269"}


def test_retract_and_replace_row_is_imported(db: Path) -> None:
    # Record 43262: nature Reinstatement, Reason "Retract and Replace" (real row).
    answer = lookup(db, "10.1001/jama.2021.16685")
    assert [n.type for n in answer.notices] == ["retract_and_replace"]
    assert answer.notices[0].label == "Reinstatement"
    assert status_from_notices(answer.notices) == "replaced"


def test_retraction_then_retract_and_replace_gives_both_notices_in_order(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    import_files(path, [RW / "retraction-then-reinstatement.csv"])
    answer = lookup(path, "10.1001/jama.2021.16685")
    assert [n.type for n in answer.notices] == ["retraction", "retract_and_replace"]
    # The 2022 retraction is the first half of the retract-and-replace of 2023: replaced.
    assert status_from_notices(answer.notices) == "replaced"


def test_expression_of_concern_among_three_corrections(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    import_files(path, [RW / "eoc-over-three-corrections.csv"])
    answer = lookup(path, "10.1016/j.jaut.2016.05.012")
    kinds = [n.type for n in answer.notices]
    assert sorted(kinds) == ["correction"] * 3 + ["expression_of_concern"]
    assert status_from_notices(answer.notices) == "expression_of_concern"


def test_unknown_nature_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    import_files(path, [RW / "quirk-unknown-nature.csv"])
    answer = lookup(path, "10.1371/journal.pone.0072008")
    assert [(n.type, n.label) for n in answer.notices] == [("editorial_note", "Editorial Note")]


def test_malformed_rows_are_skipped_and_reported_the_rest_imports(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    result = import_files(path, [RW / "quirk-malformed.csv"])
    assert result.rows == 2
    assert sorted(p.location.line for p in result.skipped if p.location) == [3, 4, 5]
    assert result.sources[0].skipped == 3
    assert lookup(path, "10.1001/archdermatol.2012.418").outcome == "found"


def test_crossref_json_bodies_import(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    names = ["wakefield-1998-lancet", "clean-2013-nature", "lacour-2014-science-retraction-notice"]
    result = import_files(path, [RW / f"{n}.json" for n in [*names, "withdrawal-cochrane"]])
    assert result.failed == [] and result.rows == 4
    with Snapshot(path) as snap:
        got = snap.query_all([WAKEFIELD, "10.1038/nature12373", "10.1126/science.aac6638"])
        withdrawn = snap.query_all(["10.1002/14651858.cd009522"])["10.1002/14651858.cd009522"]
    assert [n.source for n in got[WAKEFIELD].notices] == [["crossref:retraction-watch"]] * 2
    assert [n.record_id for n in got[WAKEFIELD].notices] == ["17269", "4036"]
    assert got["10.1038/nature12373"].outcome == "found"
    assert got["10.1038/nature12373"].notices == []
    assert got["10.1126/science.aac6638"].notice_for == ["10.1126/science.1256151"]
    assert [n.type for n in withdrawn.notices] == ["withdrawal"]
    assert withdrawn.notices[0].source == ["crossref:publisher"]


def test_crossref_work_list_imports_every_item(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    result = import_files(path, [RW / "worklist-filter-updates.json"])
    assert result.rows == 5
    answer = lookup(path, "10.1016/s0140-6736(20)31249-6")
    assert answer.outcome == "found" and answer.notice_for == ["10.1016/s0140-6736(20)31180-6"]


def test_csv_and_crossref_notices_merge_with_both_sources(db: Path) -> None:
    import_files(db, [RW / "wakefield-1998-lancet.json"])
    answer = lookup(db, WAKEFIELD)
    assert len(answer.notices) == 2
    for notice in answer.notices:
        assert notice.source == ["retraction-watch-csv", "crossref:retraction-watch"]
        assert notice.reasons  # only the CSV knows them
    assert [n.record_id for n in answer.notices] == ["17269", "4036"]


def test_same_file_twice_is_a_no_op_that_says_so(db: Path, tmp_path: Path) -> None:
    before = dump(db)
    copy = tmp_path / "renamed.csv"
    shutil.copyfile(REAL[0], copy)
    again = import_files(db, [REAL[0], copy])
    assert again.rows == 0
    assert [s.unchanged for s in again.sources] == [True, True]
    assert dump(db) == before


def test_a_changed_export_replaces_records_by_id(db: Path, tmp_path: Path) -> None:
    text = REAL[0].read_text(encoding="utf-8").replace("Error in Methods;", "Error in Methods;X;")
    changed = tmp_path / "newer.csv"
    changed.write_text(text, encoding="utf-8", newline="")
    result = import_files(db, [changed])
    assert result.rows == 39
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM notices").fetchone()[0] == 40
    conn.close()
    assert lookup(db, "10.1001/archdermatol.2012.418").notices[0].reasons == [
        "Error in Methods",
        "X",
    ]


def test_a_newer_crossref_record_replaces_the_older_ones_notices(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    import_files(path, [RW / "wakefield-1998-lancet.json"])
    body = json.loads((RW / "wakefield-1998-lancet.json").read_text(encoding="utf-8"))
    body["message"]["updated-by"] = body["message"]["updated-by"][1:]
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(body), encoding="utf-8")
    import_files(path, [newer])
    assert [n.record_id for n in lookup(path, WAKEFIELD).notices] == ["4036"]


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_crash_mid_import_leaves_the_old_snapshot_whole(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = dump(db)
    real_build = rwcsv._build_row
    calls = {"n": 0}

    def crash_in_second_file(line: int, cells: dict[str, str]) -> rwcsv.RWRow:
        # The first file (4 rows) is already written to the temporary database by then.
        calls["n"] += 1
        if calls["n"] == 6:
            raise RuntimeError("simulated crash")
        return real_build(line, cells)

    monkeypatch.setattr(rwcsv, "_build_row", crash_in_second_file)
    with pytest.raises(RuntimeError, match="simulated crash"):
        import_files(
            db, [RW / "eoc-over-three-corrections.csv", RW / "retraction-then-reinstatement.csv"]
        )
    assert dump(db) == before
    assert lookup(db, WAKEFIELD).outcome == "found"
    assert _leftovers(db.parent) == []


def test_failed_replace_leaves_the_old_snapshot_whole(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = dump(db)

    def refuse(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(snapshot_store.os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        import_files(db, [RW / "wakefield-1998-lancet.json"])
    monkeypatch.undo()
    assert dump(db) == before
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert _leftovers(db.parent) == []


def test_unreadable_file_is_reported_and_the_others_import(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    result = import_files(path, [tmp_path / "missing.csv", REAL[1]])
    assert result.rows == 1
    assert len(result.failed) == 1 and "missing.csv" in result.failed[0].message


def test_a_file_failing_half_way_is_rolled_back_on_its_own(tmp_path: Path) -> None:
    header, row = REAL[1].read_text(encoding="utf-8").rstrip("\n").split("\n")
    rows = [row.replace("50438", str(100000 + i), 1) for i in range(3000)]
    broken = tmp_path / "broken.csv"
    broken.write_bytes(("\n".join([header, *rows]) + "\n").encode() + b"1,Caf\xe9\n")
    path = tmp_path / "s.sqlite3"
    result = import_files(path, [broken, RW / "quirk-plus-reasons.csv"])
    assert len(result.failed) == 1 and "not UTF-8" in result.failed[0].message
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM notices").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM provenance").fetchone()[0] == 1
    conn.close()


def test_many_dois_in_one_call_beyond_sqlite_variable_limits(db: Path) -> None:
    dois = [f"10.9999/none.{i}" for i in range(40000)] + [WAKEFIELD]
    with Snapshot(db) as snap:
        answers = snap.query_all(dois)
        seen: list[tuple[int, int]] = []
        snap.query_all(dois[:10], progress=lambda done, total: seen.append((done, total)))
    assert len(answers) == 40001
    assert sum(a.outcome == "found" for a in answers.values()) == 1
    assert seen[-1] == (10, 10)


def test_info_and_status_name_the_snapshot_and_its_age(db: Path) -> None:
    with Snapshot(db) as snap:
        info = snap.info()
        status = snap.status(now=dt.datetime(2025, 12, 24, tzinfo=dt.UTC))
    assert info.name == "snapshot" and info.path == str(db)
    assert info.as_of == dt.datetime(2025, 11, 24, tzinfo=dt.UTC)
    assert info.note and "40 notices" in info.note
    assert status.notices == 40 and status.age_days == 30
    assert status.newest_notice == dt.date(2025, 11, 24)
    assert [(p.source, p.rows) for p in status.provenance] == [
        (str(f), n) for f, n in zip(REAL, [39, 1], strict=True)
    ]
    assert status.provenance[1].export_date == dt.date(2023, 8, 16)
    assert len(status.provenance[0].sha256) == 64


def test_status_of_a_missing_snapshot(tmp_path: Path) -> None:
    status = snapshot_status(tmp_path / "none.sqlite3")
    assert status.exists is False and status.notices == 0


def test_missing_or_foreign_files_are_refused_with_one_line(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="no snapshot at"):
        Snapshot(tmp_path / "none.sqlite3")
    text = tmp_path / "notes.txt"
    text.write_text("hello, this is not SQLite\n" * 100, encoding="utf-8")
    with pytest.raises(SnapshotError, match="not an rwgate snapshot"):
        Snapshot(text)
    with pytest.raises(SnapshotError, match="not an rwgate snapshot"):
        import_files(text, REAL)
    assert text.read_text(encoding="utf-8").startswith("hello")


def test_a_snapshot_from_a_newer_rwgate_is_refused(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(SnapshotError, match="schema 99 is newer"):
        Snapshot(db)


def test_default_path_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(tmp_path / "mine.sqlite3"))
    assert default_snapshot_path() == tmp_path / "mine.sqlite3"
    monkeypatch.delenv("RWGATE_SNAPSHOT")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    if os.name == "posix":
        assert default_snapshot_path() == tmp_path / "xdg" / "rwgate" / "snapshot.sqlite3"


def test_without_json1_the_batch_is_sent_in_chunks_with_the_same_answers(db: Path) -> None:
    dois = [f"10.9999/none.{i}" for i in range(1200)] + [WAKEFIELD, "10.1001/jama.2021.16685"]
    with Snapshot(db) as snap:
        assert snap.json1 is True
        fast = snap.query_all(dois)
        snap.json1 = False
        chunked = snap.query_all(dois)
        pmids = snap.query_pmids(["9500320"])
    assert chunked == fast
    assert chunked[WAKEFIELD].outcome == "found" and len(chunked[WAKEFIELD].notices) == 2
    assert pmids["9500320"].doi == WAKEFIELD


def test_lookups_are_valid_models_equal_to_validated_ones(db: Path) -> None:
    import_files(db, [RW / "wakefield-1998-lancet.json"])
    with Snapshot(db) as snap:
        answers = snap.query_all([WAKEFIELD, "10.9999/absent", "10.1016/s0140-6736(10)60175-4"])
    for answer in answers.values():
        again = type(answer).model_validate_json(answer.model_dump_json())
        assert again == answer
        assert again.model_dump() == answer.model_dump()
    copy = answers[WAKEFIELD].model_copy(update={"notices": []})
    assert copy.notices == [] and len(answers[WAKEFIELD].notices) == 2


def test_concurrent_imports_into_one_snapshot_both_land(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    files = [RW / "rw-extract-2025.csv", RW / "eoc-over-three-corrections.csv"]
    threads = [threading.Thread(target=import_files, args=(path, [f])) for f in files]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with Snapshot(path) as snap:
        assert {p.source for p in snap.provenance()} == {str(f) for f in files}
        assert snap.status().notices == 39 + 3  # record 29299 is in both files


def test_an_empty_batch_and_odd_strings_get_answers(db: Path) -> None:
    with Snapshot(db) as snap:
        assert snap.query_all([]) == {}
        assert snap.query_pmids([]) == {}
        odd = snap.query_all(["not a doi", " https://doi.org/10.1016/S0140-6736(97)11096-0 "])
    assert odd["not a doi"].outcome == "not_found"
    assert odd[" https://doi.org/10.1016/S0140-6736(97)11096-0 "].doi == WAKEFIELD


def test_fast_and_validated_construction_give_equal_answers(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_files(db, [RW / "wakefield-1998-lancet.json", RW / "quirk-missing-ids.csv"])
    dois = [WAKEFIELD, "10.9999/absent", "10.1016/s0140-6736(10)60175-4"]
    with Snapshot(db) as snap:
        fast = snap.query_all(dois), snap.query_pmids(["9500320", "32522602"])
        monkeypatch.setattr(trusted_module, "ENABLED", False)
        checked = snap.query_all(dois), snap.query_pmids(["9500320", "32522602"])
    assert fast == checked


def test_invisible_characters_and_non_ascii_capitals_in_a_query_still_match(db: Path) -> None:
    # Such DOIs look canonical to the fast path; had it kept them, they would miss their rows
    # and an offline check would call the work clean.
    odd = [WAKEFIELD + "\u200b", WAKEFIELD.replace("6736", "67\u00ad36")]
    with Snapshot(db) as snap:
        answers = snap.query_all(odd)
    assert [(a.doi, a.outcome) for a in answers.values()] == [(WAKEFIELD, "found")] * 2


def test_only_a_snapshot_with_retraction_watch_rows_is_a_registry(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    import_files(path, [RW / "wakefield-1998-lancet.json", RW / "clean-2013-nature.json"])
    with Snapshot(path) as snap:
        assert snap.is_registry is False  # recorded Crossref bodies say nothing by omission
    header, row = REAL[1].read_text(encoding="utf-8").rstrip("\n").split("\n")
    all_bad = tmp_path / "all-rows-malformed.csv"
    all_bad.write_text(f"{header}\n{row.replace('50438', 'x', 1)}\n", encoding="utf-8")
    result = import_files(path, [all_bad])
    assert result.failed == [] and len(result.skipped) == 1
    with Snapshot(path) as snap:
        assert snap.is_registry is False
    import_files(path, [REAL[1]])
    with Snapshot(path) as snap:
        assert snap.is_registry is False  # one row: an extract, not the database
    import_files(path, [RW / "rw-extract-2025.csv"], allow_shrink=True)
    with Snapshot(path) as snap:
        assert snap.is_registry is True  # whole, and the floor waived


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_import_gives_the_snapshot_the_usual_mode_and_keeps_a_chosen_one(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    umask = os.umask(0o022)
    try:
        import_files(path, [REAL[1]])
        assert path.stat().st_mode & 0o777 == 0o644  # not mkstemp's 0600
        path.chmod(0o640)
        import_files(path, [RW / "wakefield-1998-lancet.json"])
    finally:
        os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o640


def test_an_import_where_every_file_fails_leaves_everything_as_it_was(
    db: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.csv"
    broken.write_text("not,a,retraction,watch,file\n", encoding="utf-8")
    fresh = tmp_path / "new" / "s.sqlite3"
    assert len(import_files(fresh, [broken]).failed) == 1
    assert not fresh.exists()  # no empty snapshot appears
    before = db.read_bytes()
    assert len(import_files(db, [broken, tmp_path / "missing.csv"]).failed) == 2
    assert db.read_bytes() == before  # not even the "updated" stamp moved
    assert _leftovers(db.parent) == []


def test_malformed_crossref_bodies_are_reported_not_raised(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    good = json.loads((RW / "clean-2013-nature.json").read_text(encoding="utf-8"))["message"]
    records = tmp_path / "records.json"
    records.write_text(
        json.dumps([{"DOI": 5}, {"DOI": "10.1000/x", "updated-by": [{"DOI": 7}]}, good]),
        encoding="utf-8",
    )
    items = tmp_path / "items.json"
    items.write_text('{"message-type": "work-list", "message": {"items": 5}}', encoding="utf-8")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    result = import_files(path, [records, items, deep])
    assert result.rows == 1
    assert [p.message.split(":")[0] for p in result.skipped] == ["record 1", "record 2"]
    assert all("malformed Crossref work" in p.message for p in result.skipped)
    assert [p.message for p in result.failed] == [
        f"{items}: not a Crossref /works response (items is not a list)",
        f"{deep}: JSON nested too deeply",
    ]


def test_sici_doi_matches_the_exports_spelling(tmp_path: Path) -> None:
    """The export lost the '<' and '>' of every SICI DOI (issue 14 measured all 24 of the
    2026-05-07 export); the DOI as correctly written must still match its row. The row is the real
    Wakefield row 4036 with the original DOI replaced by the export's spelling of a SICI DOI."""
    import csv
    import io

    correct = "10.1002/(SICI)1521-3951(199905)213:1<153::AID-PSSB153>3.0.CO;2-1"
    exported = correct.replace("<", "").replace(">", "")
    source = (RW / "rw-extract-2025.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(source)))
    header, row = rows[0], next(r for r in rows[1:] if r[0] == "4036")
    row[header.index("OriginalPaperDOI")] = exported
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows([header, row])
    path = tmp_path / "sici.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    db = tmp_path / "s.sqlite3"
    import_files(db, [path])
    answer = lookup(db, correct)
    assert answer.outcome == "found" and status_from_notices(answer.notices) == "retracted"
    assert lookup(db, exported).outcome == "found"


def _csv_without(tmp_path: Path, record: str) -> Path:
    """The real 39-row extract with one record removed (as if deleted upstream)."""
    lines = (RW / "rw-extract-2025.csv").read_bytes().decode("utf-8").splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith(f"{record},")]
    assert len(kept) == len(lines) - 1
    path = tmp_path / f"without-{record}.csv"
    path.write_bytes("".join(kept).encode("utf-8"))
    return path


def test_a_full_export_replaces_the_rows_and_deleted_records_disappear(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    import_files(path, [RW / "rw-extract-2025.csv"], allow_shrink=True)
    assert lookup(path, "10.1001/jama.2021.16685").outcome == "found"  # record 43262
    import_files(path, [_csv_without(tmp_path, "43262")], allow_shrink=True)
    assert lookup(path, "10.1001/jama.2021.16685").outcome == "not_found"
    assert lookup(path, WAKEFIELD).outcome == "found"


def test_a_partial_file_never_becomes_the_registry(tmp_path: Path) -> None:
    """Under the floor (30,000 rows for a first import) a whole CSV is an extract: its notices
    count, but a work it does not list is never clean from it."""
    path = tmp_path / "s.sqlite3"
    result = import_files(path, [RW / "rw-extract-2025.csv"])
    assert [s.kind for s in result.sources] == ["retraction-watch-csv"]
    with Snapshot(path) as snap:
        assert snap.is_registry is False
        assert snap.query_all([WAKEFIELD])[WAKEFIELD].outcome == "found"


def test_a_future_dated_row_does_not_make_the_data_fresh(tmp_path: Path) -> None:
    text = (RW / "rw-extract-2025.csv").read_bytes().decode("utf-8")
    assert "2/6/2010 0:00" in text  # Wakefield's retraction (record 4036)
    future = tmp_path / "future.csv"
    future.write_bytes(text.replace("2/6/2010 0:00", "1/1/2099 0:00").encode("utf-8"))
    path = tmp_path / "s.sqlite3"
    import_files(path, [future], allow_shrink=True)
    with Snapshot(path) as snap:
        as_of = snap.status().as_of
    assert as_of is not None and as_of.year < 2099


def test_a_killed_imports_temporary_copy_is_removed_by_the_next(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    leftover = tmp_path / ".s.sqlite3.0123456789ab.tmp"
    leftover.write_bytes(b"a copy from an import that was killed")
    import_files(path, [RW / "rw-extract-2025.csv"])
    assert not leftover.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.sqlite3", "s.sqlite3.lock"]


def test_only_the_exports_own_header_makes_a_full_export(tmp_path: Path) -> None:
    """A CSV with the needed columns but not the export's header (a spreadsheet re-save that
    dropped columns) is an extract, even with the floor waived."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO((RW / "rw-extract-2025.csv").read_text(encoding="utf-8"))))
    keep = [rows[0].index(c) for c in ("Record ID", "RetractionNature", "OriginalPaperDOI",
                                       "RetractionDate", "Reason")]  # fmt: skip
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows([[r[i] for i in keep] for r in rows if r])
    trimmed = tmp_path / "trimmed.csv"
    trimmed.write_text(out.getvalue(), encoding="utf-8")
    path = tmp_path / "s.sqlite3"
    result = import_files(path, [trimmed], allow_shrink=True)
    assert [s.kind for s in result.sources] == ["retraction-watch-csv"]  # an extract
    with Snapshot(path) as snap:
        assert snap.is_registry is False
    for variant in ("rw-extract-2025.csv", "rw-labs-2023-one-row-20-columns.csv"):
        from rwgate.sources.snapshot.rwcsv import has_export_header

        assert has_export_header(RW / variant), variant  # 21- and 20-field headers


def test_a_re_import_in_place_gives_a_new_import_id_at_the_same_size(db: Path) -> None:
    """The memos know the snapshot by the import id in its header, never by size or mtime: a
    re-import adding one retraction keeps the file's size (4 KiB pages) and changes the id."""
    from rwgate.settings import recorded

    before, size = recorded.snapshot_id(db), db.stat().st_size
    with Snapshot(db) as snap:
        assert snap.import_id == before and before and len(before) == 16
    import csv

    with (RW / "quirk-unknown-nature.csv").open(encoding="utf-8", newline="") as handle:
        header, row = list(csv.reader(handle))[:2]
    one = db.parent / "one-more.csv"
    with one.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([header, row])
    result = import_files(db, [one])
    assert result.rows == 1 and result.failed == []
    after = recorded.snapshot_id(db)
    assert db.stat().st_size == size
    assert after and after != before
    with Snapshot(db) as snap:
        assert snap.import_id == after
    assert import_files(db, [one]).rows == 0  # a no-op keeps it
    assert recorded.snapshot_id(db) == after


def test_opening_the_snapshot_records_its_identity(db: Path, tmp_path: Path) -> None:
    from rwgate.settings import recorded

    with recorded.recording() as rec:
        Snapshot(db).close()
    assert rec.snapshot == (str(db), recorded.snapshot_id(db))
    with recorded.recording() as rec, pytest.raises(SnapshotError):
        Snapshot(tmp_path / "none.sqlite3")
    assert rec.snapshot == (str(tmp_path / "none.sqlite3"), None)
