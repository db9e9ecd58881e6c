"""The pandoc versions the suite drives rwgate's filters under, each a real binary.

``scripts/install-test-tools`` puts them in ``.tools/pandoc-VERSION/pandoc``: Debian 12's 2.17
(the floor, unpacked from its .deb), 2.19.2 and 3.5 (the binaries pypandoc-binary 1.10 and 1.14
pin); "newest" is the venv's own wheel. A missing one skips its tests, or fails them in CI
(``RWGATE_REQUIRE_TOOLS=1``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import require_tool, wheel_pandoc

ROOT = Path(__file__).resolve().parents[2]
VERSIONS = ("2.17", "2.19.2", "3.5", "newest")


def pandoc_of(version: str) -> str:
    """The binary of ``version`` (one of :data:`VERSIONS`)."""
    if version == "newest":
        return wheel_pandoc() or require_tool("pandoc")
    exe = ROOT / ".tools" / f"pandoc-{version}" / "pandoc"
    if not exe.is_file():
        message = f"pandoc {version} is not installed (scripts/install-test-tools)"
        if os.environ.get("RWGATE_REQUIRE_TOOLS") == "1":
            pytest.fail(message + " (RWGATE_REQUIRE_TOOLS=1)")
        pytest.skip(message)
    return str(exe)


def path_with(exe: str) -> str:
    """PATH with ``exe``'s folder first (``pandoc`` there is ``exe``) and this venv's scripts."""
    import sys

    folders = [str(Path(exe).parent), str(Path(sys.executable).parent)]
    return os.pathsep.join([*folders, os.environ.get("PATH", "")])
