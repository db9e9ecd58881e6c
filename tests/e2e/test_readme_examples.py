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
