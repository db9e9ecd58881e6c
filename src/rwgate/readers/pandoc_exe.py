"""Finding and running pandoc, and which pandoc versions rwgate supports.

rwgate reads Markdown through pandoc itself, so the keys it checks are exactly those pandoc's
citeproc sees. pandoc runs with ``--sandbox``: an include directive (``.. include::``,
``#+INCLUDE``) could otherwise make it read any file on the machine, which the MCP server must not
allow; rwgate reads bibliographies itself. A ``pandoc`` on PATH at least the floor wins, being the
one the user builds with; else the ``pypandoc-binary`` wheel's (found on disk, without the heavy
import).

The floor is Debian 12's pandoc, 2.17: its JSON AST, Markdown reader and ``--citeproc`` are what
rw-filter and ``rwgate check`` need. RIS needs pandoc's RIS reader (2.19); the Lua filter's own
citeproc call needs 2.19.1 (older: ``_extensions/rwgate/rwgate.lua`` runs its own pandoc). A JSON
filter learns its pandoc's version only from ``PANDOC_VERSION`` (:func:`check_filter_env`, on
every build: what only running pandoc needs is imported where it runs); rwgate's own runs ask
``pandoc --version``. ``tests/e2e/test_pandoc_versions.py`` runs 2.17, 2.19.2, 3.5 and the newest.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rwgate.errors import ToolError

if TYPE_CHECKING:
    import subprocess

Version = tuple[int, ...]
FLOOR: Version = (2, 17)
RIS_READER: Version = (2, 19)
PANDOC_TIMEOUT = 60.0
PANDOC_HEAP_MB = 1024
"""The bounds of every pandoc rwgate starts: ``+RTS -M`` is pandoc's own heap limit (its manual's
advice for untrusted input); past either, a one-line "split the document" error.
``RWGATE_PANDOC_HEAP_MB`` and ``RWGATE_PANDOC_SECONDS`` change them."""
_WARNING = "[WARNING] "
_said: set[str] = set()
_NUMBER = re.compile(r"(\d+(?:\.\d+)*)")
_known: dict[tuple[str, float, int], Version | None] = {}


class PandocError(ToolError):
    """pandoc could not read a document; the message is one line and names the file."""


class PandocNotFound(PandocError):
    """No pandoc executable is available."""


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
        import subprocess

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


def bounds() -> tuple[float, int]:
    """(seconds, heap MB) for this run, from the environment or the defaults."""

    def number(name: str, default: float) -> float:
        raw = os.environ.get(name, "").strip()
        try:
            value = float(raw) if raw else default
        except ValueError:
            value = default
        return value if value > 0 else default

    return number("RWGATE_PANDOC_SECONDS", PANDOC_TIMEOUT), int(
        number("RWGATE_PANDOC_HEAP_MB", PANDOC_HEAP_MB)
    )


def bundled_pandoc() -> str | None:
    """The pandoc inside the pypandoc-binary wheel, located without importing pypandoc."""
    import importlib.util

    spec = importlib.util.find_spec("pypandoc")
    if spec is None:
        return None
    for location in spec.submodule_search_locations or []:
        for name in ("pandoc", "pandoc.exe"):
            candidate = Path(location) / "files" / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    try:
        import pypandoc

        found = pypandoc.get_pandoc_path()
    except (ImportError, OSError, RuntimeError):
        return None
    return str(found) if found else None


def _note(line: str) -> None:
    """Say ``line`` on stderr once per process (a long-running server reads many files)."""
    if line not in _said:
        _said.add(line)
        print(f"rwgate: {line}", file=sys.stderr)


def pandoc_path(minimum: Version = FLOOR, what: str = "rwgate") -> str:
    """The pandoc on PATH when it is at least ``minimum``, else pypandoc-binary's (saying so once),
    else a one-line error naming the version, the floor and what to do."""
    import shutil

    on_path = shutil.which("pandoc")
    found = version_of(on_path) if on_path else None
    if on_path and (found is None or found >= minimum):
        return on_path  # (a pandoc that prints no version is not second-guessed)
    bundled = bundled_pandoc()
    wheel = version_of(bundled) if bundled else None
    if bundled and (wheel is None or wheel >= minimum):
        if on_path and found is not None:
            _note(
                f"pandoc {shown(found)} on PATH is older than {shown(minimum)}, the oldest "
                f"{what} supports: reading with the pypandoc-binary wheel's pandoc"
                + (f" {shown(wheel)}" if wheel else "")
            )
        return bundled
    if found is not None or wheel is not None:
        raise PandocError(too_old(found or wheel or minimum, minimum, what))
    raise PandocNotFound(
        "pandoc not found: install pandoc (https://pandoc.org/installing.html) "
        "or `pip install pypandoc-binary`"
    )


def _short_message(text: str) -> str:
    """pandoc's error in one line: its first two lines carry the position and the reason."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " ".join(lines[:2]) if lines else "no message"


def run_bounded(
    args: list[str], label: str, stdin: bytes | None = None, exe: str | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``pandoc ARGS`` under rwgate's bounds; past one, or not started, a one-line PandocError
    naming ``label`` (the file). A non-zero exit is the caller's to word."""
    import subprocess

    timeout, heap = bounds()
    cmd = [exe or pandoc_path(), "+RTS", f"-M{heap}m", "-RTS", *args]
    try:
        proc = subprocess.run(
            cmd,
            input=stdin if stdin is not None else b"",
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise PandocError(
            f"{label}: pandoc took longer than {timeout:.0f} s; split the document"
        ) from exc
    except OSError as exc:
        raise PandocError(f"{label}: cannot run pandoc ({cmd[0]}): {exc.strerror}") from exc
    if proc.returncode != 0 and b"Heap exhausted" in proc.stderr:
        raise PandocError(f"{label}: pandoc needed more than {heap} MB; split the document")
    return proc


def run_pandoc_json(
    path: Path | str, input_fmt: str = "markdown", warnings: list[str] | None = None
) -> dict[str, Any]:
    """The pandoc JSON AST of a document, read sandboxed and bounded (:func:`run_bounded`) in the
    registry's ``input_fmt`` (not pandoc's guess); pandoc's ``[WARNING]`` lines (an include the
    sandbox refused) go to ``warnings`` without the prefix."""
    path = Path(path)
    # "--" ends the options: a file named "-odd.md" must not become "-o dd.md" (an output file).
    args = ["--sandbox", f"--from={input_fmt}", "--to=json", "--", str(path)]
    proc = run_bounded(args, str(path))
    if proc.returncode != 0:
        said = proc.stderr.decode("utf-8", "replace")
        raise PandocError(f"{path}: pandoc failed: {_short_message(said)}")
    try:
        ast = json.loads(proc.stdout)
    except ValueError as exc:
        raise PandocError(f"{path}: pandoc returned output that is not JSON") from exc
    except RecursionError:
        raise PandocError(f"{path}: the document is nested too deeply to be checked") from None
    if not isinstance(ast, dict) or "blocks" not in ast:
        raise PandocError(f"{path}: pandoc returned JSON that is not a document AST")
    if warnings is not None:
        lines = proc.stderr.decode("utf-8", "replace").splitlines()
        warnings.extend(line.removeprefix(_WARNING) for line in lines if line.startswith(_WARNING))
    return ast
