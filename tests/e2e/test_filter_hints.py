"""Issue 46 item 5: what rw-filter and the Lua filter tell a user to do is something they take.

A pandoc filter takes no options: rw-filter reads the environment and the ``rwgate:`` metadata.
On 0c31820 its lines said "`--recover-dois` looks them up by title" and "run with --offline (or
RWGATE_OFFLINE=1)", options of ``rwgate check`` that no filter can be given. Here each option a
filter's line names must be a pandoc option (``--citeproc``), each variable one the filter reads,
and each metadata key one a document may set.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
from pathlib import Path

import pytest
from pandoc_build import pandoc, rw_filter

from rwgate.settings.config import _ENV, DOCUMENT_KEYS

ROOT = Path(__file__).resolve().parents[2]
LUA = ROOT / "filters" / "rwgate.lua"
FILTER_SOURCES = [
    *(ROOT / "src" / "rwgate" / "frontends" / "pandoc").glob("*.py"),
    ROOT / "_extensions" / "rwgate" / "rwgate.lua",
]

BIB = """@article{nodoi, title={A work cited without its DOI}, journal={J}, year={2001}}
@article{online, title={A work only Crossref knows}, journal={J}, year={2002}, doi={10.5555/hint.1}}
"""


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(("rw-filter:", "rwgate:"))]


@pytest.fixture(scope="module")
def pandoc_options() -> set[str]:
    out = subprocess.run([pandoc(), "--help"], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"--[a-z][a-z-]*", out))


def _read_by_the_filter(name: str) -> bool:
    return name in _ENV or any(name in path.read_text(encoding="utf-8") for path in FILTER_SOURCES)


@pytest.mark.parametrize("front", ["rw-filter", "lua"])
def test_every_hint_names_what_the_filter_takes(
    tmp_path: Path, front: str, pandoc_options: set[str]
) -> None:
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    (tmp_path / "paper.md").write_text(
        "---\nbibliography: refs.bib\n---\n\nSee [@nodoi] and [@online].\n", encoding="utf-8"
    )
    port = _closed_port()  # Crossref "down": connection refused, the no-network hint
    env = {
        **os.environ,
        "RWGATE_CROSSREF_URL": f"http://127.0.0.1:{port}",
        "RWGATE_OPENALEX_URL": f"http://127.0.0.1:{port}",
        "RWGATE_FILTER": rw_filter(),
    }
    filt = ["--filter", rw_filter()] if front == "rw-filter" else ["--lua-filter", str(LUA)]
    proc = subprocess.run(
        [pandoc(), "paper.md", "--citeproc", *filt, "-t", "plain", "-o", "out.txt"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = _lines(proc.stderr)
    said = "\n".join(lines)
    assert "Traceback" not in proc.stderr
    assert "has no DOI" in said and "connection refused" in said, said  # both hints are said
    assert "RWGATE_RECOVER_DOIS=1" in said and "set RWGATE_OFFLINE=1" in said, said
    for line in lines:
        for option in re.findall(r"(?<![\w-])--[a-z][a-z-]*", line):
            assert option in pandoc_options, (option, line)
        for name in re.findall(r"\bRWGATE_[A-Z_]+", line):
            assert _read_by_the_filter(name), (name, line)
        for key in re.findall(r"rwgate: \{([a-z-]+):", line):
            assert key.replace("-", "_") in DOCUMENT_KEYS, (key, line)
