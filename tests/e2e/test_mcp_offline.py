"""The four search tools offline (issue 46): each answers from a snapshot imported from the
fixtures, through the SDK's own client, saying which source answered and how old its data is;
without a snapshot each fails in one line naming both reasons. No network: the server runs
offline (and the one online case asks the loopback fake, which fails)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_mcp import call, error_text, notices_of, structured

from fakes.crossref import FakeCrossref
from rwgate.sources.snapshot.source import import_files

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rw"
WAKEFIELD = "10.1016/s0140-6736(97)11096-0"
RECORDS = [
    "wakefield-1998-lancet.json",
    "lacour-2014-science.json",
    "lacour-2014-science-retraction-notice.json",
    "withdrawal-cochrane.json",
    "clean-2013-nature.json",
]


@pytest.fixture
def snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fixtures' Retraction Watch extract and Crossref records, as the server's snapshot."""
    path = tmp_path / "data" / "snapshot.sqlite3"
    files = [FIXTURES / "rw-extract-2025.csv", *(FIXTURES / name for name in RECORDS)]
    assert not import_files(path, files).failed
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(path))
    monkeypatch.setenv("RWGATE_CACHE_DIR", str(tmp_path / "cache"))
    return path


def offline(tmp_path: Path, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return structured(call([tmp_path], tool, args, offline=True))


def answered_by_the_snapshot(sources: list[dict[str, Any]], path: Path) -> None:
    crossref, snap = sources
    assert crossref["name"] == "crossref" and "offline" in crossref["note"]
    assert snap["name"] == "snapshot" and snap["path"] == str(path)
    assert snap["as_of"].startswith("2025-11-24")  # the newest notice of the extract


def test_author_from_the_snapshots_names(snapshot: Path, tmp_path: Path) -> None:
    out = offline(tmp_path, "rw_check_author", {"name": "Wakefield, A. J."})
    assert [w["citation"]["doi"] for w in out["flagged"]] == [WAKEFIELD]
    cited = out["flagged"][0]["citation"]
    assert cited["status"] == "retracted" and cited["basis"] == ["snapshot"]
    assert [n[0] for n in notices_of(cited)] == ["correction", "retraction"]
    assert "Andrew J Wakefield" in out["flagged"][0]["authors"]
    assert out["warnings"][0].startswith("Crossref not searched (crossref: offline")
    assert "snapshot" in {s["name"] for s in out["sources"]}
    # Accents fold (the row says Grégory), and another first initial is another person.
    eoc = offline(tmp_path, "rw_check_author", {"name": "Gregory Dubourg"})
    assert [(w["citation"]["doi"], w["citation"]["status"]) for w in eoc["flagged"]] == [
        ("10.1016/j.nmni.2017.10.011", "expression_of_concern")
    ]
    assert offline(tmp_path, "rw_check_author", {"name": "Z. Wakefield"})["matched"] == 0


def test_search_over_the_snapshots_titles(snapshot: Path, tmp_path: Path) -> None:
    out = offline(tmp_path, "rw_search", {"query": "Ileal-lymphoid hyperplasia"})
    assert [n["notice_doi"] for n in out["notices"]] == [
        "10.1016/s0140-6736(10)60175-4",
        "10.1016/s0140-6736(04)15715-2",
    ]
    first = out["notices"][0]["updates"][0]
    assert first["doi"] == WAKEFIELD and first["record_id"] == "4036"
    assert first["source"] == "retraction-watch-csv;crossref:retraction-watch"  # merged
    answered_by_the_snapshot(out["sources"], snapshot)
    lancet = offline(tmp_path, "rw_search", {"journal": "lancet", "year_max": 2005})
    assert [n["notice_doi"] for n in lancet["notices"]] == ["10.1016/s0140-6736(04)15715-2"]
    args = {"update_types": ["expression-of-concern"], "posted_since": "2022-01", "limit": 2}
    eoc = offline(tmp_path, "rw_search", args)
    assert eoc["total"] == 3 and len(eoc["notices"]) == 2
    assert [n["date"] for n in eoc["notices"]] == ["2024-04-24", "2024-04-04"]
    notice = offline(tmp_path, "rw_search", {"query": "editorial retraction"})["notices"][0]
    assert notice["notice_doi"] == "10.1126/science.aac6638"
    assert notice["title"] == "Editorial retraction"  # the notice's own recorded title


def test_recent_retractions_by_notice_date(snapshot: Path, tmp_path: Path) -> None:
    out = offline(tmp_path, "rw_recent_retractions", {"limit": 3})
    assert [n["date"] for n in out["notices"]] == ["2025-11-24", "2025-10-24", "2023-12-06"]
    assert all(u["type"] == "retraction" for n in out["notices"] for u in n["updates"])
    assert out["total"] == 17 and sum(out["by_journal"].values()) == 3  # 16 rows + LaCour
    answered_by_the_snapshot(out["sources"], snapshot)


def test_get_record_by_record_id_and_by_doi(snapshot: Path, tmp_path: Path) -> None:
    work = offline(tmp_path, "rw_get_record", {"record_id": "RW#4036"})
    assert work["found"] and work["doi"] == WAKEFIELD and work["year"] == 1998
    assert [(u["type"], u["record_id"]) for u in work["updated_by"]] == [
        ("correction", "17269"),
        ("retraction", "4036"),
    ]
    assert "AJ Wakefield" in work["authors"]
    assert [s["name"] for s in work["sources"]] == ["snapshot"]
    notice = offline(tmp_path, "rw_get_record", {"doi": "https://doi.org/10.1126/SCIENCE.AAC6638"})
    assert notice["found"] and notice["title"] == "Editorial retraction"
    assert [(u["doi"], u["type"]) for u in notice["update_to"]] == [
        ("10.1126/science.1256151", "retraction")
    ]
    answered_by_the_snapshot(notice["sources"], snapshot)
    # Held by the Retraction Watch rows alone (no Crossref record was imported for it).
    only_rw = offline(tmp_path, "rw_get_record", {"doi": "10.1016/j.neulet.2020.135139"})
    assert only_rw["found"] and only_rw["updated_by"][0]["record_id"] == "25503"


def test_what_neither_holds_fails_in_one_line(snapshot: Path, tmp_path: Path) -> None:
    unknown = error_text(call([tmp_path], "rw_get_record", {"doi": "10.5555/none"}, offline=True))
    assert "crossref: offline" in unknown and "holds no 10.5555/none" in unknown
    missing = error_text(call([tmp_path], "rw_get_record", {"record_id": "99999"}, offline=True))
    assert "holds no record 99999" in missing and "no full Retraction Watch export" in missing


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("rw_check_author", {"name": "A. J. Wakefield"}),
        ("rw_search", {"query": "ileal"}),
        ("rw_recent_retractions", {}),
        ("rw_get_record", {"doi": WAKEFIELD}),
        ("rw_get_record", {"record_id": "4036"}),
    ],
)
def test_without_a_snapshot_each_tool_says_why_in_one_line(
    tool: str, args: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(tmp_path / "none.sqlite3"))
    monkeypatch.setenv("RWGATE_CACHE_DIR", str(tmp_path / "cache"))
    text = error_text(call([tmp_path], tool, args, offline=True))
    assert f"no snapshot to answer from at {tmp_path / 'none.sqlite3'}" in text
    assert "crossref: offline" in text or "Crossref has no Retraction Watch record ids" in text


def test_crossref_down_the_snapshot_answers(
    snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeCrossref(notices=True) as fake:
        monkeypatch.setenv("RWGATE_CROSSREF_URL", fake.url)
        fake.fail_next("400", times=1)
        out = structured(call([tmp_path], "rw_search", {"query": "ileal"}))
    crossref, snap = out["sources"]
    assert "HTTP 400" in crossref["note"] and snap["name"] == "snapshot"
    assert out["notices"][0]["notice_doi"] == "10.1016/s0140-6736(10)60175-4"
