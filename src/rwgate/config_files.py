"""Finding the configuration file, without the settings model.

The pandoc filter's verdict memo keys on the configuration file on every build, before it knows
whether it will need the settings at all; the Pydantic model in :mod:`rwgate.config` costs more
than the rest of a memo hit together, so the search lives here and both use it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rwgate.errors import ConfigError

CONFIG_NAMES = ("rwgate.toml", "pyproject.toml")


def locate_config(start: Path) -> tuple[Path, bytes, Any] | None:
    """The nearest configuration file above ``start``: its path, bytes and rwgate section.

    A ``pyproject.toml`` without ``[tool.rwgate]`` is not one (the search goes on upward); a
    ``rwgate.toml`` always is, with or without the ``[tool.rwgate]`` header.
    """
    here = start if start.is_dir() else start.parent
    for folder in [here.resolve(), *here.resolve().parents]:
        for name in CONFIG_NAMES:
            candidate = folder / name
            if not candidate.is_file():
                continue
            try:
                raw = candidate.read_bytes()
                # Universal newlines, as the text-mode read this search always did.
                text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
                data = tomllib.loads(text)
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise ConfigError(f"{candidate}: cannot read: {exc}") from None
            tool = data.get("tool", {})
            if not isinstance(tool, dict):
                raise ConfigError(f"{candidate}: tool: expected a table")
            if name == "rwgate.toml":
                return candidate, raw, tool.get("rwgate", data)
            section = tool.get("rwgate")
            if section is not None:
                return candidate, raw, section
    return None


def find_config(start: Path) -> tuple[Path, Any] | None:
    """The nearest ``rwgate.toml`` or ``pyproject.toml`` with ``[tool.rwgate]`` above ``start``."""
    found = locate_config(start)
    return None if found is None else (found[0], found[2])


def user_config_path(env: Mapping[str, str]) -> Path:
    """The invoking user's configuration file: ``RWGATE_CONFIG``, else
    ``$XDG_CONFIG_HOME/rwgate/config.toml`` (platformdirs' user config folder)."""
    if env.get("RWGATE_CONFIG"):
        return Path(env["RWGATE_CONFIG"]).expanduser()
    if env.get("XDG_CONFIG_HOME"):
        return Path(env["XDG_CONFIG_HOME"]).expanduser() / "rwgate" / "config.toml"
    import platformdirs

    return Path(platformdirs.user_config_dir("rwgate")) / "config.toml"
