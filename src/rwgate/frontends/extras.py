"""Optional extras: a missing one is one line naming the install command, never a traceback.

``rwgate screen`` needs DuckDB, ``--engine spark`` pyspark, ``rwgate mcp`` the MCP SDK. Each is an
extra of the package (``pip install '.[screen]'`` from a clone, as the README installs). Front ends
call :func:`missing_extra` on an :class:`ImportError` they catch and print the one line it gives.
"""

from __future__ import annotations

from rwgate.errors import UsageError

#: top-level module -> (extra, what it is for)
EXTRAS: dict[str, tuple[str, str]] = {
    "duckdb": ("screen", "DuckDB"),
    "sqlglot": ("screen", "SQLGlot"),
    "pyspark": ("spark", "pyspark"),
    "mcp": ("mcp", "the MCP SDK"),
    "mcp_types": ("mcp", "the MCP SDK"),
}


class MissingExtra(UsageError):
    """An optional dependency is not installed; the message names the extra to install."""


def install_hint(extra: str) -> str:
    """How the README installs an extra (from a clone, or from the package index)."""
    return f"pip install '.[{extra}]' in a clone of rwgate (or pip install 'rwgate[{extra}]')"


def missing_extra(exc: ImportError, command: str) -> MissingExtra | None:
    """The one-line error for ``exc`` when it is a missing extra's module, else None."""
    name = (exc.name or "").split(".")[0]
    if name not in EXTRAS:
        return None
    extra, what = EXTRAS[name]
    return MissingExtra(f"{command} needs {what}, which is not installed: {install_hint(extra)}")
