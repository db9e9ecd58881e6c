from __future__ import annotations

from pathlib import Path

import pytest

from rwgate.settings.config import ConfigError, load_settings


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


def test_user_config_file_sets_any_key_and_the_document_policy_only(tmp_path: Path) -> None:
    """The document is judged; it does not choose the judge (issue 12)."""
    user = tmp_path / "user" / "config.toml"
    user.parent.mkdir()
    user.write_text('snapshot = "snap.sqlite3"\nmailto = "me@example.org"\n', encoding="utf-8")
    doc = tmp_path / "doc"
    doc.mkdir()
    (doc / "rwgate.toml").write_text(
        'policy = "strict"\ncache_dir = ".evil"\ncrossref_url = "http://evil.example"\n',
        encoding="utf-8",
    )
    env = {"RWGATE_CONFIG": str(user)}
    settings = load_settings(
        doc,
        env=env,
        metadata={"report": "stolen.json", "fail_on": ["corrected"]},
        metadata_name="paper.md: rwgate metadata",
    )
    assert settings.policy == "strict" and settings.fail_on == ["corrected"]
    assert settings.snapshot == user.parent / "snap.sqlite3"
    assert settings.mailto == "me@example.org"
    assert settings.cache_dir is None and settings.report is None
    assert settings.crossref_url == "https://api.crossref.org"
    named = " | ".join(settings.warnings)
    for where, key in (
        ("rwgate.toml", "cache_dir"),
        ("rwgate.toml", "crossref_url"),
        ("paper.md: rwgate metadata", "report"),
    ):
        assert f"{where}: '{key}' ignored: a document sets policy only" in named, named


def test_flags_and_environment_still_choose_the_judge(tmp_path: Path) -> None:
    env = {"RWGATE_CACHE_DIR": str(tmp_path / "c"), "XDG_CONFIG_HOME": str(tmp_path / "none")}
    settings = load_settings(tmp_path, env=env, overrides={"offline": True})
    assert settings.cache_dir == tmp_path / "c" and settings.offline is True
    assert settings.warnings == []


def test_a_future_dated_cache_entry_is_discarded(tmp_path: Path) -> None:
    import datetime as dt

    from rwgate.contract.models import Lookup
    from rwgate.sources.cache import _cached_lookup

    now = dt.datetime.now(dt.UTC)
    later = Lookup(
        doi="10.1/x", outcome="found", source="crossref", as_of=now + dt.timedelta(days=1)
    )
    assert _cached_lookup(later.model_dump(mode="json"), now) is None
    fresh = later.model_copy(update={"as_of": now})
    assert _cached_lookup(fresh.model_dump(mode="json"), now) is not None
    assert _cached_lookup({"not": "a lookup"}, now) is None
