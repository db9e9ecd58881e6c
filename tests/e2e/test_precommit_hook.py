"""The pre-commit hook (.pre-commit-hooks.yaml), run by the real `pre-commit` tool against a git
repository made here, with this checkout as the hook repository (`pre-commit try-repo`, which
installs rwgate into pre-commit's own environment the way a user's `pre-commit install` does).

Offline first: the hook's default ``--offline`` judges from the user's snapshot and cache only.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from example_data import entry, import_sample

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PRE_COMMIT = str(Path(sys.executable).parent / "pre-commit")
RWGATE = str(Path(sys.executable).parent / "rwgate")


@pytest.fixture(scope="module")
def hook_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pre-commit's cache, shared by this module's tests (it installs the hook environment once)."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(tmp_path: Path, hook_home: Path) -> tuple[Path, dict[str, str]]:
    repo = tmp_path / "paper"
    repo.mkdir()
    env = dict(os.environ, PRE_COMMIT_HOME=str(hook_home), GIT_AUTHOR_NAME="A")
    env.update(GIT_AUTHOR_EMAIL="a@example.org", GIT_COMMITTER_NAME="A")
    env.update(GIT_COMMITTER_EMAIL="a@example.org")
    env["RWGATE_SNAPSHOT"] = str(tmp_path / "snapshot.sqlite3")
    import_sample(env)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo, env


def try_repo(repo: Path, env: dict[str, str], *files: str) -> subprocess.CompletedProcess[str]:
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, env=env)
    return subprocess.run(
        [PRE_COMMIT, "try-repo", str(ROOT), "rwgate", "--files", *files],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_strict_project_refuses_a_staged_retracted_citation(project) -> None:
    repo, env = project
    (repo / "rwgate.toml").write_text('policy = "strict"\n', encoding="utf-8")
    (repo / "refs.bib").write_text(entry("watson1953") + entry("wakefield1998"), "utf-8")
    (repo / "paper.md").write_text(
        "---\nbibliography: refs.bib\n---\nAs @watson1953 and @wakefield1998 showed.\n", "utf-8"
    )
    done = try_repo(repo, env, "paper.md", "refs.bib", "rwgate.toml")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert re.search(r"rwgate \(no retracted citations\)\.+Failed", out), out
    assert "wakefield1998: retracted" in out.lower()
    assert "rwgate: gate FAILED" in out


def test_clean_bibliography_passes_offline(project) -> None:
    repo, env = project
    (repo / "refs.bib").write_text(entry("watson1953"), "utf-8")
    (repo / "notes.txt").write_text("not for rwgate\n", "utf-8")
    done = try_repo(repo, env, "refs.bib", "notes.txt")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"rwgate \(no retracted citations\)\.+Passed", done.stdout)


def test_default_policy_annotates_but_does_not_block(project) -> None:
    repo, env = project
    (repo / "refs.bib").write_text(entry("wakefield1998"), "utf-8")
    done = try_repo(repo, env, "refs.bib")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_staged_quarto_chapter_is_judged_with_the_project_bibliography(project) -> None:
    # Staged alone, a chapter of a Quarto book names no bibliography (_quarto.yml does) and its
    # citation follows a chunk that holds a blank line: both once made the commit pass.
    repo, env = project
    (repo / "rwgate.toml").write_text('policy = "strict"\n', encoding="utf-8")
    (repo / "refs.bib").write_text(entry("wakefield1998"), "utf-8")
    (repo / "_quarto.yml").write_text("project:\n  type: book\nbibliography: refs.bib\n", "utf-8")
    chapter = repo / "chapters" / "two.qmd"
    chapter.parent.mkdir()
    chapter.write_text(
        "# Two\n\n```{r setup, include=FALSE}\nx <- 1\n\ny <- 2\n```\n\n"
        "Vaccines were blamed [@wakefield1998].\n\n```{r}\nz <- 3\n```\n",
        "utf-8",
    )
    done = try_repo(repo, env, "chapters/two.qmd")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "wakefield1998: retracted" in out.lower()
