"""rw-filter's verdict memo: a rebuild with unchanged citations replays the full run exactly.

Real pandoc, the real filter in a subprocess, the loopback fake Crossref. Whether a run was a hit
is read from what it imported: a hit never loads the core (nor Pydantic, diskcache, bibtexparser).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pandoc_build import build, copy_fixtures, pandoc, write_doc

from fakes.crossref import FakeCrossref, closed_port_url
from rwgate.frontends.pandoc.memo import MEMO_DIR

HEAVY = ("pydantic", "rwgate.core", "diskcache", "bibtexparser")
# Runs the filter as pandoc would (AST on stdin), keeping its stdout in a file and saying what
# it imported; stderr is the filter's own.
PROBE = """
import io, json, sys
ast, out, fmt, *heavy = sys.argv[1:]
sys.stdin = io.TextIOWrapper(io.BytesIO(open(ast, "rb").read()))
buffer = io.BytesIO()
sys.stdout = io.TextIOWrapper(buffer)
from rwgate.frontends.pandoc.filter import main
code = main([fmt])
open(out, "wb").write(buffer.getvalue())
heavy = [m for m in heavy if m in sys.modules]
sys.__stdout__.write(json.dumps({"code": code, "heavy": heavy}))
"""


def _env(fake_url: str, **more: str) -> dict[str, str]:
    return {"RWGATE_CROSSREF_URL": fake_url, **more}


def _ast(cwd: Path, document: str = "paper.md", *args: str) -> Path:
    """The document as pandoc hands it to a filter placed after ``--citeproc``."""
    target = cwd / f"{Path(document).stem}.json"
    cmd = [pandoc(), document, "--citeproc", *args, "-t", "json", "-o", str(target)]
    subprocess.run(cmd, cwd=cwd, check=True, timeout=120)
    return target


def _filter(ast: Path, cwd: Path, env: dict[str, str], fmt: str = "html") -> dict[str, Any]:
    """One run of the filter: exit code, stdout bytes, stderr, and the heavy modules it loaded."""
    out = cwd / "filter-out.bin"
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(ast), str(out), fmt, *HEAVY],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    result = dict(json.loads(proc.stdout))
    result["stdout"] = out.read_bytes()
    result["stderr"] = proc.stderr
    return result


def _memos() -> list[Path]:
    return sorted((Path(os.environ["RWGATE_CACHE_DIR"]) / MEMO_DIR).glob("*.json"))


@pytest.mark.parametrize("style", [[], ["--csl", "numeric.csl"]], ids=["author-date", "numeric"])
def test_rebuild_is_byte_identical_and_asks_nothing(
    tmp_path: Path, fake_crossref: FakeCrossref, style: list[str]
) -> None:
    copy_fixtures(tmp_path)
    env = _env(fake_crossref.url)
    first = build(tmp_path, ["--citeproc", *style], "first.html", env)
    asked = len(fake_crossref.requests_to("/works"))
    second = build(tmp_path, ["--citeproc", *style], "second.html", env)
    assert first.returncode == second.returncode == 0, first.stderr
    assert first.output.read_bytes() == second.output.read_bytes()
    assert first.text.count('class="rw-notice') == 3
    assert second.stderr == first.stderr and "(notice in its bibliography entry)" in first.stderr
    assert len(fake_crossref.requests_to("/works")) == asked == 1
    assert len(_memos()) == 1


@pytest.mark.parametrize("style", [[], ["--csl", "numeric.csl"]], ids=["author-date", "numeric"])
def test_hit_prints_and_writes_what_the_full_run_did(
    tmp_path: Path, fake_crossref: FakeCrossref, style: list[str]
) -> None:
    copy_fixtures(tmp_path)
    ast = _ast(tmp_path, "paper.md", *style)
    report = tmp_path / "report.json"
    env = _env(fake_crossref.url, RWGATE_REPORT=str(report))
    full = _filter(ast, tmp_path, env)
    full_report = report.read_bytes()
    report.unlink()
    hit = _filter(ast, tmp_path, env)
    assert full["code"] == hit["code"] == 0
    assert "rwgate.core" in full["heavy"] and hit["heavy"] == []
    assert hit["stdout"] == full["stdout"] and b"rw-notice" in full["stdout"]
    assert hit["stderr"] == full["stderr"]
    assert report.read_bytes() == full_report


def test_strict_gate_is_replayed(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    copy_fixtures(tmp_path)
    ast = _ast(tmp_path)
    env = _env(fake_crossref.url, RWGATE_POLICY="strict")
    full = _filter(ast, tmp_path, env)
    hit = _filter(ast, tmp_path, env)
    assert full["code"] == hit["code"] == 1
    assert full["stdout"] == hit["stdout"] == b""
    assert hit["stderr"] == full["stderr"]
    assert full["stderr"].count("rw-filter: ERROR: ") == 3
    assert "rwgate.core" in full["heavy"] and hit["heavy"] == []
    # and through pandoc: no output file either time
    for name in ("a.html", "b.html"):
        out = build(tmp_path, ["--citeproc"], name, env)
        assert out.returncode != 0 and not out.output.exists()
        assert "rw-filter: ERROR: wakefield1998: retracted" in out.stderr


def test_filter_before_citeproc_replays_markers(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    copy_fixtures(tmp_path)
    ast = tmp_path / "raw.json"
    subprocess.run([pandoc(), "paper.md", "-t", "json", "-o", str(ast)], cwd=tmp_path, check=True)
    env = _env(fake_crossref.url)
    full, hit = _filter(ast, tmp_path, env), _filter(ast, tmp_path, env)
    assert hit["heavy"] == [] and hit["stdout"] == full["stdout"]
    assert (
        hit["stderr"] == full["stderr"]
        and "a notice follows each citation instead" in hit["stderr"]
    )


def test_latex_shadow_bibliography_is_replayed(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    copy_fixtures(tmp_path)
    ast = tmp_path / "raw.json"
    subprocess.run([pandoc(), "paper.md", "-t", "json", "-o", str(ast)], cwd=tmp_path, check=True)
    env = _env(fake_crossref.url)
    full = _filter(ast, tmp_path, env, "latex")
    hit = _filter(ast, tmp_path, env, "latex")
    assert hit["heavy"] == [] and hit["stdout"] == full["stdout"]
    assert hit["stderr"] == full["stderr"] and "bibliography now points at" in hit["stderr"]
    # A shadow that is gone or changed is written again by a full run.
    (shadow,) = (tmp_path / ".rwgate").glob("*.bib")
    shadow.write_text("changed", encoding="utf-8")
    again = _filter(ast, tmp_path, env, "latex")
    assert "rwgate.core" in again["heavy"] and again["stdout"] == full["stdout"]
    assert "note = {{Retracted" in shadow.read_text(encoding="utf-8")
    shadow.unlink()  # .rwgate/ cleaned: the record names the file, so the run judges again
    gone = _filter(ast, tmp_path, env, "latex")
    assert "rwgate.core" in gone["heavy"] and gone["stdout"] == full["stdout"]
    assert "note = {{Retracted" in shadow.read_text(encoding="utf-8")


def _change_bib(cwd: Path, env: dict[str, str]) -> None:
    with (cwd / "refs.bib").open("a", encoding="utf-8") as fh:
        fh.write("\n@misc{unused, title = {Not cited}}\n")


def _change_block(cwd: Path, env: dict[str, str]) -> None:
    text = (cwd / "paper.md").read_text(encoding="utf-8")
    (cwd / "paper.md").write_text(text.replace("---\n\n", "rwgate: {inline: true}\n---\n\n", 1))


def _change_env(cwd: Path, env: dict[str, str]) -> None:
    env["RWGATE_TIMEOUT"] = "7"


def _change_config(cwd: Path, env: dict[str, str]) -> None:
    (cwd / "rwgate.toml").write_text('policy = "default"\n', encoding="utf-8")


def _change_keys(cwd: Path, env: dict[str, str]) -> None:
    text = (cwd / "paper.md").read_text(encoding="utf-8")
    (cwd / "paper.md").write_text(text.replace(" [@njei2011]", ""), encoding="utf-8")


def _change_prose(cwd: Path, env: dict[str, str]) -> None:
    text = (cwd / "paper.md").read_text(encoding="utf-8")
    (cwd / "paper.md").write_text(text.replace("Thermometry", "Quantum thermometry"))


@pytest.mark.parametrize(
    ("change", "hit"),
    [
        (_change_bib, False),
        (_change_block, False),
        (_change_env, False),
        (_change_config, False),
        (_change_keys, False),
        (_change_prose, True),
    ],
    ids=["bib", "rwgate-block", "env", "config", "cited-keys", "prose"],
)
def test_what_invalidates_the_memo(
    tmp_path: Path, fake_crossref: FakeCrossref, change: Any, hit: bool
) -> None:
    copy_fixtures(tmp_path)
    env = _env(fake_crossref.url)
    _filter(_ast(tmp_path), tmp_path, env)
    assert _filter(_ast(tmp_path), tmp_path, env)["heavy"] == []
    change(tmp_path, env)
    after = _filter(_ast(tmp_path), tmp_path, env)
    assert (after["heavy"] == []) is hit
    assert after["code"] == 0


def test_expired_entry_is_ignored(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    copy_fixtures(tmp_path)
    ast, env = _ast(tmp_path), _env(fake_crossref.url)
    _filter(ast, tmp_path, env)
    (memo,) = _memos()
    data = json.loads(memo.read_text(encoding="utf-8"))
    assert time.time() < data["expires"] <= time.time() + 3600
    data["expires"] = time.time() - 1
    memo.write_text(json.dumps(data), encoding="utf-8")
    assert "rwgate.core" in _filter(ast, tmp_path, env)["heavy"]
    assert _filter(ast, tmp_path, env)["heavy"] == []  # the full run stored a fresh one


def test_unverified_run_is_not_remembered(tmp_path: Path) -> None:
    copy_fixtures(tmp_path)
    ast, env = _ast(tmp_path), _env(closed_port_url())
    first = _filter(ast, tmp_path, env)
    assert "unverified" in first["stderr"]
    assert _memos() == []
    assert "rwgate.core" in _filter(ast, tmp_path, env)["heavy"]


def test_offline_run_is_not_remembered(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    copy_fixtures(tmp_path)
    ast, env = _ast(tmp_path), _env(fake_crossref.url)
    _filter(ast, tmp_path, env)  # fills the look-up cache, so offline verdicts are all known
    for memo in _memos():
        memo.unlink()
    offline = _filter(ast, tmp_path, {**env, "RWGATE_OFFLINE": "1"})
    assert offline["code"] == 0 and _memos() == []


@pytest.mark.parametrize(
    "setting",
    [
        {"RWGATE_NO_CACHE": "1"},
        {"RWGATE_NO_MEMO": "1"},
        {"config": "no-cache = true\n"},
        {"config": 'cache_dir = "c"\n'},
    ],
    ids=["env", "no-memo", "user-config-no-cache", "user-config-cache-dir"],
)
def test_cache_settings_disable_the_memo(
    tmp_path: Path, fake_crossref: FakeCrossref, setting: dict[str, str]
) -> None:
    """The invoking user's switches (a project's rwgate.toml may not set them: it is ignored
    there with a warning, which a replay repeats)."""
    copy_fixtures(tmp_path)
    if "config" in setting:
        (tmp_path / "user.toml").write_text(setting.pop("config"), encoding="utf-8")
        setting["RWGATE_CONFIG"] = str(tmp_path / "user.toml")
        # (RWGATE_CACHE_DIR would win over the user's file: the memo then lives in the cache)
        setting.update(RWGATE_CACHE_DIR="", XDG_CACHE_HOME=str(tmp_path / "xdg"))
    ast, env = _ast(tmp_path), _env(fake_crossref.url, **setting)
    _filter(ast, tmp_path, env)
    assert "rwgate.core" in _filter(ast, tmp_path, env)["heavy"]
    assert _memos() == []
    assert not list(tmp_path.glob("**/filter-memo/*.json"))


def test_a_project_cannot_switch_the_memo_off(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    copy_fixtures(tmp_path)
    (tmp_path / "rwgate.toml").write_text("no-cache = true\n", encoding="utf-8")
    ast, env = _ast(tmp_path), _env(fake_crossref.url)
    full, hit = _filter(ast, tmp_path, env), _filter(ast, tmp_path, env)
    assert hit["heavy"] == [] and hit["stderr"] == full["stderr"]
    assert "'no_cache' ignored" in full["stderr"]


def test_document_without_citations_is_remembered(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    """A document without citations is remembered too (and still passes through untouched)."""
    write_doc(tmp_path / "plain.md", "title: Nothing cited", "Just prose.")
    ast = tmp_path / "plain.json"
    subprocess.run([pandoc(), "plain.md", "-t", "json", "-o", str(ast)], cwd=tmp_path, check=True)
    env = _env(fake_crossref.url)
    full, hit = _filter(ast, tmp_path, env), _filter(ast, tmp_path, env)
    assert full["stdout"] == hit["stdout"] == ast.read_bytes()
    assert hit["heavy"] == [] and hit["stderr"] == full["stderr"] == ""
