"""The server's session reads a saved file again only when it changed on disk, and gives the
same lines otherwise (what the passes found in them is kept while they are the same)."""

from __future__ import annotations

import os
from pathlib import Path

from rwgate.frontends.lsp.session import Session


def test_saved_file_lines_are_read_again_only_when_the_file_changed(tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{a,\n}\n", encoding="utf-8")
    session = Session({}, lambda path: None)
    first = session.lines(str(bib))
    assert first == ["@article{a,", "}"]
    assert session.lines(str(bib)) is first
    bib.write_text("@article{b,\n}\n", encoding="utf-8")  # same size: the time tells
    stamp = bib.stat().st_mtime_ns + 1_000_000
    os.utime(bib, ns=(stamp, stamp))
    assert session.lines(str(bib)) == ["@article{b,", "}"]


def test_an_open_buffer_is_read_from_the_editor(tmp_path: Path) -> None:
    paper = tmp_path / "paper.md"
    paper.write_text("saved\n", encoding="utf-8")
    session = Session({}, lambda path: "in the editor\n" if path == str(paper) else None)
    assert session.lines(str(paper)) == ["in the editor"]
