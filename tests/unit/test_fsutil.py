from __future__ import annotations

import os
import stat
from pathlib import Path

from rwgate.fsutil import write_atomic


def test_new_file_gets_the_usual_mode_and_an_old_one_keeps_its_own(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        fresh = tmp_path / "report.json"
        write_atomic(fresh, "{}")
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
        kept = tmp_path / "kept.json"
        kept.write_text("x")
        kept.chmod(0o640)
        write_atomic(kept, "y")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o640 and kept.read_text() == "y"
    finally:
        os.umask(old)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
