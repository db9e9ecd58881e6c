"""`rwgate screen`'s input list (rwgate.frontends.screen.inputs.expand): each file once, however
named."""

from __future__ import annotations

from pathlib import Path

import pytest

from rwgate.frontends.screen.inputs import InputError, expand


def test_a_file_named_twice_is_screened_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``a.csv``, ``./a.csv``, its absolute path and a glob that matches it are one file: read
    twice, each of its references would be counted twice."""
    (tmp_path / "a.csv").write_text("citing,doi\n", encoding="utf-8")
    (tmp_path / "b.csv").write_text("citing,doi\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    got = expand(["a.csv", "./a.csv", str(tmp_path / "a.csv"), "*.csv"])
    assert got == [Path("a.csv"), Path("b.csv")]


def test_a_pattern_that_names_nothing_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no file matches"):
        expand([str(tmp_path / "*.parquet")])
