from __future__ import annotations

from pathlib import Path

import pytest

from rwgate.config import ConfigError, load_settings


def test_layers_later_wins(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.rwgate]\npolicy = "strict"\nfail-on = ["expression_of_concern"]\n'
        '[[tool.rwgate.allow]]\nkey = "w"\nreason = "discussed"\n'
    )
    doc = tmp_path / "sub" / "paper.md"
    doc.parent.mkdir()
    doc.write_text("x")
    s = load_settings(doc, env={})
    assert s.policy == "strict" and s.fail_on == ["expression_of_concern"]
    assert s.config_file == str(tmp_path / "pyproject.toml")
    s = load_settings(doc, env={"RWGATE_POLICY": "permissive", "RWGATE_OFFLINE": "1"})
    assert s.policy == "permissive" and s.offline is True
    s = load_settings(doc, overrides={"policy": "default"}, env={"RWGATE_POLICY": "permissive"})
    assert s.policy == "default"


def test_rwgate_toml_beats_pyproject_in_same_folder(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.rwgate]\npolicy = "strict"\n')
    (tmp_path / "rwgate.toml").write_text('policy = "permissive"\n')
    assert load_settings(tmp_path, env={}).policy == "permissive"


def test_pyproject_without_section_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.rwgate]\npolicy = "strict"\n')
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert load_settings(inner, env={}).policy == "strict"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[tool.rwgate]\npolicy = "stric"\n', "pyproject.toml: policy:"),
        ('[tool.rwgate]\nfail_on = ["retractd"]\n', "fail_on.0"),
        ("[tool.rwgate]\nfrobnicate = 1\n", "frobnicate: unknown key"),
        ('[tool.rwgate]\n[[tool.rwgate.allow]]\nreason = "r"\n', "allow.0"),
        ("[tool.rwgate\n", "cannot read"),
        ('tool = "x"\n', "pyproject.toml: tool: expected a table"),
    ],
)
def test_invalid_config_names_file_and_key(tmp_path: Path, text: str, needle: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(ConfigError) as err:
        load_settings(tmp_path, env={})
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_bad_environment_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="environment: RWGATE_OFFLINE"):
        load_settings(tmp_path, env={"RWGATE_OFFLINE": "maybe"})
    with pytest.raises(ConfigError, match="environment: RWGATE_POLICY: Input should be"):
        load_settings(tmp_path, env={"RWGATE_POLICY": "lax"})
    with pytest.raises(ConfigError, match="environment: RWGATE_TIMEOUT: "):
        load_settings(tmp_path, env={"RWGATE_TIMEOUT": "-1"})


def test_rwgate_toml_with_tool_not_a_table(tmp_path: Path) -> None:
    (tmp_path / "rwgate.toml").write_text("tool = 1\n")
    with pytest.raises(ConfigError, match=r"rwgate\.toml: tool: expected a table"):
        load_settings(tmp_path, env={})
