"""``rwgate data import|update|status`` end to end, ``update`` against a real local HTTP server."""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import io
import json
import socket
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from fakes.rwexport import CSVServer
from rwgate.frontends.cli import data as datacmd
from rwgate.sources.snapshot.download import TerminalProgress, part_paths
from rwgate.sources.snapshot.source import Snapshot

RW = Path(__file__).parents[1] / "fixtures" / "rw"
EXTRACT = RW / "rw-extract-2025.csv"
WAKEFIELD = "10.1016/s0140-6736(97)11096-0"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = datacmd.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def server() -> Iterator[CSVServer]:
    srv = CSVServer(EXTRACT.read_bytes())
    yield srv
    srv.close()


def test_import_prints_rows_and_skipped_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = tmp_path / "s.sqlite3"
    code, out, err = run(
        capsys,
        "data",
        "import",
        str(EXTRACT),
        str(RW / "quirk-malformed.csv"),
        "--snapshot",
        str(snap),
    )
    assert code == 0 and err == ""
    assert f"imported 39 record(s) from {EXTRACT}" in out
    assert "imported 2 record(s)" in out and "3 skipped" in out
    assert f"skipped: {RW / 'quirk-malformed.csv'}:3: expected 20 fields, found 12" in out
    assert f"{RW / 'quirk-malformed.csv'}:5: bad Record ID" in out

    code, out, _ = run(capsys, "data", "import", str(EXTRACT), "--snapshot", str(snap))
    assert code == 0 and "unchanged:" in out and "already imported" in out


def test_import_of_a_missing_file_exits_2_naming_it_and_imports_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    snap = tmp_path / "env.sqlite3"
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(snap))
    missing = tmp_path / "nope.csv"
    code, out, err = run(capsys, "data", "import", str(missing), str(EXTRACT))
    assert code == 2
    assert err.strip() == f"rwgate: error: {missing}: No such file or directory"
    assert "imported 39 record(s)" in out
    with Snapshot(snap) as s:
        assert s.query_all([WAKEFIELD])[WAKEFIELD].outcome == "found"


def test_status_without_a_snapshot_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "data", "status", "--snapshot", str(tmp_path / "none.sqlite3"))
    assert code == 0 and out.startswith("no snapshot at ")
    code, out, _ = run(capsys, "data", "status", "--json", "--snapshot", str(tmp_path / "x"))
    assert code == 0 and json.loads(out)["exists"] is False


def test_status_reports_provenance_and_warns_when_old(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = tmp_path / "s.sqlite3"
    run(capsys, "data", "import", str(EXTRACT), "--snapshot", str(snap))
    code, out, _ = run(capsys, "data", "status", "--snapshot", str(snap))
    age = (dt.datetime.now(dt.UTC).date() - dt.date(2025, 11, 24)).days
    assert code == 0
    assert f"snapshot: {snap}" in out
    assert "notices: 39" in out and "newest notice: 2025-11-24" in out
    assert f"data as of: 2025-11-24 ({age} days old)" in out
    assert str(EXTRACT) in out and "39 record(s)" in out
    assert f"WARNING: snapshot data is {age} days old (more than 30)" in out

    code, out, _ = run(
        capsys, "data", "status", "--max-age-days", str(age + 1), "--snapshot", str(snap)
    )
    assert code == 0 and "WARNING" not in out


def test_fresh_data_gives_no_warning_and_json_has_the_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    today = dt.datetime.now(dt.UTC).date()
    text = EXTRACT.read_text(encoding="utf-8").replace(
        "11/24/2025 0:00", f"{today.month}/{today.day}/{today.year} 0:00"
    )
    fresh = tmp_path / "fresh.csv"
    fresh.write_text(text, encoding="utf-8", newline="")
    snap = tmp_path / "s.sqlite3"
    run(capsys, "data", "import", str(fresh), "--snapshot", str(snap))
    code, out, _ = run(capsys, "data", "status", "--snapshot", str(snap))
    assert code == 0 and "WARNING" not in out and "(0 days old)" in out
    code, out, _ = run(capsys, "data", "status", "--json", "--snapshot", str(snap))
    data = json.loads(out)
    assert data["exists"] is True and data["notices"] == 39 and data["age_days"] == 0
    assert data["warnings"] == [] and data["max_age_days"] == 30
    assert data["provenance"][0]["source"] == str(fresh)


def test_update_downloads_imports_and_then_is_not_modified(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], server: CSVServer
) -> None:
    snap = tmp_path / "data" / "s.sqlite3"
    code, out, err = run(
        capsys, "data", "update", "--allow-shrink", "--url", server.url, "--snapshot", str(snap)
    )
    assert code == 0, err
    assert f"imported 39 record(s) from {server.url}" in out
    assert "downloading" not in err  # stderr is not a terminal here
    with Snapshot(snap) as s:
        [entry] = s.provenance()
    assert (entry.source, entry.etag, entry.rows) == (server.url, '"v1"', 39)
    assert not any(p.exists() for p in part_paths(server.url, snap.parent))

    code, out, _ = run(
        capsys, "data", "update", "--allow-shrink", "--url", server.url, "--snapshot", str(snap)
    )
    assert code == 0 and out.startswith(f"not modified: {server.url}")
    assert server.requests[-1]["if-none-match"] == '"v1"'


def test_update_with_a_new_etag_but_same_bytes_is_not_reimported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], server: CSVServer
) -> None:
    snap = tmp_path / "s.sqlite3"
    run(capsys, "data", "update", "--allow-shrink", "--url", server.url, "--snapshot", str(snap))
    server.etag = '"v2"'
    code, out, _ = run(
        capsys, "data", "update", "--allow-shrink", "--url", server.url, "--snapshot", str(snap)
    )
    assert code == 0 and "unchanged:" in out and "already imported" in out


def test_interrupted_download_resumes_with_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], server: CSVServer
) -> None:
    snap = tmp_path / "s.sqlite3"
    server.cut_after = 10000
    code, out, err = run(
        capsys, "data", "update", "--allow-shrink", "--url", server.url, "--snapshot", str(snap)
    )
    assert code == 2 and "interrupted after 10000 bytes" in err and "again to resume" in err
    assert len(err.strip().splitlines()) == 1
    part, _ = part_paths(server.url, snap.parent)
    assert part.stat().st_size == 10000 and not snap.exists()

    code, out, err = run(
        capsys, "data", "update", "--allow-shrink", "--url", server.url, "--snapshot", str(snap)
    )
    assert code == 0, err
    assert server.requests[-1]["range"] == "bytes=10000-"
    assert server.requests[-1]["if-range"] == '"v1"'
    assert "resumed download at byte 10000" in out and "imported 39 record(s)" in out
    with Snapshot(snap) as s:
        assert s.provenance()[0].sha256 == hashlib.sha256(server.body).hexdigest()
    assert not part.exists()


def test_update_without_network_fails_fast_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/retraction_watch.csv"
    code, out, err = run(
        capsys, "data", "update", "--allow-shrink", "--url", url, "--snapshot", str(tmp_path / "s")
    )
    # Refused at once, not a connect timeout waited out: the error is the refusal itself.
    assert code == 2 and out == ""
    assert err.startswith(f"rwgate: error: cannot reach {url}")
    assert "refused" in err.lower() and "timed out" not in err.lower()
    assert len(err.strip().splitlines()) == 1


def test_update_http_error_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], server: CSVServer
) -> None:
    def not_found(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(404)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    server.respond = not_found  # type: ignore[method-assign]
    code, _, err = run(
        capsys,
        "data",
        "update",
        "--allow-shrink",
        "--url",
        server.url,
        "--snapshot",
        str(tmp_path / "s"),
    )
    assert code == 2 and "HTTP 404" in err


def test_registered_under_a_main_parser_that_has_its_own_snapshot_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser(prog="rwgate")
    parser.add_argument("--snapshot")
    datacmd.add_data_commands(parser.add_subparsers(dest="command", required=True))
    snap = tmp_path / "main-option.sqlite3"
    args = parser.parse_args(["--snapshot", str(snap), "data", "import", str(EXTRACT)])
    assert args.func(args) == 0
    assert snap.exists()
    args = parser.parse_args(["data", "status", "--snapshot", str(snap), "--json"])
    capsys.readouterr()
    assert args.func(args) == 0
    assert json.loads(capsys.readouterr().out)["notices"] == 39
    with pytest.raises(SystemExit) as exit_info:
        parser.parse_args(["data"])
    assert exit_info.value.code == 2


def test_progress_bar_draws_only_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen, pipe = Terminal(), io.StringIO()
    for stream in (screen, pipe):
        bar = TerminalProgress(stream)
        bar(5_000_000, 10_000_000)
        bar(12_000_000, None)
        bar.finish()
    assert screen.getvalue() == ("\rdownloading: 5.0/10.0 MB (50%)  \rdownloading: 12.0 MB  \n")
    assert pipe.getvalue() == ""


def test_an_unwritable_snapshot_location_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    snap = blocker / "s.sqlite3"  # its folder is a file
    code, _, err = run(capsys, "data", "import", str(EXTRACT), "--snapshot", str(snap))
    assert code == 2
    assert err.startswith(f"rwgate: error: cannot write the snapshot {snap}: ")
    assert len(err.strip().splitlines()) == 1


def test_update_into_a_foreign_file_fails_before_downloading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], server: CSVServer
) -> None:
    foreign = tmp_path / "notes.sqlite3"
    foreign.write_text("not a database\n" * 100, encoding="utf-8")
    code, _, err = run(
        capsys, "data", "update", "--allow-shrink", "--url", server.url, "--snapshot", str(foreign)
    )
    assert code == 2 and "not an rwgate snapshot" in err
    assert server.requests == []
    assert foreign.read_text(encoding="utf-8").startswith("not a database")


@pytest.mark.parametrize("url", ["ftp://example.org/rw.csv", "retraction_watch.csv"])
def test_update_from_a_url_it_cannot_fetch_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    code, out, err = run(
        capsys, "data", "update", "--allow-shrink", "--url", url, "--snapshot", str(tmp_path / "s")
    )
    assert code == 2 and out == ""
    assert err.startswith(f"rwgate: error: cannot download {url!r}: ")
    assert "resume" not in err and len(err.strip().splitlines()) == 1


def test_a_damaged_validators_file_starts_the_download_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], server: CSVServer
) -> None:
    snap = tmp_path / "s.sqlite3"
    part, sidecar = part_paths(server.url, tmp_path)
    part.write_bytes(b"half a file")
    sidecar.write_text('["not", "an", "object"]', encoding="utf-8")
    code, out, err = run(
        capsys, "data", "update", "--allow-shrink", "--url", server.url, "--snapshot", str(snap)
    )
    assert code == 0, err
    assert "range" not in server.requests[-1]
    assert "imported 39 record(s)" in out


def test_a_download_under_the_floor_is_refused_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], server: CSVServer
) -> None:
    """39 rows is not the database: without --allow-shrink the download is refused, the good
    snapshot stays byte-identical and no partial download is kept for a later resume."""
    snap = tmp_path / "data" / "s.sqlite3"
    # A previous full export of 78 rows (the 39 real ones, and each again under another id).
    lines = (RW / "rw-extract-2025.csv").read_bytes().decode("utf-8").splitlines(keepends=True)
    doubled = [*lines, *(f"9{line}" for line in lines[1:] if line.strip())]
    good = tmp_path / "previous.csv"
    good.write_bytes("".join(doubled).encode("utf-8"))
    imported = run(capsys, "data", "import", "--allow-shrink", str(good), "--snapshot", str(snap))
    assert imported[0] == 0 and "a full export" in imported[1]
    before = snap.read_bytes()
    code, _, err = run(capsys, "data", "update", "--url", server.url, "--snapshot", str(snap))
    assert code == 2 and "not a whole Retraction Watch export" in err and err.count("\n") == 1
    assert snap.read_bytes() == before
    assert not any(p.exists() for p in part_paths(server.url, snap.parent))
