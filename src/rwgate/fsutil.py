"""Atomic writes: a generated file is either the old one or the complete new one, never half."""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def _mode_for(path: Path) -> int:
    """The existing file's mode, else what a plain ``open()`` would give (0666 less the umask);
    ``mkstemp`` alone would leave every report readable by its owner only."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    write_atomic_with(path, lambda fh: fh.write(raw))


def write_atomic_with(path: Path, writer: Callable[[BinaryIO], object]) -> None:
    """Let ``writer`` write ``path``'s new content in pieces, atomically: into a temporary file in
    the same folder, then a rename (a large report is never held whole in memory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            writer(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def prune_older(folder: Path, seconds: float, pattern: str = "*.json") -> None:
    """Remove the entries of a cache folder (memo entries, parsed bibliographies) not written or
    used for ``seconds``; an entry that cannot be removed is left (it only takes room)."""
    old = time.time() - seconds
    for entry in folder.glob(pattern):
        with contextlib.suppress(OSError):
            if entry.stat().st_mtime < old:
                entry.unlink()
