"""The other bibliographies of a BibTeX build: multibib (``\\newcites{Meth}`` writes
``Meth.aux``), bibunits (``bu1.aux``...) and chapterbib (an ``\\include``d chapter's ``.aux`` with
its own ``\\bibdata``). latexmk runs BibTeX on each, so a retracted work cited only in one of them
is printed: reading the main ``.aux`` alone would let it pass. Which ``.aux`` files belong to the
build is what LaTeX recorded: the ``.fls`` ``OUTPUT`` lines and the ``.log``'s ``\\openout``s.
"""

from __future__ import annotations

import re
from pathlib import Path

from rwgate.readers.builds.latexaux import AuxInfo, parse_aux
from rwgate.readers.builds.latexread import Allowed, LatexError, check_allowed, read_tex

_OPENOUT = re.compile(r"^\\openout\d+ = `(?P<name>[^']+\.aux)'\.?$", re.M)


def _read(path: Path, allowed: Allowed | None) -> str:
    check_allowed(path, allowed)
    try:
        return read_tex(path)  # file names as the .aux keys: each stray byte one character
    except LatexError:
        return ""


def written_aux(aux_dir: Path, job: str, allowed: Allowed | None = None) -> list[Path]:
    """Every ``.aux`` file the last LaTeX run of ``job`` wrote, in the order it opened them: the
    ``.fls`` record's and the ``.log``'s together (a ``.fls`` left from a build with ``-recorder``
    on would miss a list added since; the ``.log`` is always the last run's)."""
    found: list[Path] = []
    fls_path = aux_dir / f"{job}.fls"
    if fls_path.is_file():
        pwd = Path(".")
        for line in _read(fls_path, allowed).splitlines():
            if line.startswith("PWD "):
                pwd = Path(line[4:])
            elif line.startswith("OUTPUT ") and line.endswith(".aux"):
                path = Path(line[7:])
                found.append(path if path.is_absolute() else pwd / path)
    log = aux_dir / f"{job}.log"
    if log.is_file():
        found += [aux_dir / m.group("name") for m in _OPENOUT.finditer(_read(log, allowed))]
    unique: dict[Path, Path] = {}
    for path in found:
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def bibliography_parts(
    aux_dir: Path, job: str, main: AuxInfo, allowed: Allowed | None = None
) -> list[tuple[Path, AuxInfo]]:
    """The ``.aux`` files BibTeX reads on their own besides the main one: those the main ``.aux``
    does not include (multibib, bibunits) that cite or name a bibliography, and included ones
    (chapterbib) that name their own, each with what it says. A biblatex build has one ``.bcf``
    and none of these."""
    if main.biblatex:
        return []
    included = {path.resolve() for path in main.files}
    main_aux = (aux_dir / f"{job}.aux").resolve()
    parts: list[tuple[Path, AuxInfo]] = []
    for path in written_aux(aux_dir, job, allowed):
        resolved = path.resolve()
        if resolved == main_aux or path.suffix != ".aux":
            continue
        check_allowed(path, allowed)
        if not path.is_file():
            continue
        own = parse_aux(path, allowed)
        if own.biblatex:
            continue
        if own.bibdata or (resolved not in included and (own.keys or own.cite_all)):
            parts.append((path, own))
    return parts
