"""`scripts/install-test-tools` (what `make test` and `.ci/run` run first) on a machine without the
tools and without root: one message naming the packages and the command, and a non-zero exit."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_without_root_it_names_the_packages_and_stops(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "dirname", "apt-get"):  # apt-get is there, but we are not root
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    (bin_dir / "id").write_text("#!/bin/sh\necho 1000\n")
    (bin_dir / "id").chmod(0o755)
    done = subprocess.run(
        [str(bin_dir / "bash"), str(ROOT / "scripts" / "install-test-tools")],
        env={"PATH": str(bin_dir), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("install-test-tools: missing latexmk pdflatex")
    assert "chromium" in lines[0] and "nodejs npm" in lines[0]
    assert "sudo apt-get install --no-install-recommends latexmk" in lines[0]
    assert "make test-fast" in lines[0]
