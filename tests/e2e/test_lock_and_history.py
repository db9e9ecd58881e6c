"""`--lock`/`--since` and "cited after retraction", through the real `rwgate` command in real git
repositories made here, offline from the bundled sample snapshot (real Retraction Watch rows)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from example_data import entry, import_sample, latex_example

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
RWGATE = str(Path(sys.executable).parent / "rwgate")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """rwgate offline from a snapshot of the bundled sample data (as `make demo` builds it)."""
    env = dict(os.environ)
    env["RWGATE_SNAPSHOT"] = str(tmp_path / "snapshot.sqlite3")
    env["RWGATE_OFFLINE"] = "1"
    import_sample(env)
    return env


def git(repo: Path, *args: str, date: str | None = None) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="A", GIT_AUTHOR_EMAIL="a@example.org")
    env.update(GIT_COMMITTER_NAME="A", GIT_COMMITTER_EMAIL="a@example.org")
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True)


def check(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [RWGATE, "check", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def report_of(path: Path) -> dict[str, dict]:
    return {c["key"]: c for c in json.loads(path.read_text())["citations"]}


def test_entry_added_before_and_after_its_retraction(tmp_path: Path, env) -> None:
    repo = tmp_path / "paper"
    repo.mkdir()
    git(repo, "init", "-q")
    bib = repo / "refs.bib"
    # Wakefield (retracted 2010) entered the bibliography in 2009: the paper needs an update.
    bib.write_text(entry("wakefield1998"), encoding="utf-8")
    git(repo, "add", "refs.bib")
    git(repo, "commit", "-q", "-m", "first", date="2009-05-01T12:00:00Z")
    # LaCour (retracted 2015) was added in 2020: cited after its retraction.
    bib.write_text(entry("wakefield1998") + "\n" + entry("lacour2014"), encoding="utf-8")
    git(repo, "commit", "-q", "-am", "more", date="2020-03-01T12:00:00Z")
    # Yu (retracted 2021) is added now and not committed yet.
    bib.write_text(bib.read_text() + "\n" + entry("yu2020"), encoding="utf-8")

    done = check(repo, env, "refs.bib", "--format", "json", "-o", "report.json")
    assert done.returncode == 0, done.stderr
    cits = report_of(repo / "report.json")
    assert cits["wakefield1998"]["added"]["date"] == "2009-05-01"
    assert cits["wakefield1998"]["added"]["after_notice"] is False
    assert cits["lacour2014"]["added"]["date"] == "2020-03-01"
    assert cits["lacour2014"]["added"]["after_notice"] is True
    assert len(cits["lacour2014"]["added"]["commit"]) == 12
    assert cits["yu2020"]["added"] == {"after_notice": True}  # no date: not committed yet
    text = done.stderr
    assert "added to the bibliography 2009-05-01" in text
    assert "before the retraction of 2010-02-06: needs an update" in text
    assert "after the retraction of 2015-06-05: likely cited in error" in text
    assert "added to the bibliography not committed yet" in text


def test_outside_git_the_history_is_skipped_with_one_note(tmp_path: Path, env) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(entry("wakefield1998") + entry("lacour2014"), encoding="utf-8")
    done = check(tmp_path, env, "refs.bib")
    assert done.returncode == 0
    assert done.stdout.count("not in a git repository") == 1
    assert "added to the bibliography" not in done.stdout
    quiet = check(tmp_path, env, "refs.bib", "--no-history")
    assert "not in a git repository" not in quiet.stdout


def test_lock_then_since_reports_and_gates_on_what_changed_only(tmp_path: Path, env) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(entry("watson1953") + entry("wakefield1998") + entry("yu2020"), "utf-8")
    lock = tmp_path / "rwgate.lock"
    assert check(tmp_path, env, "refs.bib", "--lock", "rwgate.lock").returncode == 0
    first = lock.read_bytes()
    assert check(tmp_path, env, "refs.bib", "--lock", "rwgate.lock").returncode == 0
    assert lock.read_bytes() == first  # no time in it: an unchanged bibliography, the same bytes
    works = json.loads(first)["works"]
    assert list(works) == sorted(works)
    assert works["10.1016/j.neulet.2020.135139"] == {
        "keys": ["yu2020"],
        "notices": ["10.1016/j.neulet.2021.135702"],
        "status": "retracted",
    }

    # Nothing changed: strict passes, though two retracted works are cited (and still annotated).
    same = check(tmp_path, env, "refs.bib", "--policy", "strict", "--since", "rwgate.lock")
    assert same.returncode == 0, same.stdout
    assert "since rwgate.lock: 0 changed, 2 unchanged not listed" in same.stdout

    # As if the lock had been written before Yu's retraction, and before LaCour was cited.
    works["10.1016/j.neulet.2020.135139"] = {"keys": ["yu2020"], "notices": [], "status": "clean"}
    lock.write_text(json.dumps({"schema": "rwgate.lock/1", "works": works}), encoding="utf-8")
    bib.write_text(bib.read_text() + entry("lacour2014"), "utf-8")
    args = ["refs.bib", "--policy", "strict", "--since", "rwgate.lock"]
    new = check(tmp_path, env, *args, "--format", "sarif", "-o", "out.sarif")
    assert new.returncode == 1
    assert "newly retracted (was clean)" in new.stderr
    assert "cited since the lock, already retracted" in new.stderr
    assert "wakefield1998" not in new.stderr  # unchanged: not reported
    results = json.loads((tmp_path / "out.sarif").read_text())["runs"][0]["results"]
    assert sorted(r["properties"]["key"] for r in results) == ["lacour2014", "yu2020"]
    assert all(r["level"] == "error" and r["properties"]["change"] for r in results)

    # Accepting the new state: --update-lock writes it, and the next run passes.
    assert check(tmp_path, env, *args, "--update-lock").returncode == 1
    assert check(tmp_path, env, *args).returncode == 0
    assert "lacour2014" in json.loads(lock.read_text())["works"]["10.1126/science.1256151"]["keys"]


def test_since_counts_a_work_that_could_not_be_checked_as_changed(tmp_path: Path, env) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(entry("wakefield1998"), "utf-8")
    assert check(tmp_path, env, "refs.bib", "--lock", "rwgate.lock").returncode == 0
    env = dict(env, RWGATE_SNAPSHOT=str(tmp_path / "none.sqlite3"))  # no data: unverified
    done = check(tmp_path, env, "refs.bib", "--policy", "strict", "--since", "rwgate.lock")
    assert done.returncode == 1
    assert "unverified now (was retracted): could not be checked again" in done.stdout
    # A lock written while the work could not be judged either: still never "unchanged" (the
    # work may have been retracted in between), so strict still fails.
    args = ("refs.bib", "--policy", "strict", "--since", "rwgate.lock")
    assert check(tmp_path, env, *args, "--update-lock").returncode == 1
    again = check(tmp_path, env, *args)
    assert again.returncode == 1
    assert "still unverified: not judged, so never unchanged" in again.stdout


def test_a_missing_or_broken_lock(tmp_path: Path, env) -> None:
    (tmp_path / "refs.bib").write_text(entry("wakefield1998"), "utf-8")
    missing = check(tmp_path, env, "refs.bib", "--policy", "strict", "--since", "none.lock")
    assert missing.returncode == 1  # no lock yet: everything is new
    assert "none.lock: no lockfile yet: every citation counts as new" in missing.stdout
    (tmp_path / "bad.lock").write_text('{"schema": "something else"}', "utf-8")
    bad = check(tmp_path, env, "refs.bib", "--since", "bad.lock")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "rwgate: error: bad.lock: not an rwgate lockfile (expected schema rwgate.lock/1)"
    ]
    alone = check(tmp_path, env, "refs.bib", "--update-lock")
    assert alone.returncode == 2 and "--update-lock needs --since" in alone.stderr


def test_the_lock_setting_drives_rw_filter_too(tmp_path: Path, env) -> None:
    """A user's `since`/`lock` settings (environment here) reach the pandoc filter: a build gates on
    what changed and writes the lock; a document cannot set them."""
    from rwgate.readers.pandoc_exe import pandoc_path

    (tmp_path / "refs.bib").write_text(entry("wakefield1998") + entry("yu2020"), "utf-8")
    (tmp_path / "paper.md").write_text(
        "---\nbibliography: refs.bib\nrwgate:\n  policy: strict\n  lock: evil.lock\n---\n"
        "See @wakefield1998 and @yu2020.\n",
        "utf-8",
    )
    pandoc = [
        pandoc_path(),
        "paper.md",
        "--citeproc",
        "--filter",
        str(Path(RWGATE).parent / "rw-filter"),
    ]
    build_env = dict(env, RWGATE_LOCK="rwgate.lock")
    first = subprocess.run(
        [*pandoc, "-o", "a.html"], cwd=tmp_path, env=build_env, capture_output=True, text=True
    )
    assert first.returncode != 0  # strict, no lock to compare with: both retracted works fail
    assert json.loads((tmp_path / "rwgate.lock").read_text())["schema"] == "rwgate.lock/1"
    assert not (tmp_path / "evil.lock").exists()
    since_env = dict(env, RWGATE_SINCE="rwgate.lock")
    again = subprocess.run(
        [*pandoc, "-o", "b.html"], cwd=tmp_path, env=since_env, capture_output=True, text=True
    )
    assert again.returncode == 0, again.stderr  # nothing changed since the lock
    assert "Retracted 2010" in (tmp_path / "b.html").read_text()  # still annotated


def test_the_lock_settings_of_the_users_config_drive_rw_latexmk(tmp_path: Path, env) -> None:
    """rw-latexmk writes the user's `lock` after its last gate (the hooks never do), and with
    `since` a build with only unchanged flagged works passes under strict (notes still in the
    .bbl)."""
    from conftest import require_tool

    require_tool("latexmk")
    build = latex_example(tmp_path / "tex")
    lock = tmp_path / "rwgate.lock"
    config = tmp_path / "config" / "rwgate" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'lock = "{lock}"\n', encoding="utf-8")
    env = dict(env, XDG_CONFIG_HOME=str(tmp_path / "config"))
    cmd = [str(Path(RWGATE).parent / "rw-latexmk"), "-pdf", "-interaction=nonstopmode"]
    cmd += ["--policy", "strict", "paper.tex"]
    first = subprocess.run(cmd, cwd=build, env=env, capture_output=True, text=True)
    assert first.returncode == 1 and (build / "paper.pdf.rejected").exists()
    assert "10.1016/j.neulet.2020.135139" in json.loads(lock.read_text())["works"]
    config.write_text(f'since = "{lock}"\n', encoding="utf-8")
    again = subprocess.run(cmd, cwd=build, env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert (build / "paper.pdf").exists()
    assert "Retracted 2010" in (build / "paper.bbl").read_text(encoding="utf-8")
    assert "0 changed" in again.stderr
