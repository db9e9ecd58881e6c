"""Offline settings over a snapshot of the real Retraction Watch extract, imported as a full
export (so an unlisted work is clean): what the unit tests of identifiers judge against."""

from __future__ import annotations

from pathlib import Path

import pytest

from rwgate.settings.config import Settings, load_settings
from rwgate.sources.snapshot.store import import_files

RW = Path(__file__).resolve().parents[1] / "fixtures" / "rw"


def offline_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Settings for an offline check against a snapshot of ``rw-extract-2025.csv`` in
    ``tmp_path``, also named by ``RWGATE_SNAPSHOT`` for code that reads the environment."""
    snapshot = tmp_path / "s.sqlite3"
    import_files(snapshot, [RW / "rw-extract-2025.csv"], allow_shrink=True)  # as a full export
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(snapshot))
    return load_settings(tmp_path, overrides={"offline": True, "snapshot": snapshot})
