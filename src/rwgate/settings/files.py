"""Finding the configuration file, without the settings model.

A memo hit (:mod:`rwgate.verdicts.remembered`) asks whether memos are off before it knows whether
it will
need the settings at all; the Pydantic model in :mod:`rwgate.settings.config` costs more than the
rest of a
memo hit together, so that switch and the configuration file search live here.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rwgate.errors import ConfigError
from rwgate.settings import recorded

CONFIG_NAMES = ("rwgate.toml", "pyproject.toml")
NO_MEMO_ENV = "RWGATE_NO_MEMO"
"""``RWGATE_NO_MEMO=1``: no memo is read or written (verdicts, parsed bibliographies); the
look-up cache stays. One switch for a user who suspects a stale verdict."""
_OFF = frozenset({"", "0", "false", "no", "off"})


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's table; ConfigError (one line, naming the file) if unreadable.
    The read is recorded (:mod:`rwgate.settings.recorded`): a memo re-checks the file's bytes."""
    try:
        raw = recorded.read_bytes(path)
        # Universal newlines, as a text-mode read would.
        text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        return tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None


def rwgate_section(path: Path, data: dict[str, Any]) -> Any:
    """The rwgate table of a file read by :func:`read_toml`: ``[tool.rwgate]``, else (a
    ``rwgate.toml`` or the user's ``config.toml``) the whole file."""
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: tool: expected a table")
    return tool.get("rwgate", data)


def find_config(start: Path) -> tuple[Path, Any] | None:
    """The nearest configuration file above ``start``: its path and rwgate section.

    A ``pyproject.toml`` without ``[tool.rwgate]`` is not one (the search goes on upward); a
    ``rwgate.toml`` always is, with or without the ``[tool.rwgate]`` header. Every candidate
    looked at is recorded, found or not: a configuration file that appears later invalidates.
    """
    here = start if start.is_dir() else start.parent
    for folder in [here.resolve(), *here.resolve().parents]:
        for name in CONFIG_NAMES:
            candidate = folder / name
            if not candidate.is_file():
                recorded.note_missing(candidate)
                continue
            data = read_toml(candidate)
            section = rwgate_section(candidate, data)
            if name == "rwgate.toml" or "rwgate" in data.get("tool", {}):
                return candidate, section
    return None


def user_config_path(env: Mapping[str, str]) -> Path:
    """The invoking user's configuration file: ``RWGATE_CONFIG``, else
    ``$XDG_CONFIG_HOME/rwgate/config.toml`` (platformdirs' user config folder). The variables
    consulted are recorded (``env`` a :class:`rwgate.settings.recorded.RecordingEnv`), ``HOME``
    too."""
    env = recorded.environ(env)
    named = env.get("RWGATE_CONFIG")
    if named:
        return _expanded(named)
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg:
        return _expanded(xdg) / "rwgate" / "config.toml"
    recorded.note_env("HOME", os.environ.get("HOME"))
    import platformdirs

    return Path(platformdirs.user_config_dir("rwgate")) / "config.toml"


def _expanded(value: str) -> Path:
    if value.startswith("~"):
        recorded.note_env("HOME", os.environ.get("HOME"))
    return Path(value).expanduser()


def memo_disabled(env: Mapping[str, str] | None = None) -> bool:
    """Whether ``RWGATE_NO_MEMO`` turns every memo off (read and recorded like any setting)."""
    value = recorded.environ(env).get(NO_MEMO_ENV)
    return value is not None and value.strip().lower() not in _OFF
