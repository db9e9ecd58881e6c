"""Bibliography names to files, found where bibtex and biber find them: one function
(:func:`resolve_bibliographies`) for ``rwgate check`` and the latexmk hooks, so a remote or missing
bibliography gets the same verdict from both."""

from __future__ import annotations

import glob
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from itertools import takewhile
from pathlib import Path

from rwgate.contract.models import Location, Problem
from rwgate.readers.builds.latexread import Allowed
from rwgate.readers.locate import OUTSIDE, OutsideRoots

KPSEWHICH_TIMEOUT = 5.0
_WILDCARD = re.compile(r"[*?[]")


def _run_kpsewhich(
    args: list[str], cwd: Path, errors: str | None = None
) -> subprocess.CompletedProcess[str] | None:
    """``kpsewhich ARGS`` run as bibtex, biber and LaTeX ask kpathsea (None if it cannot run)."""
    exe = shutil.which("kpsewhich")
    if exe is None:
        return None
    try:
        return subprocess.run(
            [exe, *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            errors=errors,
            timeout=KPSEWHICH_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def _kpsewhich(name: str, cwd: Path) -> Path | None:
    """Where kpathsea (as bibtex/biber would) finds a bibliography file."""
    proc = _run_kpsewhich([name], cwd)
    found = proc.stdout.strip().splitlines() if proc is not None else []
    if proc is None or proc.returncode != 0 or not found:
        return None
    return (cwd / found[0]).resolve()  # an absolute path is kept as it is


def kpsewhich_all(names: Sequence[str], cwd: Path) -> dict[str, Path]:
    """Where kpathsea finds each of ``names`` (as LaTeX would, with the user's ``TEXINPUTS``),
    in one ``kpsewhich`` process. It prints only what it finds, in order; each line is matched
    back to the name it ends with."""
    proc = _run_kpsewhich(["--", *names], cwd, "surrogateescape") if names else None
    if proc is None:
        return {}
    found: dict[str, Path] = {}
    left = list(names)
    for line in proc.stdout.splitlines():
        for name in left:
            if line.strip() == name or line.strip().endswith("/" + name.lstrip("./")):
                full = cwd / line.strip()
                if full.is_file():
                    found[name] = full
                left.remove(name)
                break
    return found


def _glob_folder(pattern: Path) -> Path:
    """The part of a glob pattern before its first wildcard (what it can reach at most)."""
    parts = list(takewhile(lambda part: not _WILDCARD.search(part), pattern.parts))
    return Path(*parts) if parts else Path(".")


def resolve_bib_name(name: str, base: Path, allowed: Allowed | None = None) -> list[Path]:
    """Files a bibliography name refers to: next to the document (adding .bib), else kpsewhich.

    With ``allowed``, a name that reaches outside it raises :class:`OutsideRoots` before anything
    is looked at; so does a glob whose fixed part does.
    """
    if _WILDCARD.search(name):
        pattern = base / Path(name).expanduser()
        if allowed is not None and not allowed(_glob_folder(pattern)):
            raise OutsideRoots(name)
        matches = glob.glob(str(pattern), recursive=False)  # absolute patterns too
        found = sorted(Path(p).resolve() for p in matches if Path(p).is_file())
        return [p for p in found if allowed is None or allowed(p)]
    names = [name] if name.endswith(".bib") else [name + ".bib", name]
    for candidate in names:
        path = base / Path(candidate).expanduser()
        if allowed is not None and not allowed(path):
            raise OutsideRoots(name)
        if path.is_file():
            return [path.resolve()]
    for candidate in names:
        system = _kpsewhich(candidate, base)
        if system is not None and system.is_file() and (allowed is None or allowed(system)):
            return [system]
    return []


_URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def unreadable(message: str, where: Location | None = None) -> Problem:
    """An input the check cannot read (a bibliography missing or refused): an error that makes
    the exit code 2 whatever the verdicts of what could be read."""
    return Problem(message=message, location=where, severity="error", unreadable=True)


def resolve_bibliographies(
    names: Sequence[str],
    search: Sequence[Path],
    origin: Location,
    locations: Mapping[str, Location] | None = None,
    allowed: Allowed | None = None,
) -> tuple[list[str], list[Problem]]:
    """Bibliography names to files, each searched for in ``search`` in turn: a URL is a warning
    (never fetched), a name not found an error at its ``\\bibliography`` line (``locations``) or
    else at ``origin``."""
    bibliographies: list[str] = []
    problems: list[Problem] = []
    for name in names:
        where = (locations or {}).get(name, origin)
        if _URL_RE.match(name):
            message = f"remote bibliography not checked (download it and cite the file): {name}"
            problems.append(Problem(message=message, location=where))
            continue
        found: list[Path] = []
        try:
            for folder in search:
                found = found or resolve_bib_name(name, folder, allowed)
        except OutsideRoots:
            problems.append(unreadable(f"a bibliography {OUTSIDE}", where))
            continue
        if not found:
            problems.append(unreadable(f"bibliography file not found: {name}", where))
        bibliographies += [str(item) for item in found if str(item) not in bibliographies]
    return bibliographies, problems
