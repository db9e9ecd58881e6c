"""The code action "allow this work": an allow-list entry in the *user's* configuration file.

Never in the document or beside it: a document is judged, it does not choose its judge (and a
``rwgate.toml`` in the project is shared with co-authors and CI). The entry has a reason and an
expiry, as DESIGN.md's allow-list asks, and lands in ``$XDG_CONFIG_HOME/rwgate/config.toml``
(or ``RWGATE_CONFIG``): the file :func:`rwgate.settings.files.user_config_path` names, the one
:func:`rwgate.settings.config.load_settings` reads first. The file is appended to, never rewritten,
and
only when the result still parses with the new entry valid: a file rwgate cannot extend safely is
left alone and the error says why.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rwgate.errors import ConfigError
from rwgate.fsutil import write_atomic
from rwgate.settings.files import user_config_path

DEFAULT_DAYS = 90
"""How long an allow-list entry added from the editor holds: long enough for a revision, short
enough that a deliberate citation of a flagged work is looked at again."""
_INLINE_ALLOW = re.compile(r"^\s*allow\s*=", re.MULTILINE)


def _toml_string(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's for everything json.dumps writes)."""
    return json.dumps(value, ensure_ascii=False)


def _table_name(data: dict[str, Any]) -> str:
    """``tool.rwgate.allow`` in a file written as a pyproject (``[tool.rwgate]``), else
    ``allow``."""
    tool = data.get("tool")
    return "tool.rwgate.allow" if isinstance(tool, dict) and "rwgate" in tool else "allow"


def entry_block(
    key: str, doi: str | None, reason: str, until: dt.date, table: str = "allow"
) -> str:
    """The TOML of one allow-list entry."""
    lines = [f"[[{table}]]", f"key = {_toml_string(key)}"]
    if doi:
        lines.append(f"doi = {_toml_string(doi)}")
    lines += [f"reason = {_toml_string(reason)}", f"until = {until.isoformat()}"]
    return "\n".join(lines) + "\n"


def add_allow_entry(
    key: str,
    doi: str | None,
    reason: str,
    until: dt.date | None = None,
    env: Mapping[str, str] | None = None,
) -> Path:
    """Append an allow-list entry for ``key`` (and its DOI) to the user's configuration file;
    returns the file. Raises ConfigError (one line) when the file cannot be extended safely."""
    from rwgate.settings.policy import AllowEntry

    path = user_config_path(os.environ if env is None else env)
    until = until or dt.date.today() + dt.timedelta(days=DEFAULT_DAYS)
    try:
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    if _INLINE_ALLOW.search(text):
        raise ConfigError(f"{path}: its allow-list is written inline (allow = [...]): add it there")
    table = _table_name(data)
    AllowEntry(key=key, doi=doi, reason=reason, until=until)  # a bad entry is not written
    separator = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
    new = text + separator + entry_block(key, doi, reason, until, table)
    try:
        tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: the allow-list entry would not parse: {exc}") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, new)
    return path
