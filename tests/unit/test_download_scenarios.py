"""``rwgate data update`` against a download server that misbehaves (issue 14).

The offline snapshot makes "not listed" mean "clean", so no failed or partial download may ever
become the registry of record. A good snapshot (a 78-row full export, imported with
``--allow-shrink``) is updated from a loopback server serving the next export (76 rows: one record
and its twin deleted upstream) with each fault of :mod:`fakes.rwexport`. A refused update leaves the
snapshot byte-identical and no partial file behind to be resumed; an accepted one is the whole new
export, deleted records gone. Rows are the real ones of ``rw-extract-2025.csv`` (see
fixtures/rw/ATTRIBUTION.md), each copied once more under another Record ID.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.rwexport import CSVServer
from rwgate.frontends.cli import data as datacmd
from rwgate.sources.snapshot import download as rwdownload
from rwgate.sources.snapshot.download import part_paths
from rwgate.sources.snapshot.source import Snapshot

EXTRACT = Path(__file__).parents[1] / "fixtures" / "rw" / "rw-extract-2025.csv"
WAKEFIELD = "10.1016/s0140-6736(97)11096-0"
DELETED = "10.1063/5.0182988"  # Record ID 68371 (and its twin 968371): gone from the next export


def _exports() -> tuple[bytes, bytes]:
    lines = EXTRACT.read_bytes().decode("utf-8").splitlines(keepends=True)
    rows = [*lines[1:], *(f"9{line}" for line in lines[1:] if line.strip())]
    previous = "".join([lines[0], *rows]).encode("utf-8")
    following = "".join([lines[0], *(r for r in rows if DELETED not in r)]).encode("utf-8")
    return previous, following


PREVIOUS, NEXT = _exports()


@pytest.fixture
def snap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    path = tmp_path / "data" / "snapshot.sqlite3"
    source = tmp_path / "previous-export.csv"
    source.write_bytes(PREVIOUS)
    assert (
        datacmd.main(["data", "import", "--allow-shrink", str(source), "--snapshot", str(path)])
        == 0
    )
    capsys.readouterr()
    return path


@pytest.fixture
def server() -> Iterator[CSVServer]:
    srv = CSVServer(NEXT, etag='"next"')
    yield srv
    srv.close()


def update(snap: Path, server: CSVServer, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = datacmd.main(["data", "update", "--url", server.url, "--snapshot", str(snap)])
    out, err = capsys.readouterr()
    assert len(err.strip().splitlines()) <= 1, err  # an error is one line, never a traceback
    return code, out + err


def statuses(snap: Path) -> dict[str, str]:
    with Snapshot(snap) as s:
        found = s.query_all([WAKEFIELD, DELETED])
        return {doi: "listed" if lk.notices else lk.outcome for doi, lk in found.items()}


def assert_refused(snap: Path, before: bytes, server: CSVServer) -> None:
    assert snap.read_bytes() == before
    assert statuses(snap) == {WAKEFIELD: "listed", DELETED: "listed"}
    assert not any(p.exists() for p in part_paths(server.url, snap.parent))


def assert_took_next_export(snap: Path) -> None:
    assert statuses(snap) == {WAKEFIELD: "listed", DELETED: "not_found"}
    with Snapshot(snap) as s:
        assert s.provenance()[-1].rows == NEXT.count(b"\n") - 1


@pytest.mark.parametrize(
    ("fault", "body", "why"),
    [
        ("html", NEXT, "not a Retraction Watch CSV (header lacks Record ID"),
        (None, NEXT.split(b"\n", 1)[0] + b"\n", "no Retraction Watch rows in the file"),
        (None, b"\n".join(NEXT.split(b"\n")[:11]) + b"\n", "not a whole Retraction Watch export"),
        ("redirect_away", NEXT, "redirect to another host (localhost) refused"),
    ],
    ids=["html-page", "header-only", "tiny-10-rows", "redirect-to-another-host"],
)
def test_a_file_that_is_not_the_whole_export_is_refused_and_changes_nothing(
    snap: Path,
    server: CSVServer,
    capsys: pytest.CaptureFixture[str],
    fault: str | None,
    body: bytes,
    why: str,
) -> None:
    before = snap.read_bytes()
    server.fault, server.body = fault, body
    code, said = update(snap, server, capsys)
    assert code == 2 and why in said
    assert_refused(snap, before, server)
    # The refused file is not resumed next time: the next request is a plain GET.
    server.fault, server.body = None, NEXT
    code, said = update(snap, server, capsys)
    assert code == 0, said
    assert "range" not in server.requests[-1]
    assert_took_next_export(snap)


def test_a_connection_closed_early_without_a_length_is_refused(
    snap: Path, server: CSVServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without Content-Length the cut looks like the end of the file; the rows say otherwise."""
    before = snap.read_bytes()
    server.fault, server.cut_after = "close_early", len(NEXT) * 6 // 10
    code, said = update(snap, server, capsys)
    assert code == 2 and "not a whole Retraction Watch export" in said
    assert_refused(snap, before, server)


def test_a_cut_transfer_changes_nothing_and_resumes_next_time(
    snap: Path, server: CSVServer, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snap.read_bytes()
    server.fault, server.cut_after = "cut", len(NEXT) // 3
    code, said = update(snap, server, capsys)
    assert code == 2 and f"interrupted after {len(NEXT) // 3} bytes" in said
    assert snap.read_bytes() == before
    server.fault = None
    code, said = update(snap, server, capsys)
    assert code == 0 and f"resumed download at byte {len(NEXT) // 3}" in said
    assert server.requests[-1]["if-range"] == '"next"'
    assert_took_next_export(snap)


def test_a_416_on_resume_is_not_taken_for_a_complete_file(
    snap: Path, server: CSVServer, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snap.read_bytes()
    server.fault, server.cut_after = "cut", len(NEXT) // 2
    update(snap, server, capsys)
    server.fault = "refuse_range"  # "bytes */<whole length>": the half held is not the file
    code, said = update(snap, server, capsys)
    assert code == 2 and "refused to resume" in said
    assert_refused(snap, before, server)
    server.fault = None
    assert update(snap, server, capsys)[0] == 0
    assert "range" not in server.requests[-1]
    assert_took_next_export(snap)


def test_a_416_for_a_part_that_is_the_whole_file_imports_it(
    snap: Path, server: CSVServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run killed after the transfer but before the import: the server confirms the length."""
    part, sidecar = part_paths(server.url, snap.parent)
    part.write_bytes(NEXT)
    sidecar.write_text('{"etag": "\\"next\\"", "last_modified": null}', encoding="utf-8")
    server.fault = "refuse_range"
    code, said = update(snap, server, capsys)
    assert code == 0, said
    assert_took_next_export(snap)


def test_a_server_ignoring_if_range_never_splices_two_exports(
    snap: Path, server: CSVServer, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snap.read_bytes()
    server.fault, server.cut_after = "cut", len(NEXT) // 2
    update(snap, server, capsys)
    # Upstream publishes a new export (the deleted record back) before the resume.
    server.body, server.etag, server.fault = PREVIOUS, '"newer"', "ignore_if_range"
    code, said = update(snap, server, capsys)
    assert code == 2 and "did not confirm the file it resumes" in said
    assert_refused(snap, before, server)
    server.fault = None
    code, said = update(snap, server, capsys)
    assert code == 0 and "unchanged" in said  # the newer export is the one already imported
    assert snap.read_bytes() == before


def test_a_gzip_encoded_transfer_imports_the_whole_export(
    snap: Path, server: CSVServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.fault = "gzip"
    code, said = update(snap, server, capsys)
    assert code == 0, said
    assert_took_next_export(snap)


def test_a_compression_bomb_is_cut_off_and_refused(
    snap: Path,
    server: CSVServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rwdownload, "MAX_BYTES", 4 << 20)
    before = snap.read_bytes()
    server.fault, server.bomb_size = "bomb", 64 << 20
    code, said = update(snap, server, capsys)
    assert code == 2 and "not a Retraction Watch export" in said
    assert_refused(snap, before, server)


def test_not_modified_changes_nothing(
    snap: Path, server: CSVServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert update(snap, server, capsys)[0] == 0
    after = snap.read_bytes()
    code, said = update(snap, server, capsys)
    assert code == 0 and said.startswith("not modified")
    assert server.requests[-1]["if-none-match"] == '"next"'
    assert snap.read_bytes() == after


def test_a_redirect_on_the_same_host_is_followed(
    snap: Path, server: CSVServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.fault = "redirect"
    code, said = update(snap, server, capsys)
    assert code == 0, said
    assert_took_next_export(snap)
