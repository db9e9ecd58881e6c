"""``rwgate cache``: what is remembered, and clearing memos with or without the look-ups."""

from __future__ import annotations

from pathlib import Path

import pytest

from rwgate.frontends.cli.main import main


def _fill(cache: Path) -> None:
    for folder in ("json", "filter-memo", "latex-memo", "latex-pass", "parsed"):
        (cache / folder).mkdir(parents=True)
        (cache / folder / "entry.json").write_text("{}", encoding="utf-8")
    (cache / "code-id.json").write_text("{}", encoding="utf-8")


def test_show_lists_every_folder_with_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RWGATE_CACHE_DIR", str(tmp_path))
    _fill(tmp_path)
    assert main(["cache"]) == 0
    out = capsys.readouterr().out
    assert f"rwgate cache: {tmp_path}" in out
    for name in ("json/", "filter-memo/", "latex-memo/", "latex-pass/", "parsed/", "code-id.json"):
        line = next(line for line in out.splitlines() if name in line)
        assert " 1 files" in line and "2 B" in line


def test_clear_memos_only_keeps_the_look_up_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RWGATE_CACHE_DIR", str(tmp_path))
    _fill(tmp_path)
    assert main(["cache", "clear", "--memos-only"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["json"]
    assert main(["cache", "clear"]) == 0
    assert list(tmp_path.iterdir()) == []


def test_the_folder_can_be_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _fill(tmp_path / "c")
    assert main(["cache", "--cache-dir", str(tmp_path / "c"), "clear"]) == 0
    assert list((tmp_path / "c").iterdir()) == []
    assert "cleared memos and look-up cache" in capsys.readouterr().out
