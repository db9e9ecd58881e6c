"""The code action "allow this work": an allow-list entry in the *user's* configuration file.

Never in the document or beside it: a document is judged, it does not choose its judge (and a
project's ``rwgate.toml`` is shared with co-authors and CI). The entry has a reason and an expiry,
as DESIGN.md's allow-list asks. The file is appended to, never rewritten, and only when the result
still parses with the new entry valid; otherwise it is left alone and the error says why.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path

from rwgate.errors import ConfigError
from rwgate.fsutil import write_atomic
from rwgate.settings.files import user_config_path

DEFAULT_DAYS = 90  # long enough for a revision, short enough to look at the citation again
_INLINE_ALLOW = re.compile(r"^\s*allow\s*=", re.MULTILINE)


def _toml_string(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's for everything json.dumps writes)."""
    return json.dumps(value, ensure_ascii=False)


def entry_block(key: str, doi: str | None, reason: str, until: dt.date, table: str) -> str:
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
    until: dt.date,
    env: Mapping[str, str] | None = None,
) -> Path:
    """Append an allow-list entry for ``key`` (and its DOI) to the user's configuration file;
    returns the file. Raises ConfigError (one line) when the file cannot be extended safely."""
    from rwgate.settings.policy import AllowEntry

    path = user_config_path(os.environ if env is None else env)
    try:
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    if _INLINE_ALLOW.search(text):
        raise ConfigError(f"{path}: its allow-list is written inline (allow = [...]): add it there")
    tool = data.get("tool")  # a file written as a pyproject has its entries under [tool.rwgate]
    table = "tool.rwgate.allow" if isinstance(tool, dict) and "rwgate" in tool else "allow"
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
