"""A README that cannot go stale (issue 40): every example of terminal output in README.md and
filters/README.md is what the command prints.

The convention: an HTML comment names the command, and the fenced block right after it is its
output (standard output and standard error, in order)::

    <!-- output of: rwgate check examples/paper.md -->
    ```text
    ...
    ```

Each command runs in bash, in a copy of the checkout's ``examples/`` (and ``scripts/``), offline,
against a snapshot of the bundled sample data, with this venv's console scripts and the pandoc
wheel's pandoc first on PATH. Its output is normalised before comparing: the copy's folder is
``.``, the snapshot is at its default place (``~/.local/share/rwgate/snapshot.sqlite3``), a
snapshot's age is ``N days old``. ``scripts/update-readme-examples`` (``RWGATE_UPDATE_README=1``)
writes every block from a run: review the diff.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from example_data import import_sample

from conftest import require_tool

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DOCUMENTS = [ROOT / "README.md", ROOT / "filters" / "README.md"]
UPDATE = os.environ.get("RWGATE_UPDATE_README") == "1"  # read before the fixtures clear RWGATE_*
MARKER = re.compile(r"^<!-- output of: (?P<command>.+?) -->\n(?P<fence>```[a-z]*)\n", re.M)
DEFAULT_SNAPSHOT = "~/.local/share/rwgate/snapshot.sqlite3"
TOOLS = {"rw-latexmk": ("latexmk", "pdflatex", "bibtex")}
"""Programs a command needs beyond this venv and the pandoc wheel (a CI run without them fails)."""


@dataclass(frozen=True)
class Example:
    document: Path
    command: str
    start: int  # where the block's text begins
    end: int  # where its closing fence begins

    def text(self) -> str:
        return self.document.read_text(encoding="utf-8")[self.start : self.end]


def examples(document: Path) -> list[Example]:
    text = document.read_text(encoding="utf-8")
    found = []
    for m in MARKER.finditer(text):
        close = text.index("\n```\n", m.end() - 1) + 1
        found.append(Example(document, m["command"], m.end(), close))
    return found


ALL = [e for d in DOCUMENTS for e in examples(d)]


def test_the_documents_have_examples() -> None:
    names = {e.document.name for e in ALL}
    assert len(ALL) >= 6 and names == {"README.md"}, [e.command for e in ALL]
    assert len({e.document for e in ALL}) == 2


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A copy of examples/ and scripts/, and the environment every command runs in."""
    tmp = tmp_path_factory.mktemp("readme")
    work = tmp / "work"
    shutil.copytree(ROOT / "examples", work / "examples", ignore=shutil.ignore_patterns("out"))
    (work / "scripts").symlink_to(ROOT / "scripts")
    pandoc = BIN.parent / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    wheel = pandoc / "site-packages" / "pypandoc" / "files"
    env = dict(os.environ)
    env.update(
        PATH=os.pathsep.join([str(BIN), str(wheel), env.get("PATH", "")]),
        RWGATE_SNAPSHOT=str(tmp / "data" / "snapshot.sqlite3"),
        RWGATE_CACHE_DIR=str(tmp / "cache"),
        RWGATE_OFFLINE="1",
        COLUMNS="100",
    )
    import_sample(env)
    return work, env


def normalise(text: str, work: Path, env: dict[str, str]) -> str:
    text = text.replace(env["RWGATE_SNAPSHOT"], DEFAULT_SNAPSHOT)
    text = text.replace(str(work) + "/", "./").replace(str(work), ".")
    return re.sub(r"\b\d+ days old\b", "N days old", text)


def _id(e: Example) -> str:
    return f"{e.document.relative_to(ROOT)}: {e.command[:60]}"


@pytest.mark.parametrize("example", ALL, ids=[_id(e) for e in ALL])
def test_example_is_what_the_command_prints(
    example: Example, workspace: tuple[Path, dict[str, str]]
) -> None:
    work, env = workspace
    for tool in TOOLS.get(example.command.split(" && ")[-1].split()[0], ()):
        require_tool(tool)
    done = subprocess.run(
        ["bash", "-c", example.command],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    printed = normalise(done.stdout, work, env)
    assert "Traceback" not in printed, printed
    if UPDATE and printed != example.text():
        _rewrite(example, printed)
        pytest.skip(f"rewrote the block of {example.command!r} (RWGATE_UPDATE_README=1)")
    assert printed == example.text(), (
        f"{example.document.name}: the block after '<!-- output of: {example.command} -->' is "
        "not what the command prints; scripts/update-readme-examples rewrites it"
    )


def _rewrite(example: Example, printed: str) -> None:
    """The block replaced by what was printed (blocks further down move: located afresh)."""
    text = example.document.read_text(encoding="utf-8")
    for fresh in examples(example.document):
        if fresh.command == example.command:
            text = text[: fresh.start] + printed + text[fresh.end :]
            break
    example.document.write_text(text, encoding="utf-8")


# --- the quick start (issue 46): its block runs as printed on a fresh clone -----------------------

QUICK_START = re.compile(
    r"^<!-- quick start -->\n```sh\n(?P<commands>.*?)```\n\n```text\n(?P<output>.*?)```\n",
    re.M | re.S,
)
HISTORY = re.compile(r"added to the bibliography \d{4}-\d{2}-\d{2}, commit [0-9a-f]{12}")


def _quick_start() -> tuple[list[str], str]:
    found = QUICK_START.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert found, "README.md has no '<!-- quick start -->' block followed by its output"
    lines = [line.split("  #")[0].strip() for line in found["commands"].splitlines()]
    return [line for line in lines if line], found["output"]


def _comparable(text: str) -> str:
    """When git says each entry was added depends on the clone's history, not on rwgate."""
    return HISTORY.sub("added to the bibliography DATE, commit HASH", text)


@pytest.fixture
def fresh_clone(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """``git clone`` of this checkout, with this venv as its ``.venv`` (``make`` finds it up to
    date: no network), and a home of its own: no user's snapshot, cache or config leaks in."""
    clone, home = tmp_path / "clone", tmp_path / "home"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
    (clone / ".venv").symlink_to(BIN.parent)
    os.utime(clone / "pyproject.toml", (0, 0))  # older than .venv/bin/rwgate: not reinstalled
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RWGATE_", "XDG_"))}
    env.update(HOME=str(home), COLUMNS="100", RWGATE_DEMO_OUT=str(tmp_path / "out"))
    home.mkdir()
    return clone, env


def _run(script: str, clone: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
    )
    printed = done.stdout.replace(env["HOME"], "~").replace(str(clone) + "/", "./")
    assert done.returncode == 0 and "Traceback" not in printed, printed[-3000:]
    return re.sub(r"\b\d+ days old\b", "N days old", printed.replace(str(clone), "."))


def test_the_quick_start_runs_as_printed_on_a_fresh_clone(
    fresh_clone: tuple[Path, dict[str, str]],
) -> None:
    clone, env = fresh_clone
    commands, shown = _quick_start()
    assert commands[0] == "make demo" and commands[-1].startswith("rwgate check")
    # Every command as printed; what the README shows is what the last one prints.
    script = "set -e\n" + "".join(f"{c} >/dev/null 2>&1\n" for c in commands[:-1]) + commands[-1]
    printed = _run(script, clone, env)
    assert _comparable(printed) == _comparable(shown)
    assert printed.count("  FLAG  ") == 6 and "0 unverified" in printed


def test_the_sample_alone_gives_the_same_check(fresh_clone: tuple[Path, dict[str, str]]) -> None:
    """The route without the Makefile: `rwgate data import --sample`, then the same check."""
    clone, env = fresh_clone
    commands, shown = _quick_start()
    env["PATH"] = os.pathsep.join([str(BIN), env.get("PATH", "")])
    imported = _run("rwgate data import --sample", clone, env)
    assert imported.startswith("rwgate: the bundled SAMPLE") and "an extract" in imported
    assert "snapshot: ~/.local/share/rwgate/snapshot.sqlite3 (15 record(s)" in imported
    assert _comparable(_run(commands[-1], clone, env)) == _comparable(shown)
