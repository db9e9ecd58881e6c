"""Cited after retraction? When each flagged entry entered the bibliography, from git.

An entry added to the ``.bib`` after its work was retracted is the likely error; one added before
needs an update. ``git blame`` of the entry's first line gives the commit that wrote it (a line not
committed yet was added now): one blame per file, an argument list (no shell); a file outside git,
or no git, is skipped with one note.
"""

from __future__ import annotations

import datetime as dt
import subprocess
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from rwgate.contract.evidence import deciding_notice
from rwgate.contract.models import Added, Citation
from rwgate.verdicts.result import FLAGGED, CheckResult

_UNCOMMITTED = "0" * 40
_TIMEOUT = 20.0


def _blame(path: Path, lines: list[int]) -> dict[int, tuple[str, dt.date | None]] | None:
    """Line -> (commit, commit date) for ``lines`` of ``path``; None when git cannot say (not a
    repository, no git). An untracked file's lines are all uncommitted."""
    ranges = [arg for n in sorted(set(lines)) for arg in ("-L", f"{n},{n}")]
    done = _git(path.parent, "blame", "--porcelain", *ranges, "--", path.name)
    if done is None:
        return None
    if done.returncode != 0:
        inside = _git(path.parent, "rev-parse", "--is-inside-work-tree")
        if inside is None or inside.returncode != 0:
            return None
        return {n: (_UNCOMMITTED, None) for n in lines}  # in a repository, not tracked yet
    return _parse_porcelain(done.stdout.decode("utf-8", "replace"))


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    """``git -C folder ARGS`` (an argument list, no shell); None when git cannot be run."""
    try:
        return subprocess.run(
            ["git", "-C", str(folder), *args], capture_output=True, timeout=_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def _parse_porcelain(text: str) -> dict[int, tuple[str, dt.date | None]]:
    """``git blame --porcelain``: a header ``SHA ORIG FINAL [N]`` per line, the commit's details
    the first time a commit appears (``committer-time`` among them), then the line itself."""
    dates: dict[str, dt.date | None] = {}
    out: dict[int, str] = {}
    sha = ""
    for raw in text.splitlines():
        if raw.startswith("\t"):
            continue
        head = raw.split(" ")
        if len(head) >= 3 and len(head[0]) == 40 and head[1].isdigit() and head[2].isdigit():
            sha = head[0]
            out[int(head[2])] = sha
        elif head[0] == "committer-time" and len(head) == 2 and head[1].isdigit():
            stamp = dt.datetime.fromtimestamp(int(head[1]), dt.UTC).date()
            dates[sha] = None if sha == _UNCOMMITTED else stamp
    return {n: (s, dates.get(s)) for n, s in out.items()}


def _added(c: Citation, commit: str, date: dt.date | None) -> Added:
    notice = deciding_notice(c)
    when = date or dt.datetime.now(dt.UTC).date()
    after = None if notice is None or notice.date is None else when >= notice.date
    return Added(
        date=date, commit=None if commit == _UNCOMMITTED else commit[:12], after_notice=after
    )


def add_history(result: CheckResult) -> CheckResult:
    """``result`` with ``added`` on each flagged citation whose entry is in a file under git."""
    by_name: dict[str, list[int]] = defaultdict(list)
    for c in result.citations:
        if c.status in FLAGGED and c.location and c.location.line:
            by_name[c.location.file].append(c.location.line)
    # One Path and one stat per file, not per citation (a DOI list names one file 100,000 times).
    blamed: dict[str, dict[int, tuple[str, dt.date | None]]] = {}
    outside: list[str] = []
    for name, lines in by_name.items():
        path = Path(name)
        if not path.is_file():
            continue
        found = _blame(path, lines)
        if found is None:
            outside.append(str(path))
        else:
            blamed[name] = found
    if not blamed and not outside:
        return result
    warnings = list(result.warnings)
    if outside:
        warnings.append(
            f"{', '.join(outside)}: not in a git repository: when flagged entries were added "
            "(before or after their notice) is not known"
        )
    if not blamed:
        return replace(result, warnings=warnings)
    citations = []
    for c in result.citations:
        line = None
        if c.location is not None and c.location.line is not None:
            line = blamed.get(c.location.file, {}).get(c.location.line)
        citations.append(c if line is None else c.model_copy(update={"added": _added(c, *line)}))
    return replace(result, citations=citations, warnings=warnings)
