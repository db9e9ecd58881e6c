"""Which pandoc versions rwgate supports, and the one line said when a pandoc is older.

The floor is Debian 12's pandoc, 2.17: its JSON AST, Markdown reader and ``--citeproc`` are what
rw-filter and ``rwgate check`` need. RIS needs pandoc's RIS reader (2.19); the Lua filter's own
citeproc call needs 2.19.1 (older: ``_extensions/rwgate/rwgate.lua`` runs its own pandoc). A JSON
filter learns its pandoc's version only from ``PANDOC_VERSION``; rwgate's own runs ask
``pandoc --version``. ``tests/e2e/test_pandoc_versions.py`` runs 2.17, 2.19.2, 3.5 and the newest.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from rwgate.errors import ToolError

Version = tuple[int, ...]
FLOOR: Version = (2, 17)
RIS_READER: Version = (2, 19)
_NUMBER = re.compile(r"(\d+(?:\.\d+)*)")
_known: dict[tuple[str, float, int], Version | None] = {}


class PandocTooOld(ToolError):
    """A pandoc older than rwgate supports: one line naming its version, the floor and the fix."""


def parse(text: str) -> Version | None:
    """``(2, 17, 1, 1)`` from ``pandoc 2.17.1.1`` / ``2.17.1.1`` (the first dotted number)."""
    found = _NUMBER.search(text)
    return tuple(int(part) for part in found.group(1).split(".")) if found else None


def shown(version: Version) -> str:
    return ".".join(str(part) for part in version)


def version_of(exe: str) -> Version | None:
    """The version ``exe --version`` prints (None if it does not run or says none); asked once
    per binary and modification time in a process."""
    try:
        info = os.stat(exe)
        key = (exe, info.st_mtime, info.st_size)
    except OSError:
        key = (exe, 0.0, 0)
    if key not in _known:
        import subprocess  # (rw-filter imports this module on every build)

        try:
            done = subprocess.run(
                [exe, "--version"],
                capture_output=True,
                timeout=30,
                check=False,
                stdin=subprocess.DEVNULL,
            )
            first = done.stdout.decode("utf-8", "replace").splitlines()[:1]
            _known[key] = parse(first[0]) if done.returncode == 0 and first else None
        except (OSError, subprocess.TimeoutExpired):
            _known[key] = None
    return _known[key]


def too_old(version: Version, floor: Version = FLOOR, what: str = "rwgate") -> str:
    """The one line for a pandoc below ``floor``."""
    return (
        f"pandoc {shown(version)} is older than {shown(floor)}, the oldest {what} supports: "
        "install a newer pandoc (https://pandoc.org/installing.html) or put the one "
        "`pip install pypandoc-binary` ships first on PATH"
    )


def check_filter_env(env: Mapping[str, str]) -> None:
    """rw-filter's first step: stop with one line when the pandoc running it is below the floor
    (a pandoc that sets no ``PANDOC_VERSION``, older than 2.0 or not pandoc at all, is not
    judged here: its JSON is refused later as not a document)."""
    version = parse(env.get("PANDOC_VERSION", ""))
    if version is not None and version < FLOOR:
        raise PandocTooOld(too_old(version, FLOOR, "rw-filter"))
