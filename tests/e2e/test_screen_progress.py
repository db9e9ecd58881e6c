"""`rwgate screen` draws a progress bar on a terminal only (issue 46, item 7): DuckDB draws its bar
on stdout, so with stdout piped into a report the bar must be off even when stderr is a terminal
(on main it was left in the piped report)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

_SNIPPET = """
from rwgate.frontends.screen.engine import open_engine
engine = open_engine("duckdb")
print(engine.fetch("SELECT current_setting('enable_progress_bar')")[0][0])
"""


def _bar(stdout_tty: bool) -> str:
    """The engine's progress setting with stderr on a real terminal, stdout on one or a pipe."""
    master, slave = pty.openpty()
    out_master, out_slave = pty.openpty() if stdout_tty else (None, None)
    try:
        done = subprocess.run(
            [sys.executable, "-c", _SNIPPET],
            stdout=out_slave if stdout_tty else subprocess.PIPE,
            stderr=slave,
            timeout=120,
            check=True,
        )
        if stdout_tty:
            assert out_master is not None
            return os.read(out_master, 100).decode().strip()
        return done.stdout.decode().strip()
    finally:
        os.close(master)
        os.close(slave)
        for fd in (out_master, out_slave):
            if fd is not None:
                os.close(fd)


def test_no_progress_bar_when_stdout_is_piped() -> None:
    assert _bar(stdout_tty=False) == "False"


def test_a_progress_bar_on_a_terminal() -> None:
    assert _bar(stdout_tty=True) == "True"
