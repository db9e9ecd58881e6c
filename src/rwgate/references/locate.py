"""Where a manuscript's ``bibliography`` names point, found as pandoc finds them.

Kept free of heavy imports: the pandoc filter's verdict memo resolves the same names before it
knows whether the full check (models, readers) has to run at all.
"""

from __future__ import annotations

import contextlib
from pathlib import Path


def resolve_bibliography(
    name: str, document: Path, resource_path: list[Path] | None = None
) -> Path | None:
    """Find a bibliography the way pandoc does: absolute, else document dir, cwd, resource path."""
    written = Path(name)
    # "~nosuchuser/refs.bib" names no home folder: then the name is looked up as written.
    with contextlib.suppress(RuntimeError):
        written = written.expanduser()
    if written.is_absolute():
        return written.resolve() if written.is_file() else None
    bases = [document.parent, Path.cwd(), *(resource_path or [])]
    for base in bases:
        candidate = base / written
        if candidate.is_file():
            return candidate.resolve()
    return None
