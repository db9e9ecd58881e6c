"""``rwgate lsp`` through a real editor: Neovim (Debian's, headless) and its built-in LSP client,
with the diagnostics read back by a Lua script (tests/e2e/nvim/diagnostics.lua): open a Markdown
paper, cite a retracted work in the buffer, remove it, cite it again and ``:write``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from example_data import EXAMPLES, RWGATE, import_sample
from lsp_client import environment

from conftest import require_tool

SCRIPT = Path(__file__).resolve().parent / "nvim" / "diagnostics.lua"
ERROR, WARNING = 1, 2  # vim.diagnostic.severity


def test_neovim_shows_the_diagnostics_of_the_buffer(tmp_path: Path) -> None:
    nvim = require_tool("nvim")
    env = environment(offline=True)
    import_sample(env)
    shutil.copy(EXAMPLES / "refs.bib", tmp_path / "refs.bib")
    paper = tmp_path / "paper.md"
    original = (EXAMPLES / "paper.md").read_text(encoding="utf-8")
    paper.write_text(original.replace("lacour2014", "watson1953"), encoding="utf-8")
    out = tmp_path / "diagnostics.jsonl"
    env.update(
        RWGATE_NVIM_OUT=str(out),
        RWGATE_NVIM_SERVER=RWGATE,
        RWGATE_NVIM_KEY="lacour2014",
        RWGATE_NVIM_ADDED="A field experiment that did not hold [@lacour2014].",
        HOME=str(tmp_path),
    )
    done = subprocess.run(
        [nvim, "--headless", "--clean", "-n", "-c", f"luafile {SCRIPT}", str(paper)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert not [r for r in rows if r.get("timeout")], rows
    steps = {step: [r for r in rows if r["step"] == step] for step in ("open", "cited", "removed")}
    steps["saved"] = [r for r in rows if r["step"] == "saved"]

    (wakefield,) = [r for r in steps["open"] if r["key"] == "wakefield1998"]
    assert wakefield["text"] == "wakefield1998"
    assert wakefield["code"] == "retracted" and 2 in wakefield["tags"]  # 2: Deprecated
    assert wakefield["severity"] == WARNING
    assert wakefield["message"].startswith("Retracted 2010; notice doi:")
    assert not [r for r in steps["open"] if r["key"] == "lacour2014"]

    (cited,) = [r for r in steps["cited"] if r["key"] == "lacour2014"]
    assert cited["text"] == "lacour2014" and cited["code"] == "retracted"
    assert not [r for r in steps["removed"] if r["key"] == "lacour2014"]
    assert [r["text"] for r in steps["saved"] if r["key"] == "lacour2014"] == ["lacour2014"]
    assert "[@lacour2014]" in paper.read_text(encoding="utf-8")  # :write, by the editor
