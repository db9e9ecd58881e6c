"""What LaTeX wrote down for the bibliography tool: the keys and bibliography files of the ``.aux``
(``\\citation``, ``\\bibdata``: BibTeX, natbib) and of the ``.bcf`` (``bcf:citekey``: biber). The
latexmk hooks read these directly; before the first LaTeX run the sources are scanned instead
(:mod:`.texscan`; :mod:`.latexdoc` chooses). Each file is checked against ``allowed`` (the MCP
server's roots) before it is opened, and read as BibTeX reads bytes (:func:`.latexread.read_tex`).

A BibTeX build may have other bibliographies (:func:`bibliography_parts`): multibib's ``Meth.aux``
(``\\newcites{Meth}``), bibunits' ``bu1.aux``..., chapterbib's chapters with their own
``\\bibdata``. latexmk runs BibTeX on each, so a work cited only there is printed too. Which
``.aux`` files belong to the build is what LaTeX recorded: the ``.fls`` ``OUTPUT`` lines and the
``.log``'s ``\\openout``s.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from rwgate.readers.builds.latexread import (
    Allowed,
    LatexError,
    Walk,
    check_allowed,
    read_tex,
    split_keys,
)


@dataclass
class AuxInfo:
    """What a LaTeX ``.aux`` file (and the ``.aux`` files it includes) tells bibtex."""

    keys: list[str] = field(default_factory=list)
    cite_all: bool = False
    bibdata: list[str] = field(default_factory=list)
    bibstyle: str | None = None
    biblatex: bool = False  # written by biblatex (\abx@aux@...): the .bcf is the real record
    files: list[Path] = field(default_factory=list)


@dataclass
class BcfInfo:
    """What a biblatex control file (``.bcf``) tells biber."""

    keys: list[str] = field(default_factory=list)
    cite_all: bool = False
    datasources: list[str] = field(default_factory=list)


_AUX_RE = re.compile(
    r"\\citation\{(?P<citation>[^{}]*)\}"
    r"|\\abx@aux@cite\{[^{}]*\}\{(?P<abxcite>[^{}]*)\}"
    r"|(?P<abxall>\\abx@aux@nociteall)"
    r"|(?P<abx>\\abx@aux@)"
    r"|\\bibdata\{(?P<bibdata>[^{}]*)\}"
    r"|\\bibstyle\{(?P<bibstyle>[^{}]*)\}"
    r"|\\@input\{(?P<input>[^{}]*)\}"
)


MAX_AUX_DEPTH = 64


def parse_aux(path: Path | str, allowed: Allowed | None = None) -> AuxInfo:
    """Read an ``.aux`` file and every ``\\@input`` aux file it names (relative to its dir)."""
    main = Path(path)
    info = AuxInfo()
    _parse_aux_file(main, info, Walk(allowed, root=main.parent), required=True)
    info.keys, info.bibdata = list(dict.fromkeys(info.keys)), list(dict.fromkeys(info.bibdata))
    # Written by biblatex with backend=bibtex: its \abx@aux@ lines, or the JOB-blx control .bib.
    if BIBLATEX_CONTROL in info.keys and (
        info.biblatex or any(name.endswith("-blx") for name in info.bibdata)
    ):
        info.keys.remove(BIBLATEX_CONTROL)
    return info


BIBLATEX_CONTROL = "biblatex-control"
"""The key of the ``@Control`` entry biblatex's BibTeX backend cites in every ``.aux`` (from its
``JOB-blx.bib``): it passes biblatex's options to ``biblatex.bst`` and is never printed."""


def _parse_aux_file(path: Path, info: AuxInfo, walk: Walk, required: bool, depth: int = 0) -> None:
    if depth > MAX_AUX_DEPTH:
        raise LatexError(f"{path}: \\@input nested more than {MAX_AUX_DEPTH} files deep")
    resolved = path.resolve()
    if resolved in walk.seen or len(walk.seen) > 10_000:
        return
    walk.seen.add(resolved)
    if not path.is_file():
        if required:
            raise LatexError(f"{path}: no such file")
        return  # LaTeX writes \@input for \include files not yet compiled; bibtex skips them too
    info.files.append(path)
    for match in _AUX_RE.finditer(read_tex(path, walk.allowed)):
        kind = match.lastgroup
        value = match.group(kind) if kind else ""
        if kind in ("citation", "abxcite"):
            keys = split_keys(value)
            info.keys += [key for key in keys if key != "*"]
            info.cite_all = info.cite_all or "*" in keys
            info.biblatex = info.biblatex or kind == "abxcite"
        elif kind in ("abxall", "abx"):
            info.biblatex = True
            info.cite_all = info.cite_all or kind == "abxall"
        elif kind == "bibdata":
            info.bibdata += split_keys(value)
        elif kind == "bibstyle":
            info.bibstyle = value.strip() or None
        elif kind == "input":
            _parse_aux_file(walk.root / value.strip(), info, walk, False, depth + 1)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def parse_bcf(path: Path | str, allowed: Allowed | None = None) -> BcfInfo:
    """Read a biblatex control file: cited keys of every refsection and the file data sources."""
    path = Path(path)
    if not path.is_file():
        raise LatexError(f"{path}: no such file")
    check_allowed(path, allowed)
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, LookupError, ValueError, RecursionError) as exc:
        reason = " ".join(str(exc).split())[:120] or type(exc).__name__
        raise LatexError(f"{path}: malformed biblatex control file (.bcf): {reason}") from None
    except OSError as exc:
        raise LatexError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if _local(root.tag) != "controlfile":
        raise LatexError(f"{path}: not a biblatex control file (root element <{root.tag}>)")
    info = BcfInfo()
    for element in root.iter():
        name = _local(element.tag)
        text = (element.text or "").strip()
        if name == "citekey":
            info.cite_all = info.cite_all or text == "*"
            info.keys += [text] if text not in ("", "*") else []
        elif name == "datasource" and text and element.get("type", "file") == "file":
            info.datasources.append(text)
    info.keys, info.datasources = (
        list(dict.fromkeys(info.keys)),
        list(dict.fromkeys(info.datasources)),
    )
    return info


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
                found.append(pwd / line[7:])
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
