"""Help is help: every console script and every ``rwgate`` sub-command answers ``--help`` and
``--version`` with plain text and exit 0 (``rw-filter --help`` used to read standard input as a
pandoc document and fail), and a missing optional extra is one line naming what to install."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from example_data import ROOT, import_sample

from rwgate import __version__
from rwgate.frontends.cli.main import build_parser

BIN = Path(sys.executable).parent
MARKUP = re.compile(r"`|:(?:func|class|mod|meth|data):|Traceback")  # no RST, no Markdown


def _commands(
    parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()
) -> list[tuple[str, ...]]:
    """Every sub-command path of ``rwgate`` (``data import``, ``cache clear``, ...)."""
    found = [prefix]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _commands(sub, (*prefix, name))
    return found


COMMANDS = _commands(build_parser())
HELP_CASES = COMMANDS


def _run(args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60, **kw
    )


def test_every_subcommand_is_listed() -> None:
    names = {c[0] for c in COMMANDS if c}
    assert {"check", "data", "bibtex", "biber", "latexmk", "verify", "mcp", "screen"} <= names
    assert ("data", "import") in COMMANDS and ("cache", "clear") in COMMANDS


@pytest.mark.parametrize("command", HELP_CASES, ids=lambda c: " ".join(c) or "rwgate")
def test_rwgate_help_is_plain_text(command: tuple[str, ...]) -> None:
    done = _run([str(BIN / "rwgate"), *command, "--help"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip(), "no help text"
    assert done.stderr == ""
    assert not MARKUP.search(done.stdout), done.stdout


@pytest.mark.parametrize("script", ["rw-filter", "rw-latexmk"])
@pytest.mark.parametrize("flag", ["--help", "-h", "--version"])
def test_console_scripts_answer_before_reading_stdin(script: str, flag: str) -> None:
    done = _run([str(BIN / script), flag])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not a pandoc JSON document" not in done.stdout + done.stderr
    assert done.stderr == ""
    assert not MARKUP.search(done.stdout), done.stdout
    if flag == "--version":
        assert done.stdout == f"{script} (rwgate {__version__})\n"
    else:
        assert done.stdout.startswith("usage:")


@pytest.mark.parametrize("command", [(), ("bibtex",), ("biber",), ("latexmk",)])
def test_version(command: tuple[str, ...]) -> None:
    done = _run([str(BIN / "rwgate"), *command, "--version"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"rwgate {__version__}" in done.stdout


def test_rw_filter_still_filters_with_a_format_argument() -> None:
    """``rw-filter html`` (what pandoc runs) is not mistaken for a question."""
    done = _run([str(BIN / "rw-filter"), "html"])
    assert done.returncode == 2
    assert "not a pandoc JSON document" in done.stderr


def _without(tmp_path: Path, *modules: str) -> dict[str, str]:
    """The environment of a Python that cannot import ``modules`` (a sitecustomize)."""
    site = tmp_path / "site"
    site.mkdir()
    blocked = "".join(f"sys.modules[{m!r}] = None\n" for m in modules)
    (site / "sitecustomize.py").write_text("import sys\n" + blocked)
    return dict(os.environ, PYTHONPATH=str(site))


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_mcp_without_its_extra_is_one_line(tmp_path: Path) -> None:
    """Through the real entry point, with the MCP SDK made unimportable by a sitecustomize."""
    env = _without(tmp_path, "mcp", "mcp_types")
    line = _one_line(_run([str(BIN / "rwgate"), "mcp"], env=env))
    assert line.startswith("rwgate: error: rwgate mcp needs the MCP SDK")
    assert "pip install '.[mcp]'" in line


def test_screen_without_duckdb_is_one_line(tmp_path: Path) -> None:
    env = _without(tmp_path, "duckdb")
    env["RWGATE_SNAPSHOT"] = str(tmp_path / "s.sqlite3")
    import_sample(env)
    refs = sorted(str(p) for p in (ROOT / "examples" / "screen").glob("*.csv"))
    done = _run([str(BIN / "rwgate"), "screen", *refs, "--out", str(tmp_path / "out")], env=env)
    line = _one_line(done)
    assert "rwgate screen needs DuckDB" in line and "pip install '.[screen]'" in line
