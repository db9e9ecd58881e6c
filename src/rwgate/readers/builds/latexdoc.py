"""A LaTeX manuscript as a whole: what each of its bibliographies cites, read from what LaTeX
wrote when that is current, else from the sources; ``rwgate check paper.tex``, the MCP tools and
the latexmk gate (:mod:`rwgate.frontends.latex.gate`) read it alike, so all give one verdict.

A document with its own ``thebibliography`` (or an ``\\input`` ``.bbl``) is its own bibliography:
every ``\\bibitem`` it prints is judged. A chapter with no ``\\documentclass`` that names no
bibliography (a staged file the pre-commit hook is handed) is read with its main document's
(:func:`main_document`): alone it would be "cannot judge" and block every commit of a chapter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from rwgate.contract.models import CitedDocument, Location, Problem
from rwgate.readers.builds.bibfind import resolve_bibliographies
from rwgate.readers.builds.latexaux import AuxInfo, bibliography_parts, parse_aux, parse_bcf
from rwgate.readers.builds.latexread import Allowed, LatexError, read_tex
from rwgate.readers.builds.texscan import scan_tex
from rwgate.readers.reach import CANNOT_JUDGE as UNJUDGED
from rwgate.readers.reach import unreached


def _fresh(record: Path, newest: Path) -> bool:
    """A file LaTeX wrote is usable when it is no older than the newest ``.tex`` source: a
    citation added to an ``\\include``d chapter since the last run is not in it yet."""
    return record.is_file() and record.stat().st_mtime >= newest.stat().st_mtime


def read_latex(
    path: Path, aux_dir: Path | None = None, allowed: Allowed | None = None
) -> CitedDocument:
    """A LaTeX manuscript's citations: from its .bcf or .aux when fresh, else from its sources."""
    tex = Path(path)
    scan = scan_tex(tex, allowed)
    problems = list(scan.problems)
    out = Path(aux_dir) if aux_dir else tex.parent
    aux_path, bcf_path = out / f"{tex.stem}.aux", out / f"{tex.stem}.bcf"
    newest = max(scan.files, key=lambda p: p.stat().st_mtime)
    aux = parse_aux(aux_path, allowed) if _fresh(aux_path, newest) else None
    keys, cite_all, names = scan.keys, scan.cite_all, scan.bib_names
    origin = str(tex)
    if _fresh(bcf_path, newest) and (aux is None or aux.biblatex):
        bcf = parse_bcf(bcf_path, allowed)
        keys, cite_all, names, origin = bcf.keys, bcf.cite_all, bcf.datasources, str(bcf_path)
    elif aux is not None and (aux.keys or aux.cite_all or aux.bibdata):
        keys, cite_all, origin = aux.keys, aux.cite_all, str(aux_path)
        names = aux.bibdata or scan.bib_names
    elif aux is None and (stale := [p for p in (aux_path, bcf_path) if p.is_file()]):
        message = f"{stale[0].name} is older than {newest.name}; citations read from the source"
        problems.append(Problem(message=message))
    if origin != str(tex):  # LaTeX ran: what it read is in its .aux/.bcf, seen or not by rwgate
        problems = [p.model_copy(update={"unseen": False}) if p.unseen else p for p in problems]
    bibliographies, missing = resolve_bibliographies(
        names, [tex.parent], Location(file=origin), scan.bib_locations, allowed
    )
    if origin != str(bcf_path) and scan.embedded:
        # Its own thebibliography (or a .bbl it \input s): what LaTeX prints, every \bibitem
        # of it whether cited or not (:func:`rwgate.readers.builds.bbl.parse_embedded`).
        bibliographies += [str(p) for p in scan.embedded if str(p) not in bibliographies]
        cite_all = cite_all or not names
    elif origin == str(tex):
        root = _root_of(tex, keys, names, allowed)
        if root is not None:  # a chapter staged alone: its main document names the .bib
            whole = read_latex(root, None, allowed)
            _judgeable(tex, keys, whole.bibliographies, whole.bibliographies)  # as for any doc
            return whole.model_copy(
                update={
                    "path": str(tex),
                    "keys": keys,
                    "cite_all": cite_all,
                    "key_locations": scan.key_locations,
                    "problems": [*problems, *whole.problems],
                    "parts": [],
                }
            )
        _judgeable(tex, keys, names, bibliographies)
    # multibib, bibunits, chapterbib: the .aux files bibtex reads besides this one
    parts = bibliography_parts(out, tex.stem, aux, allowed) if aux is not None else []
    return CitedDocument(
        path=str(tex),
        keys=keys,
        cite_all=cite_all,
        bibliographies=bibliographies,
        problems=[*problems, *missing],
        key_locations=scan.key_locations,
        parts=[aux_document(path, [tex.parent], allowed, info) for path, info in parts],
    )


def _root_of(tex: Path, keys: list[str], names: list[str], allowed: Allowed | None) -> Path | None:
    """The main document of a chapter that cites but names no bibliography, or None."""
    if not keys or names:
        return None
    text = read_tex(tex, allowed)
    return main_document(tex, text, allowed) if is_fragment(text) else None


CANNOT_JUDGE = f"{UNJUDGED}: build first (rwgate then reads the .aux/.bcf) or name the .bib"


def _judgeable(tex: Path, keys: list[str], names: list[str], files: list[str]) -> None:
    """Cited keys that reach no bibliography are an error (:mod:`rwgate.readers.reach`);
    for LaTeX "no bibliography found" means no bibliography command was found."""
    why = unreached(keys, names, files)
    if why == "no bibliography found":
        why = "no bibliography command found"
    if why:
        raise LatexError(f"{tex}: {CANNOT_JUDGE} ({why})")


def aux_document(
    aux: Path, search: Sequence[Path], allowed: Allowed | None = None, info: AuxInfo | None = None
) -> CitedDocument:
    """What bibtex reads from one ``.aux`` file: its ``\\citation``s (and its ``\\@input`` files'),
    its ``\\bibdata`` files found in ``search``; keys matched as BibTeX matches them. ``info`` is
    the file already parsed, if it was."""
    info = info or parse_aux(aux, allowed)
    doc = _document(aux, info.keys, info.cite_all, info.bibdata, search, allowed)
    return doc.model_copy(update={"bibtex_keys": not info.biblatex})


def bcf_document(bcf: Path, search: Sequence[Path]) -> CitedDocument:
    """What biber reads: the ``.bcf`` citekeys (every refsection) and its file datasources."""
    info = parse_bcf(bcf)
    return _document(bcf, info.keys, info.cite_all, info.datasources, search)


def _document(
    source: Path,
    keys: list[str],
    cite_all: bool,
    names: list[str],
    search: Sequence[Path],
    allowed: Allowed | None = None,
) -> CitedDocument:
    bibs, problems = resolve_bibliographies(
        names, search, Location(file=str(source)), allowed=allowed
    )
    return CitedDocument(
        path=str(source), keys=keys, cite_all=cite_all, bibliographies=bibs, problems=problems
    )


_ROOT_COMMENT = re.compile(
    r"^[ \t]*%[ \t]*!TEX[ \t]+root[ \t]*=[ \t]*(\S[^\r\n]*?)[ \t]*$", re.I | re.M
)
_CLASS = re.compile(r"^[^%\n]*\\documentclass\b", re.M)
LEVELS = 2
MAX_CANDIDATES = 40
"""``.tex`` files looked at per folder: a folder of hundreds of generated files is not searched."""


def is_fragment(text: str) -> bool:
    """A file with no ``\\documentclass`` outside comments: part of another document."""
    return _CLASS.search(text) is None


def main_document(tex: Path, text: str, allowed: Allowed | None = None) -> Path | None:
    """The main document of the fragment ``tex`` (whose text is ``text``): the one the magic
    comment ``% !TEX root = ../main.tex`` names, else the one ``.tex`` file with a
    ``\\documentclass`` in its folder, or up to :data:`LEVELS` folders above, whose sources
    include it. None when there is none or more than one in the nearest folder that has any: a
    guess between two documents could pick the wrong bibliography. Files outside ``allowed`` are
    never read."""
    named = _ROOT_COMMENT.search(text[:8192])
    if named:
        root = (tex.parent / named.group(1).strip()).resolve()
        if root.suffix == "":
            root = root.with_suffix(".tex")
        if root != tex.resolve() and root.is_file() and (allowed is None or allowed(root)):
            return root
        return None
    me = tex.resolve()
    folder = me.parent
    for _ in range(LEVELS + 1):
        found = []
        for candidate in sorted(folder.glob("*.tex"))[:MAX_CANDIDATES]:
            if candidate.resolve() == me or (allowed is not None and not allowed(candidate)):
                continue
            try:
                if is_fragment(read_tex(candidate, allowed)):
                    continue
                files = scan_tex(candidate, allowed).files
            except LatexError:
                continue
            if me in {f.resolve() for f in files}:
                found.append(candidate)
        if found:
            return found[0] if len(found) == 1 else None
        if folder.parent == folder:
            return None
        folder = folder.parent
    return None
