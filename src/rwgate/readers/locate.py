"""Where a manuscript's ``bibliography`` names point, found as pandoc finds them. Light to import
(the filter reads it); every candidate looked at is recorded (:mod:`rwgate.settings.recorded`)
for the memos that replay a verdict.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from rwgate.settings import recorded

Allowed = Callable[[Path], bool]
"""Which files may be read (the MCP server's roots): the path as the document names it."""

OUTSIDE = "lies outside the allowed roots; refused"
"""What is said of any file outside the roots, whether it exists or not, never naming it."""


class OutsideRoots(Exception):
    """A name the document gives points outside the allowed roots (refused before any look)."""


def resolve_bibliography(
    name: str,
    document: Path,
    resource_path: list[Path] | None = None,
    allowed: Allowed | None = None,
) -> Path | None:
    """Find a bibliography the way pandoc does: absolute, else document dir, cwd, resource path.

    With ``allowed``, places outside it are never looked at, and a name that can only mean such a
    place raises :class:`OutsideRoots` (so existence outside the roots is never revealed).
    """
    written = Path(name)
    # "~nosuchuser/refs.bib" names no home folder: then the name is looked up as written.
    with contextlib.suppress(RuntimeError):
        written = written.expanduser()
    if written.is_absolute():
        candidates = [written]
    else:
        candidates = [
            base / written for base in [document.parent, Path.cwd(), *(resource_path or [])]
        ]
    if allowed is not None:
        candidates = [c for c in candidates if allowed(c)]
        if not candidates:
            raise OutsideRoots(name)
    for candidate in candidates:
        # Recorded, found or not: a file that appears at an earlier candidate later changes
        # which bibliography is read, so a memo must not replay (rwgate.settings.recorded).
        if recorded.is_file(candidate):
            return candidate.resolve()
    return None
