"""The "allow this work" code action writes the user's configuration, never the document's."""

from __future__ import annotations

import datetime as dt
import tomllib
from pathlib import Path

import pytest

from rwgate.errors import ConfigError
from rwgate.frontends.lsp.allowlist import add_allow_entry
from rwgate.settings.config import load_settings

UNTIL = dt.date(2031, 1, 1)


def test_appends_an_entry_the_settings_then_read(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    path = add_allow_entry("smith2020", "10.1000/X", 'discussed "as retracted"', UNTIL, env)
    assert path == tmp_path / "config" / "rwgate" / "config.toml"
    path.write_text(path.read_text() + "\n", encoding="utf-8")
    add_allow_entry("doe2021", None, "a second one", UNTIL, env)
    settings = load_settings(tmp_path, env=env)
    assert [(a.key, a.doi, a.until) for a in settings.allow] == [
        ("smith2020", "10.1000/x", UNTIL),
        ("doe2021", None, UNTIL),
    ]
    assert settings.allow[0].reason == 'discussed "as retracted"'


def test_a_pyproject_style_user_file_gets_its_own_table(tmp_path: Path) -> None:
    path = tmp_path / "user.toml"
    path.write_text('[tool.rwgate]\npolicy = "strict"\n', encoding="utf-8")
    add_allow_entry("k", None, "why", UNTIL, {"RWGATE_CONFIG": str(path)})
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert data["tool"]["rwgate"]["allow"][0]["key"] == "k"
    assert data["tool"]["rwgate"]["policy"] == "strict"


def test_an_inline_allow_list_or_a_broken_file_is_left_alone(tmp_path: Path) -> None:
    inline = tmp_path / "inline.toml"
    inline.write_text('allow = [{key = "a", reason = "r"}]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="inline"):
        add_allow_entry("k", None, "why", UNTIL, {"RWGATE_CONFIG": str(inline)})
    broken = tmp_path / "broken.toml"
    broken.write_text("policy = \n", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot read"):
        add_allow_entry("k", None, "why", UNTIL, {"RWGATE_CONFIG": str(broken)})
    assert broken.read_text(encoding="utf-8") == "policy = \n"
