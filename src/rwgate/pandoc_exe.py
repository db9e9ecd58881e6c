"""Finding and running pandoc.

rwgate reads Markdown through pandoc itself, so that the keys it checks are exactly the keys
pandoc's citeproc will see (footnotes, tables, ``nocite`` and every other corner of pandoc's syntax
included). pandoc runs with ``--sandbox``: an include directive (reStructuredText ``.. include::``,
Org ``#+INCLUDE``, AsciiDoc ``include::``) could otherwise make it read any file on the machine,
which the MCP server, whose manuscripts an agent may have written, must not allow; rwgate reads
bibliographies itself, so pandoc needs no file but the manuscript.

A ``pandoc`` on PATH wins, because that is the one the user builds with; otherwise the binary that
the ``pypandoc-binary`` wheel ships is used, found on disk so that no heavy import is needed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from rwgate.errors import ToolError

PANDOC_TIMEOUT = 120.0
LIMITS: ContextVar[tuple[float, int | None]] = ContextVar(
    "rwgate_pandoc_limits", default=(PANDOC_TIMEOUT, None)
)
"""(seconds, heap MB or None) for pandoc runs in this context: a caller that serves others (the
MCP server) bounds each call's pandoc; ``+RTS -M`` is pandoc's own heap limit (its manual's
advice for untrusted input)."""
_WARNING = "[WARNING] "


class PandocError(ToolError):
    """pandoc could not read a document; the message is one line and names the file."""


class PandocNotFound(PandocError):
    """No pandoc executable is available."""


def _bundled_pandoc() -> str | None:
    """The pandoc inside the pypandoc-binary wheel, located without importing pypandoc."""
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


def pandoc_path() -> str:
    """The pandoc to run: the one on PATH, else the one pypandoc-binary ships."""
    on_path = shutil.which("pandoc")
    if on_path:
        return on_path
    bundled = _bundled_pandoc()
    if bundled:
        return bundled
    raise PandocNotFound(
        "pandoc not found: install pandoc (https://pandoc.org/installing.html) "
        "or `pip install pypandoc-binary`"
    )


def _short_message(text: str) -> str:
    """pandoc's error in one line: its first two lines carry the position and the reason."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " ".join(lines[:2]) if lines else "no message"


def run_pandoc_json(
    path: Path | str, input_fmt: str = "markdown", warnings: list[str] | None = None
) -> dict[str, Any]:
    """The pandoc JSON AST of a document (what a filter would receive on stdin), read sandboxed.

    pandoc's ``[WARNING]`` lines (an include the sandbox refused, for one) are appended to
    ``warnings`` when it is given, without the prefix. ``input_fmt`` is the reader's
    (:data:`rwgate.references.readers.READERS`): the registry, not pandoc's guess, chooses it.
    """
    path = Path(path)
    fmt = input_fmt
    # "--" ends the options: a file named "-odd.md" must not become "-o dd.md" (an output file).
    timeout, heap = LIMITS.get()
    rts = ["+RTS", f"-M{heap}m", "-RTS"] if heap else []
    cmd = [pandoc_path(), *rts, "--sandbox", f"--from={fmt}", "--to=json", "--", str(path)]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired as exc:
        raise PandocError(f"{path}: pandoc timed out after {timeout:.0f}s") from exc
    except OSError as exc:
        raise PandocError(f"{path}: cannot run pandoc ({cmd[0]}): {exc.strerror}") from exc
    if proc.returncode != 0:
        said = proc.stderr.decode("utf-8", "replace")
        message = _short_message(said)
        if heap and "Heap exhausted" in said:
            raise PandocError(f"{path}: pandoc needed more than {heap} MB; split the document")
        raise PandocError(f"{path}: pandoc failed: {message}")
    try:
        ast = json.loads(proc.stdout)
    except ValueError as exc:
        raise PandocError(f"{path}: pandoc returned output that is not JSON") from exc
    except RecursionError:
        raise PandocError(f"{path}: the document is nested too deeply to be checked") from None
    if not isinstance(ast, dict) or "blocks" not in ast:
        raise PandocError(f"{path}: pandoc returned JSON that is not a document AST")
    if warnings is not None:
        for line in proc.stderr.decode("utf-8", "replace").splitlines():
            if line.startswith(_WARNING):
                warnings.append(line.removeprefix(_WARNING))
    return ast
