"""The memo switch and the user's configuration file, without the settings model.

A memo hit (:mod:`rwgate.verdicts.remembered`) asks whether memos are off before it knows whether
it will need the settings at all, and the Pydantic model in :mod:`rwgate.settings.config` costs
more than the rest of a memo hit together.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from rwgate.settings import recorded

NO_MEMO_ENV = "RWGATE_NO_MEMO"
"""``RWGATE_NO_MEMO=1``: no memo is read or written (verdicts, parsed bibliographies); the
look-up cache stays. One switch for a user who suspects a stale verdict."""
_OFF = frozenset({"", "0", "false", "no", "off"})


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
