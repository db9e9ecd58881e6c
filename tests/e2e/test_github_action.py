"""The GitHub Action (action.yml, composite): its shell steps run here as a runner runs them,
with a fake ``GITHUB_*`` environment, and the job summary and SARIF they write are checked.

Steps that ``uses:`` another action (setup-python, cache, the SARIF upload) are GitHub's and are
not run; the install step is not run either (rwgate is installed in this environment already).
The ``${{ ... }}`` expressions of the steps' ``env:`` and ``if:`` are evaluated by a small
interpreter of the subset action.yml uses, which fails on anything else.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from example_data import import_sample

from fakes.crossref import closed_port_url

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BIN = Path(sys.executable).parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _value(name: str, inputs: dict[str, str], outputs: dict[str, str]) -> str:
    if name.startswith("inputs."):
        return inputs[name.removeprefix("inputs.")]
    if name.startswith("steps.check.outputs."):
        return outputs.get(name.removeprefix("steps.check.outputs."), "")
    raise AssertionError(f"expression not understood by the test: {name}")


def _condition(text: str, inputs: dict[str, str], outputs: dict[str, str]) -> bool:
    def operand(token: str) -> Any:
        token = token.strip()
        if token == "always()":
            return True
        if token.startswith("'") and token.endswith("'"):
            return token[1:-1]
        return _value(token, inputs, outputs)

    result = True
    for clause in text.split("&&"):
        if "==" in clause or "!=" in clause:
            op = "==" if "==" in clause else "!="
            left, right = clause.split(op)
            holds = (operand(left) == operand(right)) == (op == "==")
        else:
            holds = bool(operand(clause))
        result = result and holds
    return result


def run_action(
    tmp: Path, workspace: Path, runner_env: dict[str, str] | None = None, **given: str
) -> tuple[int, dict[str, str], str]:
    """Run the action's shell steps; (the job's exit code, step outputs, the job summary).
    ``runner_env``: more of the runner's variables (``GITHUB_BASE_REF`` on a pull request)."""
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    inputs.update(given)
    runner = tmp / "runner"
    runner.mkdir(parents=True)
    summary, output = runner / "summary.md", runner / "output"
    summary.touch()
    outputs: dict[str, str] = {}
    code = 0
    for step in ACTION["runs"]["steps"]:
        if "uses" in step or step["name"] == "Install rwgate":
            continue
        if "if" in step and not _condition(step["if"], inputs, outputs):
            continue
        env = dict(os.environ)
        env.update(
            PATH=f"{BIN}{os.pathsep}{env['PATH']}",
            GITHUB_ACTION_PATH=str(ROOT),
            GITHUB_WORKSPACE=str(workspace),
            GITHUB_STEP_SUMMARY=str(summary),
            GITHUB_OUTPUT=str(output),
            RUNNER_TEMP=str(runner),
            RUNNER_OS="Linux",
        )
        env.update(runner_env or {})
        said = dict(outputs)
        for key, value in step.get("env", {}).items():
            env[key] = _EXPR.sub(lambda m, said=said: _value(m.group(1), inputs, said), str(value))
        assert step["shell"] == "bash"
        done = subprocess.run(
            ["bash", "-e", "-c", step["run"]], cwd=workspace, env=env, timeout=300, check=False
        )
        if output.exists():
            outputs = dict(
                line.split("=", 1) for line in output.read_text().splitlines() if "=" in line
            )
        code = done.returncode
        if code != 0:
            break
    return code, outputs, summary.read_text(encoding="utf-8")


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checked-out repository with the bundled example, and a snapshot of its sample data."""
    ws = tmp_path / "ws"
    (ws / "paper").mkdir(parents=True)
    for name in ("paper.md", "refs.bib"):
        (ws / "paper" / name).write_bytes((EXAMPLES / name).read_bytes())
    monkeypatch.setenv("RWGATE_SNAPSHOT", str(tmp_path / "snapshot.sqlite3"))
    import_sample(dict(os.environ))
    return ws


def test_strict_fails_the_job_with_a_summary_and_sarif(tmp_path: Path, workspace: Path) -> None:
    code, outputs, summary = run_action(
        tmp_path, workspace, paths="paper/*.md", policy="strict", offline="true"
    )
    assert code == 1
    assert outputs["exit-code"] == "1" and outputs["flagged"] == "7"
    head = summary.splitlines()[0]  # the headline: what the policy did (issue 40)
    assert head.startswith("## :x: rwgate: 4 works failed the policy: 3 retracted, 1 withdrawn; ")
    assert head.endswith("the gate failed under the strict policy")
    assert "| :x: retracted | `wakefield1998` |" in summary
    assert "paper/refs\\.bib:22" in summary  # the entry's file:line, relative to the workspace
    sarif = json.loads(Path(outputs["sarif"]).read_text())
    results = sarif["runs"][0]["results"]
    assert {r["properties"]["key"] for r in results if r["level"] == "error"} >= {
        "wakefield1998",
        "lacour2014",
    }
    # Each result is on a manuscript line citing the work, its entry related (issue 50).
    uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "paper/paper.md"
    related = results[0]["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert related == "paper/refs.bib"
    assert json.loads(Path(outputs["report"]).read_text())["schema"] == "rwgate.report/1"


def test_default_policy_passes_and_a_failed_data_update_only_warns(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RWGATE_RW_CSV_URL", closed_port_url() + "/retraction-watch.csv")
    monkeypatch.setenv("RWGATE_OFFLINE", "1")  # the check itself: snapshot only (no Crossref here)
    code, outputs, summary = run_action(
        tmp_path, workspace, paths="paper/paper.md\npaper/refs.bib", mailto="ci@example.org"
    )
    assert code == 0
    assert outputs["exit-code"] == "0"
    head = summary.splitlines()[0]  # in the colour of the gravest finding: retracted
    assert head.startswith("## :red_circle: rwgate: ") and "works annotated: " in head
    assert head.endswith("the gate passed under the default policy; \\-\\-policy strict would fail")


def test_bad_inputs_fail_with_one_line(tmp_path: Path, workspace: Path) -> None:
    code, outputs, summary = run_action(
        tmp_path, workspace, paths="paper/*.md", policy="lenient", offline="true"
    )
    assert code == 2 and outputs["exit-code"] == "2"
    second = tmp_path / "second"
    second.mkdir()
    code, outputs, summary = run_action(
        second, workspace, paths="paper/missing.bib", offline="true"
    )
    assert code == 2
    assert "FAILED: an input could not be read" in summary
    # A glob that matches nothing is an input that cannot be read, never silently dropped.
    third = tmp_path / "third"
    third.mkdir()
    code, outputs, summary = run_action(
        third, workspace, paths="paper/refs.bib paper/chapters/*.tex", offline="true"
    )
    assert code == 2 and "FAILED: an input could not be read" in summary


def test_hostile_strings_are_inert_in_the_summary(tmp_path: Path, workspace: Path) -> None:
    """A DOI may hold almost any character: one that is also Markdown, HTML and a table cell
    break stays one inert cell (unverified offline: the sample snapshot is no full export)."""
    bib = workspace / "paper" / "refs.bib"
    hostile = "10.1000/a|b<img_src=x>](javascript:alert(1))"
    bib.write_text(
        bib.read_text() + "@article{hostile,\n  title = {x},\n  doi = {" + hostile + "},\n}\n"
    )
    code, _, summary = run_action(tmp_path, workspace, paths="paper/refs.bib", offline="true")
    assert code == 0
    row = next(line for line in summary.splitlines() if "`hostile`" in line)
    assert "<img" not in row and "](javascript" not in row and "&lt;img" in row
    assert row.count(" | ") == 5  # six cells: the | in the DOI is escaped


def test_a_pull_request_is_judged_against_the_base_branchs_lock(
    tmp_path: Path, workspace: Path
) -> None:
    """A pull request that cites a retracted work and records it in its own rwgate.lock
    would pass
    `since: rwgate.lock`; on a pull request the lock is read from the base branch."""
    from example_data import entry

    def git(*args: str) -> None:
        ident = {"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.org"}
        ident.update(GIT_COMMITTER_NAME="A", GIT_COMMITTER_EMAIL="a@example.org")
        subprocess.run(
            ["git", *args],
            cwd=workspace,
            env={**os.environ, **ident},
            check=True,
            capture_output=True,
        )

    def lock() -> None:
        subprocess.run(
            [
                BIN / "rwgate",
                "check",
                "--offline",
                "paper/refs.bib",
                "--lock",
                "rwgate.lock",
            ],
            cwd=workspace,
            check=True,
            capture_output=True,
        )

    bib = workspace / "paper" / "refs.bib"
    bib.write_text(entry("watson1953") + entry("wakefield1998"), encoding="utf-8")
    git("init", "-q")
    lock()
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    git("update-ref", "refs/remotes/origin/main", "HEAD")
    bib.write_text(bib.read_text() + entry("lacour2014"), encoding="utf-8")
    lock()  # the pull request's own lock now lists LaCour as it is: "unchanged"
    git("commit", "-q", "-am", "cite LaCour")
    given = {
        "paths": "paper/refs.bib",
        "policy": "strict",
        "offline": "true",
        "since": "rwgate.lock",
    }

    pushed, _, _ = run_action(tmp_path / "push", workspace, **given)
    assert pushed == 0  # on a push, the branch's own lock is the reference, by choice
    code, _, summary = run_action(
        tmp_path / "pr", workspace, runner_env={"GITHUB_BASE_REF": "main"}, **given
    )
    assert code == 1
    assert "`lacour2014`" in summary and "cited since the lock" in summary
    assert "`wakefield1998`" not in summary  # unchanged since the base branch's lock
    code, _, summary = run_action(
        tmp_path / "nobase", workspace, runner_env={"GITHUB_BASE_REF": "gone"}, **given
    )
    assert code == 1 and "`wakefield1998`" in summary  # no base lock: judged as without one
