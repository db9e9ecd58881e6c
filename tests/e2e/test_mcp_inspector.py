"""The MCP Inspector CLI (npm ``@modelcontextprotocol/inspector``, ``--cli``) against ``rwgate mcp``
over stdio: tools/list, resources/list, prompts/list and one call of every tool, each answer
parsed as the Inspector prints it. Another real client than the Python SDK's, driven the way a
developer pokes at a server. Installed by scripts/install-test-tools into .tools/inspector."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_mcp import EXAMPLES, WAKEFIELD

from conftest import require_tool
from fakes.crossref import FakeCrossref
from fakes.openalex import FakeOpenAlex

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR = ROOT / ".tools" / "inspector" / "node_modules" / ".bin" / "mcp-inspector"
RWGATE = str(Path(sys.executable).with_name("rwgate"))
LACOUR = "10.1126/science.1256151"
CALLS: dict[str, list[str]] = {
    "rw_check_doi": [f"doi={WAKEFIELD}"],
    "rw_check_dois": [f'dois=["{WAKEFIELD}", "{LACOUR}"]'],
    "rw_check_author": ["name=Wakefield"],
    "rw_search": ["query=vaccine"],
    "rw_recent_retractions": ["limit=5"],
    "rw_get_record": [f"doi={WAKEFIELD}"],
    "rw_data_status": [],
    "rw_check_bibliography": ["path=refs.bib"],
    "rw_check_manuscript": ["path=paper.md"],
    "verify_citation": ["title=When contact changes minds", "authors=LaCour"],
    "search_references": ["query=contact changes minds"],
    "get_bibtex": [f"doi={LACOUR}"],
}


@pytest.fixture
def fake_openalex() -> Any:
    with FakeOpenAlex() as fake:
        yield fake


def _inspect(method: str, fake: FakeCrossref, openalex: FakeOpenAlex, *extra: str) -> Any:
    tool = str(INSPECTOR) if INSPECTOR.exists() else require_tool("mcp-inspector")
    env = {
        **os.environ,
        "RWGATE_CROSSREF_URL": fake.url,
        "RWGATE_OPENALEX_URL": openalex.url,
        "RWGATE_NO_CACHE": "1",
    }
    server = ["-e", f"RWGATE_CROSSREF_URL={fake.url}", "-e", f"RWGATE_OPENALEX_URL={openalex.url}",
              "-e", "RWGATE_NO_CACHE=1"]  # fmt: skip
    cmd = [tool, "--cli", *server, RWGATE, "mcp", "--root", str(EXAMPLES), "--method", method]
    proc = subprocess.run(
        [*cmd, *extra], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr[-1500:] + proc.stdout[-1500:]
    return json.loads(proc.stdout)


def test_the_inspector_lists_and_calls_everything(
    fake_crossref: FakeCrossref, fake_openalex: FakeOpenAlex
) -> None:
    tools = _inspect("tools/list", fake_crossref, fake_openalex)["tools"]
    assert {t["name"] for t in tools} == set(CALLS)
    assert all(t["inputSchema"].get("additionalProperties") is False for t in tools)
    resources = _inspect("resources/list", fake_crossref, fake_openalex)["resources"]
    assert {r["uri"] for r in resources} == {"rwgate://data-status", "rwgate://policy"}
    prompts = _inspect("prompts/list", fake_crossref, fake_openalex)["prompts"]
    assert len(prompts) == 2
    for name, args in CALLS.items():
        extra = ["--tool-name", name, *(x for a in args for x in ("--tool-arg", a))]
        answer = _inspect("tools/call", fake_crossref, fake_openalex, *extra)
        assert not answer.get("isError"), (name, answer)
        data = answer.get("structuredContent") or json.loads(answer["content"][0]["text"])
        assert isinstance(data, dict) and data, name
    doi = _inspect("tools/call", fake_crossref, fake_openalex, "--tool-name", "rw_check_doi",
                   "--tool-arg", f"doi={WAKEFIELD}")  # fmt: skip
    assert doi["structuredContent"]["citation"]["status"] == "retracted"
