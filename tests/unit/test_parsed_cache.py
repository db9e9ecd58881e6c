"""Parsed bibliographies remembered by content (issue 18): read once, re-read whenever the bytes,
the path or the entry itself say the remembered reading may not hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from rwgate.readers import load_bibliography
from rwgate.readers.bibliographies import parsed as parsed_module
from rwgate.readers.bibliographies.parsed import load_remembered

BIB = (
    "@string{j = {The Lancet}}\n"
    "@article{wakefield1998, title = {Ileal-lymphoid-nodular hyperplasia in {C}hildren \\emph{x}},"
    " journal = j, doi = {10.1016/S0140-6736(97)11096-0}}\n"
    "@article{broken, title = {no closing brace}\n"
)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files the reader itself read (not the cache)."""
    seen: list[Path] = []

    def counting(path: Path):  # type: ignore[no-untyped-def]
        seen.append(path)
        return load_bibliography(path)

    monkeypatch.setattr(parsed_module, "load_bibliography", counting)
    return seen


@pytest.fixture
def bib(tmp_path: Path) -> Path:
    path = tmp_path / "refs.bib"
    path.write_text(BIB, encoding="utf-8")
    return path


def test_a_bib_read_before_comes_from_the_cache_as_the_reader_read_it(
    tmp_path: Path, bib: Path, reads: list[Path]
) -> None:
    cache = tmp_path / "cache"
    first = load_remembered(bib, cache)
    second = load_remembered(bib, cache)
    assert reads == [bib]
    assert second == first == load_bibliography(bib)
    assert second.problems and second.references[0].title  # problems and decoded text kept

    bib.write_text(BIB.replace("1998", "1999"), encoding="utf-8")
    edited = load_remembered(bib, cache)
    assert reads == [bib, bib] and edited.references[0].key == "wakefield1999"

    moved = tmp_path / "other.bib"  # the same bytes elsewhere: locations name the other file
    moved.write_text(BIB.replace("1998", "1999"), encoding="utf-8")
    assert load_remembered(moved, cache).references[0].location.file == str(moved)  # type: ignore[union-attr]
    assert len(reads) == 3


def test_a_damaged_entry_or_no_cache_folder_reads_the_file(
    tmp_path: Path, bib: Path, reads: list[Path]
) -> None:
    cache = tmp_path / "cache"
    good = load_remembered(bib, cache)
    for entry in (cache / "parsed").glob("*.json"):
        entry.write_text('{"references": [{"key": 5}]}', encoding="utf-8")
    assert load_remembered(bib, cache) == good
    assert load_remembered(bib, None) == good
    assert len(reads) == 3


def test_an_edited_reader_reads_again_and_no_memo_turns_it_off(
    tmp_path: Path, bib: Path, reads: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29: the entry is checked against rwgate's code, not its version string (an edited
    editable install is new code); RWGATE_NO_MEMO reads every file."""
    from rwgate.settings import recorded

    cache = tmp_path / "cache"
    load_remembered(bib, cache)
    load_remembered(bib, cache)
    assert len(reads) == 1
    real = recorded._code
    monkeypatch.setattr(recorded, "_code", lambda d, root=recorded._PACKAGE: ("edited", real(d)[1]))
    load_remembered(bib, cache)
    assert len(reads) == 2
    monkeypatch.setenv("RWGATE_NO_MEMO", "1")
    load_remembered(bib, cache)
    assert len(reads) == 3
