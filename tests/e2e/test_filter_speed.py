"""rw-filter imports only what it needs: no HTTP client on a warm cache, never the MCP server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from pandoc_build import ROOT, copy_fixtures, pandoc

from fakes.crossref import FakeCrossref

PROBE = """
import io, json, sys
sys.stdin = io.TextIOWrapper(io.BytesIO(open(sys.argv[1], "rb").read()))
sys.stdout = io.TextIOWrapper(io.BytesIO())
from rwgate.frontends.pandoc.filter import main
code = main(["html"])
heavy = ("httpx", "httpcore", "mcp", "panflute", "rwgate.readers.builds.latexaux")
heavy = sorted(m for m in heavy if m in sys.modules)
sys.__stdout__.write(json.dumps({"code": code, "heavy": heavy}))
"""


def _probe(ast: Path, cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(ast)],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return dict(json.loads(proc.stdout))


def test_warm_cache_loads_no_http_client(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    copy_fixtures(tmp_path)
    ast = tmp_path / "paper.json"
    subprocess.run(
        [pandoc(), "paper.md", "--citeproc", "-t", "json", "-o", str(ast)], cwd=tmp_path, check=True
    )
    env = {"RWGATE_CROSSREF_URL": fake_crossref.url}
    cold = _probe(ast, tmp_path, env)
    assert cold["code"] == 0 and "httpx" in cold["heavy"]  # the cold run really went online
    warm = _probe(ast, tmp_path, env)
    assert warm == {"code": 0, "heavy": ["panflute"]}  # flagged entries: AST editing only
    assert len(fake_crossref.requests_to("/works")) == 1


def test_shim_runs_the_same_filter(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    copy_fixtures(tmp_path)
    # pandoc runs a .py filter with the `python` on PATH: the environment rwgate is installed in.
    venv_path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    proc = subprocess.run(
        [
            pandoc(),
            "paper.md",
            "--citeproc",
            "--filter",
            str(ROOT / "filters" / "rw-filter.py"),
            "-t",
            "html",
        ],
        cwd=tmp_path,
        env={**os.environ, "RWGATE_CROSSREF_URL": fake_crossref.url, "PATH": venv_path},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count('class="rw-notice') == 3
