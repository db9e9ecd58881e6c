"""Issue 29: a rebuild never replays a stale verdict, whatever input changed between two builds.

For each front end (rw-filter after --citeproc; the Lua filter first, rendering the bibliography
itself, and after --citeproc; rw-latexmk with BibTeX and with biber), with the resident worker on
and off, one document is built, rebuilt (the memo replays), then each input that can change
between two builds is changed in turn and the rebuild must show the change: the snapshot
re-imported in place with one more retraction, RWGATE_SNAPSHOT moved, the policy via the
environment, rwgate.toml/pyproject.toml added, changed and removed, the user's configuration, a
.bib byte, a file a .bib pulls in (LaTeX: the @strings of the file before it in \\bibdata),
RWGATE_LOCK and RWGATE_SINCE, an allow-list ``until`` passing (the same instant is another day in
another time zone), a new cited key. rwgate's own code changing and a variable added to the
configuration layer are tested on a copy of the package (the checkout is never touched).

One build per front end, inputs mutated step by step (not a product of fresh builds): LaTeX builds
cost seconds. Real pandoc, latexmk, bibtex, biber; the loopback fake Crossref.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pandoc_build import copy_fixtures, pandoc, rw_filter

from fakes.crossref import FakeCrossref, closed_port_url
from rwgate.sources.snapshot.source import import_files

ROOT = Path(__file__).resolve().parents[2]
LATEX = ROOT / "tests" / "fixtures" / "latex"
RW_EXTRACT = ROOT / "tests" / "fixtures" / "rw" / "rw-extract-2025.csv"
LUA = ROOT / "filters" / "rwgate.lua"
BIN = Path(sys.executable).parent
KUCSKO = "10.1038/nature12373"  # cited everywhere, clean at the fake Crossref
WAKEFIELD = "10.1016/S0140-6736(97)11096-0"  # retracted
UNRELATED = "10.5555/unrelated.1"
# The same instant on two sides of the date line: an allow-list ``until`` of the western day has
# passed in the eastern one (a fake clock that needs no process to be fooled).
WEST, EAST = "Etc/GMT+12", "Etc/GMT-14"


@dataclass
class Run:
    code: int
    stderr: str
    judged: bool
    """Whether the integrity core judged (no memo replayed): the memo folder changed, or the Lua
    filter started rw-filter."""


@dataclass
class Rig:
    """One front end's document, environment and builds."""

    work: Path
    env: dict[str, str]
    build: Callable[[Rig], subprocess.CompletedProcess[str]]
    annotated: Callable[[Run], int]
    log: Path | None = None
    memos: Path = field(default_factory=Path)
    tex: str = ""

    def run(self) -> Run:
        before = _listing(self.memos)
        starts = self.log.read_text().count("start") if self.log and self.log.exists() else 0
        proc = self.build(self)
        assert "Traceback" not in proc.stderr, proc.stderr
        started = self.log.read_text().count("start") if self.log and self.log.exists() else 0
        judged = _listing(self.memos) != before or started > starts
        return Run(proc.returncode, proc.stderr, judged)


def _listing(folder: Path) -> dict[str, tuple[int, int]]:
    """Each memo, by inode and mtime: a full run writes its memo anew (atomically), a replay
    writes nothing."""
    found = folder.glob("*/*.json") if folder.is_dir() else []
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in found}


def _snapshot_csv(folder: Path, dois: list[str]) -> Path:
    """Real Retraction Watch rows (the 2025 extract's first) moved onto ``dois``."""
    rows = list(csv.DictReader(io.StringIO(RW_EXTRACT.read_bytes().decode("utf-8"))))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\r\n")
    writer.writeheader()
    for n, doi in enumerate(dois):
        record = str(900000 + n)
        writer.writerow(
            {
                **rows[0],
                "Record ID": record,
                "OriginalPaperDOI": doi,
                "RetractionNature": "Retraction",
            }
        )
    path = folder / f"rows-{len(dois)}.csv"
    path.write_bytes(out.getvalue().encode("utf-8"))
    return path


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _allow(key: str, others: list[str]) -> str:
    """A user configuration: strict, ``key`` allowed until today in the western time zone."""
    west = dt.datetime.now(dt.timezone(dt.timedelta(hours=-12))).date()
    lines = ['policy = "strict"', "", "[[allow]]", f'key = "{key}"', f"until = {west}"]
    lines += ['reason = "discussed"']
    for other in others:
        lines += ["", "[[allow]]", f'key = "{other}"', 'reason = "discussed"']
    return "\n".join(lines) + "\n"


_FAILING = re.compile(r"^(?:rw-filter: ERROR: |  )([^\s:]+): ", re.M)


def walk_inputs(rig: Rig, base: int, tmp: Path, latex: bool, pulls_in: bool = False) -> None:
    """Each input changed in turn; every rebuild shows the change. ``base``: works annotated at
    the start; ``pulls_in``: the document has a .bib whose @strings another .bib uses."""

    def check(code: int, annotated: int | None = None, says: str | None = None) -> Run:
        got = rig.run()
        where = f"{got.stderr}\n(judged={got.judged})"
        assert (got.code != 0) == (code != 0), where  # pandoc says 83 for a failed filter
        if annotated is not None:
            assert rig.annotated(got) == annotated, where
        if says is not None:
            assert says in got.stderr, where
        return got

    first = check(0, base)
    assert first.judged
    assert not check(0, base).judged  # an unchanged rebuild replays
    env, work = rig.env, rig.work

    # The snapshot: re-imported in place with one more retraction, then moved.
    snapshot, other = tmp / "snap" / "snapshot.sqlite3", tmp / "snap2" / "snapshot.sqlite3"
    assert import_files(snapshot, [_snapshot_csv(tmp, [UNRELATED])]).failed == []
    assert import_files(other, [_snapshot_csv(tmp, [UNRELATED])]).failed == []
    env["RWGATE_SNAPSHOT"] = str(snapshot)
    assert check(0, base).judged
    assert not check(0, base).judged
    size = snapshot.stat().st_size
    assert import_files(snapshot, [_snapshot_csv(tmp, [UNRELATED, KUCSKO])]).failed == []
    assert snapshot.stat().st_size == size  # the same size: only its import id tells
    check(0, base + 1)
    env["RWGATE_SNAPSHOT"] = str(other)
    check(0, base)

    # The policy through the environment.
    env["RWGATE_POLICY"] = "strict"
    flagged = list(dict.fromkeys(_FAILING.findall(check(1).stderr)))
    assert flagged
    del env["RWGATE_POLICY"]
    check(0, base)

    # The project's configuration: added, changed, removed; pyproject.toml the same.
    (work / "rwgate.toml").write_text('policy = "strict"\n', encoding="utf-8")
    check(1)
    (work / "rwgate.toml").write_text('policy = "default"\n', encoding="utf-8")
    check(0, base)
    (work / "rwgate.toml").unlink()
    (work / "pyproject.toml").write_text('[tool.rwgate]\npolicy = "strict"\n', encoding="utf-8")
    check(1)
    (work / "pyproject.toml").unlink()
    check(0, base)

    # The user's configuration.
    user = Path(env["XDG_CONFIG_HOME"]) / "rwgate" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('policy = "strict"\n', encoding="utf-8")
    check(1)
    user.unlink()
    check(0, base)

    # A .bib byte: wakefield1998 given a clean DOI (then back).
    bib = work / "refs.bib"
    original = bib.read_bytes()
    _edit(bib, WAKEFIELD, KUCSKO)
    check(0, base - 1)
    bib.write_bytes(original)
    check(0, base)

    if pulls_in:  # a file the .bib pulls in: the @string it inherits from the file before it
        abbrev = work / "abbrev.bib"
        _edit(abbrev, KUCSKO, WAKEFIELD)
        check(0, base + 1)
        _edit(abbrev, WAKEFIELD, KUCSKO)
        check(0, base)

    # RWGATE_LOCK and RWGATE_SINCE.
    lock = tmp / "rwgate.lock"
    env["RWGATE_LOCK"] = str(lock)
    check(0, base)
    assert lock.is_file()
    del env["RWGATE_LOCK"]
    check(0, base)
    env["RWGATE_SINCE"] = str(tmp / "no-such.lock")
    check(0, says="no lockfile yet")
    del env["RWGATE_SINCE"]
    check(0, base)

    # An allow-list `until` passing: allowed today in the west, the next day in the east.
    user.write_text(_allow(flagged[0], flagged[1:]), encoding="utf-8")
    env["TZ"] = WEST
    check(0)
    assert not check(0).judged
    env["TZ"] = EAST
    check(1, says="allow-list entry expired")
    user.unlink()
    del env["TZ"]
    check(0, base)

    # A new cited key.
    _cite_new_key(rig, latex)
    later = check(0)
    assert later.judged and "nosuchkey" in later.stderr


def _cite_new_key(rig: Rig, latex: bool) -> None:
    if latex:
        _edit(rig.work / rig.tex, "\\end{document}", "\\cite{nosuchkey}\n\\end{document}")
    else:
        _edit(rig.work / "paper.md", "is fine.", "is fine [@nosuchkey].")


# --- the pandoc front ends ---------------------------------------------------------------------


def _pandoc_annotated(run: Run) -> int:
    return len(re.findall(r"^rw-filter: WARNING: \S+: .*\(notice ", run.stderr, re.M))


def _counting_filter(tmp: Path) -> tuple[Path, Path]:
    """rw-filter behind a script that notes each start (the Lua filter's RWGATE_FILTER)."""
    log, script = tmp / "starts.log", tmp / "counting-rw-filter"
    script.write_text(f'#!/bin/sh\necho start >> "{log}"\nexec "{rw_filter()}" "$@"\n')
    script.chmod(0o755)
    return script, log


def _pandoc_rig(tmp: Path, fake: FakeCrossref, front: str, resident: str) -> Rig:
    work = tmp / "doc"
    work.mkdir()
    copy_fixtures(work)
    env = {
        **os.environ,
        "RWGATE_CROSSREF_URL": fake.url,
        "RWGATE_RESIDENT": resident,
        "XDG_CONFIG_HOME": str(tmp / "config"),
    }
    script, log = _counting_filter(tmp)
    if front == "rw-filter":
        middle = ["--citeproc", "--filter", rw_filter()]
    elif front == "lua-first":
        middle = ["--lua-filter", str(LUA), "--citeproc"]
        env["RWGATE_FILTER"] = str(script)
    else:
        middle = ["--citeproc", "--lua-filter", str(LUA)]
        env["RWGATE_FILTER"] = str(script)

    def build(rig: Rig) -> subprocess.CompletedProcess[str]:
        cmd = [pandoc(), "paper.md", "--wrap=none", *middle, "-o", "out.html"]
        return subprocess.run(
            cmd, cwd=rig.work, env=rig.env, capture_output=True, text=True, timeout=300
        )

    rig = Rig(work, env, build, _pandoc_annotated, log if front != "rw-filter" else None)
    rig.memos = Path(env["RWGATE_CACHE_DIR"])
    return rig


@pytest.mark.parametrize("resident", ["1", "0"], ids=["worker-on", "worker-off"])
@pytest.mark.parametrize("front", ["rw-filter", "lua-first", "lua-after-citeproc"])
def test_pandoc_rebuilds_reflect_every_input(
    tmp_path: Path, fake_crossref: FakeCrossref, front: str, resident: str
) -> None:
    rig = _pandoc_rig(tmp_path, fake_crossref, front, resident)
    walk_inputs(rig, 3, tmp_path, latex=False)


# --- rw-latexmk --------------------------------------------------------------------------------

ABBREV = '@string{kdoi = "' + KUCSKO + '"}\n'


def _latex_annotated(run: Run) -> int:
    found = re.findall(r"(\d+) annotated", run.stderr)
    return int(found[-1]) if found else 0


def _latex_rig(tmp: Path, fake: FakeCrossref, tool: str, resident: str) -> tuple[Rig, int]:
    work = tmp / "doc"
    shutil.copytree(LATEX, work)
    if tool == "bibtex":
        tex = "natbib.tex"
        # kucsko2013's DOI comes from a macro of the file before refs.bib in \bibdata
        (work / "abbrev.bib").write_text(ABBREV, encoding="utf-8")
        _edit(work / "refs.bib", "{" + KUCSKO + "}", "kdoi")
        _edit(work / tex, "\\bibliography{refs,more}", "\\bibliography{abbrev,refs,more}")
    else:
        tex = "biblatex-numeric.tex"
    env = {
        **os.environ,
        "RWGATE_CROSSREF_URL": fake.url,
        "RWGATE_RESIDENT": resident,
        "XDG_CONFIG_HOME": str(tmp / "config"),
    }

    def build(rig: Rig) -> subprocess.CompletedProcess[str]:
        cmd = [str(BIN / "rw-latexmk"), "-pdf", "-interaction=nonstopmode", "-halt-on-error", tex]
        return subprocess.run(
            cmd, cwd=rig.work, env=rig.env, capture_output=True, text=True, timeout=600
        )

    rig = Rig(work, env, build, _latex_annotated, tex=tex)
    rig.memos = Path(env["RWGATE_CACHE_DIR"])
    base = _latex_annotated(Run(0, rig.build(rig).stderr, True))
    return rig, base


@pytest.mark.parametrize("resident", ["1", "0"], ids=["worker-on", "worker-off"])
@pytest.mark.parametrize("tool", ["bibtex", "biber"])
def test_latexmk_rebuilds_reflect_every_input(
    tmp_path: Path, fake_crossref: FakeCrossref, tool: str, resident: str
) -> None:
    rig, base = _latex_rig(tmp_path, fake_crossref, tool, resident)
    assert base >= 1
    for memo in rig.memos.glob("latex-memo/*.json"):
        memo.unlink()  # the walk starts from a judged build
    walk_inputs(rig, base, tmp_path, latex=True, pulls_in=tool == "bibtex")


# --- rwgate's own code -------------------------------------------------------------------------


def _package_copy(tmp: Path) -> Path:
    """rwgate's package copied (the checkout is never edited), and an rw-filter that runs it."""
    folder = tmp / "pkg"
    shutil.copytree(
        ROOT / "src" / "rwgate", folder / "rwgate", ignore=shutil.ignore_patterns("__pycache__")
    )
    script = tmp / "copied-rw-filter"
    script.write_text(
        f'#!/bin/sh\nexport PYTHONPATH="{folder}"\n'
        f'exec "{sys.executable}" -m rwgate.frontends.pandoc.filter "$@"\n'
    )
    script.chmod(0o755)
    return script


def test_changed_code_or_a_new_setting_variable_invalidates(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    """An edited install is new code; a variable added to the configuration layer (no memo code
    touched) is in the next record and invalidates when it is set."""
    script = _package_copy(tmp_path)
    work = tmp_path / "doc"
    work.mkdir()
    copy_fixtures(work)
    env = {**os.environ, "RWGATE_CROSSREF_URL": fake_crossref.url, "RWGATE_RESIDENT": "0"}

    def build(rig: Rig) -> subprocess.CompletedProcess[str]:
        cmd = [pandoc(), "paper.md", "--citeproc", "--filter", str(script), "-o", "out.html"]
        return subprocess.run(cmd, cwd=rig.work, env=rig.env, capture_output=True, text=True)

    rig = Rig(work, env, build, _pandoc_annotated, memos=Path(env["RWGATE_CACHE_DIR"]))
    assert rig.run().judged
    assert not rig.run().judged
    vocab = tmp_path / "pkg" / "rwgate" / "contract" / "vocab.py"
    vocab.write_bytes(vocab.read_bytes() + b"# one byte more\n")
    assert rig.run().judged  # new code: judged again
    assert not rig.run().judged
    config = tmp_path / "pkg" / "rwgate" / "settings" / "config.py"
    _edit(
        config,
        '    "RWGATE_POLICY": "policy",',
        '    "RWGATE_POLICY": "policy",\n    "RWGATE_BRAND_NEW": "timeout",',
    )
    assert rig.run().judged
    assert not rig.run().judged
    env["RWGATE_BRAND_NEW"] = "7"
    after = rig.run()
    assert after.judged and after.code == 0


# --- the rule: one row per reason and front end ------------------------------------------------
#
# Each row builds once under one reason of rwgate.verdicts.remembered.REASONS and looks at the memo
# folder:
# a reason that refuses leaves no memo (the next build judges again); where a front end replays
# (rw-filter: a failing verdict, a report) the memo is there and the next build replays it. A
# "none" row per front end shows that the rig remembers without a reason.

from rwgate.verdicts.remembered import REASONS  # noqa: E402

NOT_HERE = {"rw-filter": {"build_failed", "success_cmd", "problems"}, "rw-latexmk": set()}
"""Reasons a front end never meets (rw-filter runs no build tool and says its problems again)."""
REPLAYS = {"rw-filter": {"failed", "report"}, "rw-latexmk": set()}
"""Where the front ends differ (refusal's ``replays_failure``/``replays_report``)."""
EMBEDDED = (
    "\\documentclass{article}\n\\begin{document}\nSee \\cite{k}.\n\\begin{thebibliography}{1}\n"
    "\\bibitem{k} P. Kucsko. Nanometre-scale thermometry. Nature 2013. doi:" + KUCSKO + "\n"
    "\\end{thebibliography}\n\\end{document}\n"
)


def _reason(rig: Rig, front: str, reason: str, tmp: Path, fake: FakeCrossref) -> None:
    """Put ``rig`` under ``reason`` (nothing for "none")."""
    env, work = rig.env, rig.work
    user = Path(env["XDG_CONFIG_HOME"]) / "rwgate" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    bib = work / "refs.bib"
    if reason == "memo_off":
        env["RWGATE_NO_MEMO"] = "1"
    elif reason == "no_cache":
        env["RWGATE_NO_CACHE"] = "1"
    elif reason == "cache_elsewhere":  # memos in the default folder, look-ups elsewhere
        del env["RWGATE_CACHE_DIR"]
        env["XDG_CACHE_HOME"] = str(tmp / "xdg-cache")
        rig.memos = tmp / "xdg-cache" / "rwgate"
        user.write_text(f'cache_dir = "{tmp / "elsewhere"}"\n', encoding="utf-8")
    elif reason == "offline":
        env["RWGATE_OFFLINE"] = "1"
    elif reason == "incomplete":  # Crossref cannot be reached
        env["RWGATE_CROSSREF_URL"] = closed_port_url()
    elif reason == "unverified":  # a shortDOI no resolver answers (the only unverified work)
        _edit(bib, "{" + KUCSKO + "}" if front == "rw-filter" else "kdoi", "{10/zzzzz}")
    elif reason == "recovery":
        user.write_text("recover_dois = true\n", encoding="utf-8")
    elif reason == "lockfile":
        env["RWGATE_LOCK"] = str(tmp / "rwgate.lock")
    elif reason == "report":
        env["RWGATE_REPORT"] = str(tmp / "report.json")
    elif reason == "failed":
        env["RWGATE_POLICY"] = "strict"
    elif reason == "build_failed":
        (work / "latexmkrc").write_text("$pdflatex = 'pdflatex %O %S; false';\n")
    elif reason == "success_cmd":
        (work / "latexmkrc").write_text("$success_cmd = 'true';\n")
    elif reason == "problems":  # its own thebibliography: judged, and said to be left as it is
        (work / rig.tex).write_text(EMBEDDED, encoding="utf-8")
    else:
        assert reason == "none"


def _front_rig(tmp: Path, fake: FakeCrossref, front: str) -> Rig:
    if front == "rw-filter":
        rig = _pandoc_rig(tmp, fake, "rw-filter", "0")
        return rig
    work = tmp / "doc"
    shutil.copytree(LATEX, work)
    (work / "abbrev.bib").write_text(ABBREV, encoding="utf-8")
    _edit(work / "refs.bib", "{" + KUCSKO + "}", "kdoi")
    _edit(work / "natbib.tex", "\\bibliography{refs,more}", "\\bibliography{abbrev,refs,more}")
    env = {
        **os.environ,
        "RWGATE_CROSSREF_URL": fake.url,
        "RWGATE_RESIDENT": "0",
        "XDG_CONFIG_HOME": str(tmp / "config"),
    }

    def build(rig: Rig) -> subprocess.CompletedProcess[str]:
        cmd = [str(BIN / "rw-latexmk"), "-pdf", "-interaction=nonstopmode", rig.tex]
        return subprocess.run(
            cmd, cwd=rig.work, env=rig.env, capture_output=True, text=True, timeout=600
        )

    return Rig(
        work, env, build, _latex_annotated, memos=Path(env["RWGATE_CACHE_DIR"]), tex="natbib.tex"
    )


ROWS = [
    (front, reason)
    for front in ("rw-filter", "rw-latexmk")
    for reason in ("none", *REASONS)
    if reason not in NOT_HERE[front]
]


@pytest.mark.parametrize(("front", "reason"), ROWS, ids=[f"{f}-{r}" for f, r in ROWS])
def test_the_rule_of_what_is_remembered(
    tmp_path: Path, fake_crossref: FakeCrossref, front: str, reason: str
) -> None:
    rig = _front_rig(tmp_path, fake_crossref, front)
    _reason(rig, front, reason, tmp_path, fake_crossref)
    folder = rig.memos / ("filter-memo" if front == "rw-filter" else "latex-memo")
    first = rig.build(rig)
    assert "Traceback" not in first.stderr, first.stderr
    kept = sorted(folder.glob("*.json")) if folder.is_dir() else []
    remembered = reason == "none" or reason in REPLAYS[front]
    assert bool(kept) == remembered, first.stderr + first.stdout[-3000:]
    if remembered:
        before = _listing(rig.memos)
        again = rig.build(rig)
        assert _listing(rig.memos) == before  # replayed: no memo written anew
        assert again.returncode == first.returncode, again.stderr
