"""The Retraction Watch CSV reader against real rows and each quirk of real exports."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from rwgate.contract.models import Problem
from rwgate.sources.snapshot import rwcsv
from rwgate.sources.snapshot.rwcsv import CSVFormatError, RowError, RWRow, iter_rows

RW = Path(__file__).parents[1] / "fixtures" / "rw"


def rows_of(path: Path) -> tuple[list[RWRow], list[Problem]]:
    rows: list[RWRow] = []
    problems: list[Problem] = []
    for item in iter_rows(path):
        if isinstance(item, Problem):
            problems.append(item)
        else:
            rows.append(item)
    return rows, problems


def by_record(rows: list[RWRow]) -> dict[str, RWRow]:
    return {row.record_id: row for row in rows}


def test_current_export_with_21_header_fields_reads_every_row() -> None:
    rows, problems = rows_of(RW / "rw-extract-2025.csv")
    assert problems == []
    assert len(rows) == 39
    wakefield = by_record(rows)["4036"]
    assert wakefield.notice_type == "retraction"
    assert wakefield.doi == "10.1016/s0140-6736(97)11096-0"
    assert wakefield.notice_doi == "10.1016/s0140-6736(10)60175-4"
    assert wakefield.notice_date == dt.date(2010, 2, 6)
    assert wakefield.original_date == dt.date(1998, 2, 28)
    assert wakefield.year == 1998
    assert wakefield.pmid == "9500320"
    assert wakefield.journal == "Lancet"


def test_2023_export_with_20_header_fields_reads_its_row() -> None:
    rows, problems = rows_of(RW / "rw-labs-2023-one-row-20-columns.csv")
    assert problems == []
    [row] = rows
    assert row.record_id == "50438"
    assert row.doi == "10.1155/2021/6907871"
    assert row.notice_date == dt.date(2023, 8, 16)


def test_crlf_line_ends_leave_no_carriage_return_and_lines_are_counted() -> None:
    raw = (RW / "rw-extract-2025.csv").read_bytes()
    assert b"\r\n" in raw
    rows, _ = rows_of(RW / "rw-extract-2025.csv")
    for row in rows:
        assert all("\r" not in (v or "") for v in (row.title, row.journal, *row.reasons))
    assert rows[0].line == 2 and rows[0].record_id == "68371"
    assert rows[-1].line == 40


def test_m_d_yyyy_h_mm_dates() -> None:
    assert rwcsv.parse_date("2/6/2010 0:00") == dt.date(2010, 2, 6)
    assert rwcsv.parse_date("12/15/2021 13:05") == dt.date(2021, 12, 15)
    assert rwcsv.parse_date("3/6/2004") == dt.date(2004, 3, 6)
    assert rwcsv.parse_date("2004-03-06") == dt.date(2004, 3, 6)
    assert rwcsv.parse_date("  ") is None
    for bad in ("31/31/2014 0:00", "2/30/2020 0:00", "yesterday"):
        with pytest.raises(RowError):
            rwcsv.parse_date(bad)


def test_lists_with_trailing_semicolon() -> None:
    assert rwcsv.parse_list("Error in Image;Error in Text;") == ["Error in Image", "Error in Text"]
    rows, _ = rows_of(RW / "rw-extract-2025.csv")
    assert by_record(rows)["38915"].reasons == ["Error in Data", "Error in Text"]


def test_plus_prefix_on_older_reasons_is_stripped() -> None:
    rows, _ = rows_of(RW / "quirk-plus-reasons.csv")
    assert rows[0].reasons == ["Duplication of/in Article", "Euphemisms for Duplication"]
    [labs], _ = rows_of(RW / "rw-labs-2023-one-row-20-columns.csv")
    assert labs.reasons[0] == "Concerns/Issues About Data"
    assert not any(reason.startswith("+") for reason in labs.reasons)


def test_missing_dois_spelled_blank_or_unavailable_become_none() -> None:
    rows, problems = rows_of(RW / "quirk-missing-ids.csv")
    assert problems == []
    found = by_record(rows)
    assert found["25503"].doi is None  # "unavailable"
    assert found["18036"].doi is None  # "Unavailable"
    assert found["10834"].doi is None  # blank
    assert found["25503"].pmid == "32522602"
    assert found["9611"].notice_doi is None
    assert found["9611"].doi == "10.1007/s00222-005-0472-x"


def test_pubmed_id_zero_or_blank_is_none() -> None:
    rows, _ = rows_of(RW / "quirk-missing-ids.csv")
    assert by_record(rows)["10834"].pmid is None  # "0"
    assert by_record(rows)["9611"].pmid is None  # blank
    assert rwcsv.parse_pmid("0") is None
    assert rwcsv.parse_pmid("0009500320") == "9500320"


def test_mixed_case_percent_encoded_and_url_dois_are_canonical() -> None:
    rows, problems = rows_of(RW / "quirk-doi-spellings.csv")
    assert problems == []
    found = by_record(rows)
    assert found["4036"].doi == "10.1016/s0140-6736(97)11096-0"  # %28 %29
    assert found["38915"].doi == "10.1038/nature11367"
    assert found["1966"].doi == "10.1186/2047-783x-18-44"


def test_several_rows_for_one_doi_are_all_kept() -> None:
    rows, _ = rows_of(RW / "rw-extract-2025.csv")
    wakefield = [r for r in rows if r.doi == "10.1016/s0140-6736(97)11096-0"]
    assert sorted(r.notice_type for r in wakefield) == ["correction", "retraction"]


def test_natures_map_to_notice_types() -> None:
    rows, _ = rows_of(RW / "rw-extract-2025.csv")
    kinds = {(r.nature, r.notice_type) for r in rows}
    assert kinds == {
        ("Retraction", "retraction"),
        ("Correction", "correction"),
        ("Expression of concern", "expression_of_concern"),
        # Every real Reinstatement row of the extract carries "Retract and Replace" (records
        # 43262, 39555), and so does one Correction (16620): the version cited was replaced.
        ("Reinstatement", "retract_and_replace"),
        ("Correction", "retract_and_replace"),
    }
    found = by_record(rows)
    assert found["43262"].notice_type == "retract_and_replace"


def test_withdrawal_recorded_as_retraction() -> None:
    from rwgate.sources.snapshot.rwcsv import notice_type_of

    assert notice_type_of("Retraction", ["Withdrawal", "Duplication of Article"]) == "withdrawal"
    assert notice_type_of("Retraction", ["Duplication of Article"]) == "retraction"
    assert notice_type_of("Reinstatement", ["Error in Analyses"]) == "reinstatement"


def test_unknown_natures_are_kept_in_normalised_spelling() -> None:
    rows, _ = rows_of(RW / "quirk-unknown-nature.csv")
    found = by_record(rows)
    assert found["17967"].notice_type == "partial_retraction"
    assert found["12407"].notice_type == "editorial_note"
    assert found["12407"].nature == "Editorial Note"


def test_malformed_rows_are_reported_with_their_line_and_skipped() -> None:
    rows, problems = rows_of(RW / "quirk-malformed.csv")
    assert [r.record_id for r in rows] == ["985", "1134"]
    where = {p.location.line: p.message for p in problems if p.location}
    assert set(where) == {3, 4, 5}
    assert "expected 20 fields, found 12" in where[3]
    assert "RetractionDate" in where[4] and "31/31/2014" in where[4]
    assert "Record ID" in where[5] and "R-1966" in where[5]
    assert all(p.location and p.location.file.endswith("quirk-malformed.csv") for p in problems)


def test_line_numbers_count_multi_line_quoted_fields(tmp_path: Path) -> None:
    source = (RW / "rw-labs-2023-one-row-20-columns.csv").read_text(encoding="utf-8")
    header, row = source.rstrip("\n").split("\n")
    multi = row.replace("See also:", '"See\nalso:').rstrip() + '"'
    path = tmp_path / "multi.csv"
    path.write_text(f"{header}\n{multi}\nnot,a,row\n", encoding="utf-8")
    rows, problems = rows_of(path)
    assert rows[0].record_id == "50438"
    assert [p.location.line for p in problems if p.location] == [4]


def test_a_file_that_is_not_a_retraction_watch_csv_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.csv"
    path.write_text("doi,title\n10.1/x,Something\n", encoding="utf-8")
    with pytest.raises(CSVFormatError, match=r"other\.csv: line 1: .*Record ID"):
        list(iter_rows(path))


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "latin1.csv"
    header = (RW / "rw-labs-2023-one-row-20-columns.csv").read_bytes().split(b"\n")[0]
    path.write_bytes(header + b"\n1,Caf\xe9\n")
    with pytest.raises(CSVFormatError, match="not UTF-8"):
        list(iter_rows(path))


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_text("", encoding="utf-8")
    with pytest.raises(CSVFormatError, match="empty"):
        list(iter_rows(path))
