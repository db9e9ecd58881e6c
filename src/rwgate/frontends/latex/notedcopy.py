"""A bibliography rwgate may not rewrite, given its notes for this build all the same.

An arXiv-style bundle ships ``ms.bbl`` without the ``.bib`` it came from, and a document may
write its own ``thebibliography``: both are the user's files, never rewritten, yet the contract
is a note in the PDF or a failed build. So LaTeX reads an annotated copy for this build: each
such file is copied, with its notes, into ``AUX/rwgate-notes/`` (generated, written atomically),
and latexmk's ``-usepretex`` code declares it a substitute for the original through the LaTeX
kernel's ``\\declare@file@substitution`` (LaTeX 2020-10 and later), which every ``\\input`` of the
file (``\\jobname.bbl``, a chapter, the main file) honours. No user file changes.

The copy's name never ends in ``.bbl`` or ``.aux`` (latexmk would take it for a bibliography to
regenerate), and the main file's copy keeps its stem (TeX names the job after the first file it
reads). Whether LaTeX really read each copy is checked in the build's ``.fls`` afterwards: a
kernel without substitution, or a path TeX cannot be given, fails the build in one line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from rwgate.errors import OutputError
from rwgate.frontends.latex.bbl import annotated
from rwgate.fsutil import write_atomic

FOLDER = "rwgate-notes"
PRETEX = ".pretex"
"""``rwgate-notes/JOB.pretex``: the code the last build of a job put before its document."""
_UNSAFE = re.compile(r"[\\{}%#$&^~\s\x00-\x1f\x7f]")


class NoCopy(OutputError):
    """The notes cannot be given to LaTeX this way; ``str()`` is the one-line reason."""


def cannot_note(tex: Path, why: object) -> str:
    """The one line both front ends print when the notes cannot reach the PDF (``why``)."""
    return (
        f"{tex}: flagged entries of a bibliography rwgate may not rewrite cannot carry their"
        f" notes in the PDF ({why}); the build fails under every policy"
    )


@dataclass(frozen=True)
class Copies:
    pretex: str
    """The TeX code put before the document (empty: no file needed a copy)."""
    files: list[Path]
    """The copies LaTeX must read."""
    changed: bool = False
    """Whether a copy was (re)written: LaTeX must read it again."""


def make_copies(
    tex: Path, job: str, aux_dir: Path, bbl: Path, files: list[Path], notes: dict[str, str]
) -> Copies:
    """An annotated copy of each of ``files`` (the user's ``.bbl`` or ``.tex`` files holding the
    bibliography) whose entries have notes, and the code that makes LaTeX read them."""
    folder = aux_dir / FOLDER
    declared: list[str] = []
    copies: list[Path] = []
    changed = False
    for index, path in enumerate(files):
        data, done = annotated(path, notes)
        if not done:
            continue
        if path.resolve() == bbl.resolve():
            copy, asked = folder / f"{job}.bbl.tex", [f"{job}.bbl"]
        elif path.resolve() == tex.resolve():
            copy, asked = folder / path.name, [str(tex)]
        else:
            copy, asked = folder / f"{index}-{path.name}.tex", _names_asked(tex, path)
        if not copy.is_file() or copy.read_bytes() != data:
            write_atomic(copy, data)
            changed = True
        where = _tex_path(copy)
        for name in asked:
            if _UNSAFE.search(name):
                raise NoCopy(f"{name}: a file name TeX cannot be given safely")
            declared.append(f"\\declare@file@substitution{{{name}}}{{{where}}}")
        copies.append(copy)
    if not declared:
        return Copies("", [])
    return Copies("\\makeatletter" + "".join(declared) + "\\makeatother", copies, changed)


def previous_pretex(folder: Path, job: str) -> str:
    """The code the last build of ``job`` in ``folder`` put before its document
    (:data:`PRETEX`), so a build whose copies did not change reads them in latexmk's first run
    (its only run when nothing changed)."""
    try:
        return (folder / FOLDER / f"{job}{PRETEX}").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def remember_pretex(aux_dir: Path, job: str, pretex: str) -> None:
    write_atomic(aux_dir / FOLDER / f"{job}{PRETEX}", pretex)


def _tex_path(copy: Path) -> str:
    """The copy's path as TeX is given it (relative to where latexmk runs when shorter)."""
    relative = os.path.relpath(copy, Path.cwd())
    name = relative if not relative.startswith("..") else str(copy.resolve())
    if _UNSAFE.search(name):
        raise NoCopy(f"{copy}: a path TeX cannot be given safely (a space or a TeX character)")
    return name


def _names_asked(tex: Path, path: Path) -> list[str]:
    """The names a document may ``\\input`` an included file by: relative to its main file's
    folder, with and without ``.tex``."""
    try:
        relative = path.resolve().relative_to(tex.resolve().parent).as_posix()
    except ValueError:
        relative = str(path.resolve())
    return [relative, relative.removesuffix(".tex")] if relative.endswith(".tex") else [relative]


def read_by_latex(fls: Path, copies: list[Path]) -> list[Path]:
    """The copies the build's ``.fls`` (latexmk always asks for one) does not list as read."""
    try:
        listed = fls.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return list(copies)
    inputs = {
        os.path.normpath(line[len("INPUT ") :].strip())
        for line in listed.splitlines()
        if line.startswith("INPUT ")
    }
    resolved = {os.path.normpath(os.path.abspath(p)) for p in inputs}
    return [c for c in copies if os.path.normpath(str(c.resolve())) not in resolved | inputs]
