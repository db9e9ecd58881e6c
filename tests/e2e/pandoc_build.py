"""Building documents with real pandoc and rw-filter: what the e2e filter tests share."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from conftest import require_tool, wheel_pandoc

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "pandoc"
FLAGGED_KEYS = ("wakefield1998", "lacour2014", "njei2011")
CLEAN_KEYS = ("kucsko2013", "watson1953")


def pandoc() -> str:
    """The pandoc the e2e tests drive: the wheel's, named explicitly, whatever pandoc is on PATH
    (a test about another version takes its binary from ``pandoc_matrix``)."""
    return wheel_pandoc() or require_tool("pandoc")  # no wheel: PATH's, or skip (fail in CI)


def rw_filter() -> str:
    """The installed console script next to this Python, else the checkout's shim."""
    script = Path(sys.executable).parent / "rw-filter"
    return str(script if script.is_file() else ROOT / "filters" / "rw-filter.py")


@dataclass
class Build:
    returncode: int
    stderr: str
    output: Path

    @property
    def text(self) -> str:
        return self.output.read_text(encoding="utf-8")


def copy_fixtures(dest: Path, *names: str) -> None:
    for name in names or ("paper.md", "refs.bib", "refs.json", "numeric.csl"):
        shutil.copy(FIXTURES / name, dest / name)


def build(
    cwd: Path,
    args: list[str],
    output: str,
    env: dict[str, str] | None = None,
    document: str = "paper.md",
    filter_first: bool = False,
) -> Build:
    """Run ``pandoc DOCUMENT --citeproc --filter rw-filter ARGS -o OUTPUT`` in ``cwd``."""
    filt = ["--filter", rw_filter()]
    middle = [*filt, *args] if filter_first else [*args, *filt]
    cmd = [pandoc(), document, "--wrap=none", *middle, "-o", output]
    proc = subprocess.run(
        cmd,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return Build(proc.returncode, proc.stderr, cwd / output)


def write_doc(path: Path, front: str, body: str) -> None:
    path.write_text(f"---\n{front.strip()}\n---\n\n{body.strip()}\n", encoding="utf-8")


# --- unit tests of the pieces ------------------------------------------------------------------
