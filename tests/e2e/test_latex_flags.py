"""Issue 46 item 5 for LaTeX: rw-latexmk's help and every hint it prints name only flags it
accepts. Its help was written by hand and left out ``--recover-dois``, which it takes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from test_latex_build import BIN, doc, rw_latexmk  # noqa: F401 (fixtures)

from rwgate.frontends.latex.hooks import own_options

_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*[a-z]")


def _accepted() -> set[str]:
    return {name for name in own_options() if name not in ("--tex", "--ran")}


def test_the_help_lists_every_option_and_only_those() -> None:
    shown = subprocess.run(
        [str(BIN / "rw-latexmk"), "--help"], capture_output=True, text=True, check=True
    ).stdout
    named = set(_FLAG.findall(shown))
    assert "--recover-dois" in named
    assert named == {n for n in _accepted() if n != "--help"}


def test_every_flag_its_messages_suggest_is_accepted(doc: Path) -> None:  # noqa: F811
    said = ""
    for args in ((), ("--policy", "strict"), ("--offline",), ("--recover-dois", "--no-memo")):
        run = rw_latexmk(*args, "natbib.tex")
        said += run.stdout + run.stderr
    suggested = set(_FLAG.findall(said))
    assert suggested, said[-2000:]
    assert suggested <= _accepted() | {"--help"}, suggested - _accepted()
