"""What the e2e tests of LaTeX documents judged by ``rwgate check`` share: a document folder
wired to the fake Crossref and this venv's scripts, and ``rwgate check`` run in it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fakes.crossref import FakeCrossref

BIN = Path(sys.executable).parent


def enter_folder(
    folder: Path, fake_crossref: FakeCrossref, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Make ``folder`` the working directory, with the fake Crossref as the registry and this
    venv's scripts (rw-latexmk's hooks) first on PATH; ``folder``."""
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.chdir(folder)
    return folder


def rwgate_check(*args: str) -> subprocess.CompletedProcess[str]:
    """``rwgate check ARGS`` in a fresh process, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "rwgate", "check", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
