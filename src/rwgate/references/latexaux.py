"""Which keys a LaTeX document cites, and which bibliography files it names.

The most faithful answer is what LaTeX itself wrote: ``\\citation`` lines in the ``.aux`` file (for
BibTeX and natbib) or ``bcf:citekey`` elements in the ``.bcf`` control file (for biblatex/biber).
Those are what bibtex and biber read, so the latexmk hooks use them directly. Before the first
LaTeX run, or when those files are stale, the ``.tex`` sources are scanned instead. Each piece is a
separate function because the bibtex and biber hooks need only one of them; which of them a whole
manuscript is read from is :mod:`rwgate.references.latexdoc`'s choice.

Every reader takes an optional ``allowed`` predicate, checked before each file is opened: the MCP
server passes its roots, so that an ``\\input{/etc/...}`` or an ``.aux`` symlinked elsewhere is
refused before a byte of it is read, rather than read and then hidden.
"""

from __future__ import annotations

import bisect
import glob
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rwgate.errors import InputError
from rwgate.models import Location, Problem
from rwgate.references.locate import OUTSIDE, OutsideRoots

KPSEWHICH_TIMEOUT = 5.0
_MAX_DEPTH = 50
Allowed = Callable[[Path], bool]


class LatexError(InputError):
    """A LaTeX input file could not be read; the message is one line naming the file."""


@dataclass
class AuxInfo:
    """What a LaTeX ``.aux`` file (and the ``.aux`` files it includes) tells bibtex."""

    keys: list[str] = field(default_factory=list)
    cite_all: bool = False
    bibdata: list[str] = field(default_factory=list)
    bibstyle: str | None = None
    biblatex: bool = False  # written by biblatex (\abx@aux@...): the .bcf is the real record
    files: list[Path] = field(default_factory=list)
    seen: set[str] = field(default_factory=set, repr=False, compare=False)


@dataclass
class BcfInfo:
    """What a biblatex control file (``.bcf``) tells biber."""

    keys: list[str] = field(default_factory=list)
    cite_all: bool = False
    datasources: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set, repr=False, compare=False)


@dataclass
class TexScan:
    """What the ``.tex`` sources say, with the file and line of each first mention."""

    keys: list[str] = field(default_factory=list)
    cite_all: bool = False
    bib_names: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    key_locations: dict[str, Location] = field(default_factory=dict)
    bib_locations: dict[str, Location] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    newcites: set[str] = field(default_factory=set)  # multibib's lists: \newcites{Meth,Supp}
    texts: list[tuple[Path, str]] = field(default_factory=list, repr=False)
    """Each scanned file's text, comments stripped (for :mod:`rwgate.references.texmacros`)."""
    thebibliography: bool = False  # the sources hold their own thebibliography environment


def _add(items: list[str], new: str, seen: set[str] | None = None) -> None:
    """Append ``new`` once. With ``seen`` (the items as a set, kept by the caller) each call is
    constant time: 100,000 ``\\citation`` lines read in milliseconds, not minutes."""
    if not new:
        return
    if seen is None:
        if new not in items:
            items.append(new)
    elif new not in seen:
        seen.add(new)
        items.append(new)


def _split_keys(text: str) -> list[str]:
    return [key.strip() for key in text.split(",") if key.strip()]


@dataclass
class _Walk:
    """What one walk through a file and its includes carries along."""

    allowed: Allowed | None
    seen: set[Path] = field(default_factory=set)
    root: Path = Path()  # the folder included names are relative to: the main file's


def check_allowed(path: Path, allowed: Allowed | None, where: object = None) -> None:
    # Judged as the document names it (a symlink by its own name), never by what it points to;
    # the refusal never names the file, and comes before any look at whether it exists.
    if allowed is not None and not allowed(path):
        raise LatexError(f"{where or 'a file the document reads'} {OUTSIDE}")


def _read(path: Path, allowed: Allowed | None) -> str:
    check_allowed(path, allowed)
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise LatexError(f"{path}: cannot read: {exc.strerror or exc}") from exc


# --------------------------------------------------------------------------------------------- .aux

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
    _parse_aux_file(main, info, _Walk(allowed, root=main.parent), required=True)
    if BIBLATEX_CONTROL in info.seen and _biblatex_bibtex(info):
        info.keys.remove(BIBLATEX_CONTROL)
        info.seen.discard(BIBLATEX_CONTROL)
    return info


BIBLATEX_CONTROL = "biblatex-control"
"""The key of the ``@Control`` entry biblatex's BibTeX backend cites in every ``.aux`` (from its
``JOB-blx.bib``): it passes biblatex's options to ``biblatex.bst`` and is never printed."""


def _biblatex_bibtex(info: AuxInfo) -> bool:
    """An ``.aux`` written by biblatex with ``backend=bibtex``: its ``\abx@aux@`` lines, or the
    ``JOB-blx`` control bibliography among its ``\bibdata``."""
    return info.biblatex or any(name.endswith("-blx") for name in info.bibdata)


def _parse_aux_file(path: Path, info: AuxInfo, walk: _Walk, required: bool, depth: int = 0) -> None:
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
    for match in _AUX_RE.finditer(_read(path, walk.allowed)):
        kind = match.lastgroup
        value = match.group(kind) if kind else ""
        if kind in ("citation", "abxcite"):
            for key in _split_keys(value):
                if key == "*":
                    info.cite_all = True
                else:
                    _add(info.keys, key, info.seen)
            info.biblatex = info.biblatex or kind == "abxcite"
        elif kind in ("abxall", "abx"):
            info.biblatex = True
            info.cite_all = info.cite_all or kind == "abxall"
        elif kind == "bibdata":
            for name in _split_keys(value):
                _add(info.bibdata, name)
        elif kind == "bibstyle":
            info.bibstyle = value.strip() or None
        elif kind == "input":
            _parse_aux_file(walk.root / value.strip(), info, walk, False, depth + 1)


# --------------------------------------------------------------------------------------------- .bcf


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
            if text == "*":
                info.cite_all = True
            else:
                _add(info.keys, text, info.seen)
        elif name == "datasource" and element.get("type", "file") == "file":
            _add(info.datasources, text)
    return info


# --------------------------------------------------------------------------------------------- .tex

_NATBIB = "cite citep citet citealp citealt citeauthor citefullauthor citeyear citeyearpar citenum"
_NATBIB_CAPS = "Citep Citet Citealp Citealt Citeauthor citetalias citepalias nocite"
_BIBLATEX = (
    "Cite parencite Parencite footcite footcitetext textcite Textcite smartcite Smartcite "
    "autocite Autocite supercite fullcite footfullcite citetitle Citetitle citedate citeurl"
)
_APACITE = "citeA citeNP citeyearNP citeauthorNP"
_CITE_COMMANDS = " ".join((_NATBIB, _NATBIB_CAPS, _BIBLATEX, _APACITE)).split()
_MULTICITE_COMMANDS = " ".join(
    (
        "cites Cites parencites Parencites footcites footcitetexts smartcites Smartcites",
        "textcites Textcites supercites autocites Autocites",
    )
).split()
_OPT = r"(?:\s*\[(?:[^\[\]{}]|\{[^{}]*\})*\])"
_TEX_RE = re.compile(
    rf"\\(?P<multi>{'|'.join(_MULTICITE_COMMANDS)})(?![A-Za-z])(?:\s*\([^()]*\)){{0,2}}"
    rf"(?P<margs>(?:{_OPT}{{0,2}}\s*\{{[^{{}}]*\}})+)"
    rf"|\\(?P<cite>{'|'.join(_CITE_COMMANDS)})(?![A-Za-z])\*?{_OPT}{{0,2}}\s*\{{(?P<keys>[^{{}}]*)\}}"
    r"|\\(?P<inc>input|include|subfile)(?![A-Za-z])\s*"
    r"(?:\{(?P<incarg>[^{}]*)\}|(?P<incbare>[^\s{}\\%]+))"
    r"|\\(?P<imp>import|subimport|inputfrom|subinputfrom|includefrom|subincludefrom)\*?"
    r"\s*\{(?P<impdir>[^{}]*)\}\s*\{(?P<impfile>[^{}]*)\}"
    r"|\\(?P<bib>bibliography|addbibresource|addglobalbib|addsectionbib|defaultbibliography)"
    r"(?![A-Za-z])\s*(?P<bibopt>\[[^\]]*\])?\s*\{(?P<bibarg>[^{}]*)\}"
    r"|\\putbib\s*\[(?P<putbib>[^\]]*)\]"
    r"|\\newcites\s*\{(?P<newcites>[^{}]*)\}"
    rf"|\\(?P<mcmd>cite[a-z]*|Cite[a-z]*|nocite|bibliography)(?P<msuffix>[A-Z][A-Za-z]*)"
    rf"\*?{_OPT}{{0,2}}\s*\{{(?P<mkeys>[^{{}}]*)\}}"
)
_COMMENT_RE = re.compile(r"(?<!\\)((?:\\\\)*)%.*")
_VERBATIM_RE = re.compile(r"\\begin\{(verbatim|Verbatim|lstlisting|minted|comment)\*?\}")


def strip_comments(text: str) -> str:
    """TeX source without comments and verbatim bodies, keeping every line (for line numbers)."""
    out: list[str] = []
    in_env: str | None = None
    for line in text.split("\n"):
        if in_env is not None:
            end = line.find(f"\\end{{{in_env}")
            if end < 0:
                out.append("")
                continue
            line, in_env = " " * end + line[end:], None
        line = _COMMENT_RE.sub(r"\1", line)
        begin = _VERBATIM_RE.search(line)
        if begin and f"\\end{{{begin.group(1)}" not in line[begin.end() :]:
            in_env = begin.group(1)
            line = line[: begin.start()]
        out.append(line)
    return "\n".join(out)


def _tex_candidates(name: str, base: Path) -> list[Path]:
    written = Path(name).expanduser()
    path = written if written.is_absolute() else base / written
    if path.suffix == ".tex":
        return [path]
    return [path.with_name(path.name + ".tex"), path]


def scan_tex(path: Path | str, allowed: Allowed | None = None) -> TexScan:
    """Scan a ``.tex`` file and the files it includes for citations and bibliography names."""
    main = Path(path)
    if not main.is_file():
        raise LatexError(f"{main}: no such file")
    scan = TexScan()
    _scan_file(main, scan, _Walk(allowed, root=main.parent), depth=0)
    _through_macros(scan, main.parent, allowed)
    return scan


def _through_macros(scan: TexScan, root: Path, allowed: Allowed | None) -> None:
    """The bibliography commands the document reaches through its own macros (a thesis class's
    ``\\references{dissertation}``): defined in its ``.tex`` files or in the ``.cls``/``.sty``
    files of its own folder (:mod:`rwgate.references.texmacros`)."""
    from rwgate.references import texmacros

    packages = texmacros.local_packages(
        [text for _, text in scan.texts], root, lambda p: strip_comments(_read(p, allowed))
    )
    macros: dict[str, texmacros.Macro] = {}
    for _, text in [*packages, *scan.texts]:
        macros.update(texmacros.definitions(text))
    for named in texmacros.bibliography_names(scan.texts, macros):
        _bibliography(scan, named.name, Location(file=str(named.file), line=named.line))


def _scan_file(path: Path, scan: TexScan, walk: _Walk, depth: int) -> None:
    resolved = path.resolve()
    if resolved in walk.seen or depth > _MAX_DEPTH:
        return
    walk.seen.add(resolved)
    scan.files.append(path)
    text = strip_comments(_read(path, walk.allowed))
    scan.texts.append((path, text))
    scan.thebibliography = scan.thebibliography or "\\begin{thebibliography}" in text
    starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]
    for match in _TEX_RE.finditer(text):
        here = Location(file=str(path), line=bisect.bisect_right(starts, match.start()))
        if match.group("multi"):
            _cite(scan, re.sub(_OPT, "", match.group("margs")), "", here)
        elif match.group("cite"):
            _cite(scan, "{" + match.group("keys") + "}", match.group("cite"), here)
        elif match.group("bib") or match.group("putbib") is not None:
            _bibliography(scan, match.group("bibarg") or match.group("putbib") or "", here)
        elif match.group("newcites") is not None:
            scan.newcites.update(_split_keys(match.group("newcites")))
        elif match.group("mcmd"):
            _multibib(scan, match, here)
        else:
            _include(scan, match, path, here, walk, depth)


def _cite(scan: TexScan, args: str, command: str, here: Location) -> None:
    for group in re.findall(r"\{([^{}]*)\}", args):
        for key in _split_keys(group):
            if key == "*":
                scan.cite_all = scan.cite_all or command == "nocite"
                continue
            if "#" in key:  # \cite{#1} in a macro definition: a parameter, not a key
                continue
            if key not in scan.key_locations:
                scan.keys.append(key)
                scan.key_locations[key] = here


def _multibib(scan: TexScan, match: re.Match[str], here: Location) -> None:
    """multibib's ``\\citeMeth``/``\\bibliographyMeth`` for a ``\\newcites{Meth}`` list: its works
    are printed too (bibunits' ``\\putbib`` lists need nothing: they use ``\\cite``)."""
    if match.group("msuffix") not in scan.newcites:
        return  # \citeAuthor and friends of other packages: not a multibib list
    if match.group("mcmd") == "bibliography":
        _bibliography(scan, match.group("mkeys"), here)
    else:
        _cite(scan, "{" + match.group("mkeys") + "}", match.group("mcmd"), here)


def _bibliography(scan: TexScan, names: str, here: Location) -> None:
    # Options (location=remote, label=...) do not change the name; URLs are handled by the caller.
    for name in _split_keys(names):
        if "#" in name:  # \bibliography{#1} in a macro definition: a parameter, not a file
            continue
        if name not in scan.bib_locations:
            scan.bib_names.append(name)
            scan.bib_locations[name] = here


def _include(
    scan: TexScan, match: re.Match[str], current: Path, here: Location, walk: _Walk, depth: int
) -> None:
    if match.group("imp"):
        command = match.group("imp")
        base = current.parent if command.startswith("sub") else walk.root
        name = match.group("impdir").strip() + match.group("impfile").strip()
    else:
        base, name = walk.root, (match.group("incarg") or match.group("incbare") or "").strip()
    if not name:
        return
    for candidate in _tex_candidates(name, base):
        check_allowed(candidate, walk.allowed, f"{here}: an included file")
    for candidate in _tex_candidates(name, base):
        if candidate.is_file():
            _scan_file(candidate, scan, walk, depth + 1)
            return
    scan.problems.append(Problem(message=f"included file not found: {name}", location=here))


# --------------------------------------------------------------------------------------------- join


def _kpsewhich(name: str, cwd: Path) -> Path | None:
    """Ask kpathsea (as bibtex/biber would) where a bibliography file lives."""
    exe = shutil.which("kpsewhich")
    if exe is None:
        return None
    try:
        proc = subprocess.run(
            [exe, name],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=KPSEWHICH_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not found:
        return None
    result = Path(found[0])
    return (result if result.is_absolute() else cwd / result).resolve()


def _glob_folder(pattern: Path) -> Path:
    """The part of a glob pattern before its first wildcard (what it can reach at most)."""
    parts: list[str] = []
    for part in pattern.parts:
        if any(char in part for char in "*?["):
            break
        parts.append(part)
    return Path(*parts) if parts else Path(".")


def resolve_bib_name(name: str, base: Path, allowed: Allowed | None = None) -> list[Path]:
    """Files a bibliography name refers to: next to the document (adding .bib), else kpsewhich.

    With ``allowed``, a name that reaches outside it raises :class:`OutsideRoots` before anything
    is looked at; so does a glob whose fixed part does.
    """
    if any(char in name for char in "*?["):
        pattern = Path(name).expanduser()
        pattern = pattern if pattern.is_absolute() else base / pattern
        if allowed is not None and not allowed(_glob_folder(pattern)):
            raise OutsideRoots(name)
        matches = glob.glob(str(pattern), recursive=False)  # absolute patterns too
        found = sorted(Path(p).resolve() for p in matches if Path(p).is_file())
        return [p for p in found if allowed is None or allowed(p)]
    names = [name] if name.endswith(".bib") else [name + ".bib", name]
    for candidate in names:
        written = Path(candidate).expanduser()
        path = written if written.is_absolute() else base / written
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


def resolve_bibliographies(
    names: Sequence[str],
    search: Sequence[Path],
    origin: Location,
    locations: Mapping[str, Location] | None = None,
    allowed: Allowed | None = None,
) -> tuple[list[str], list[Problem]]:
    """Bibliography names to files, each searched for in ``search`` in turn.

    One function for ``rwgate check`` and the latexmk hooks, so a remote or missing bibliography
    gets the same verdict from both: a URL is a warning (never fetched), a name not found an
    error at its ``\\bibliography`` line (``locations``) or else at ``origin``.
    """
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
            message = f"a bibliography {OUTSIDE}"
            problems.append(
                Problem(message=message, location=where, severity="error", unreadable=True)
            )
            continue
        if not found:
            message = f"bibliography file not found: {name}"
            problems.append(
                Problem(message=message, location=where, severity="error", unreadable=True)
            )
        for item in found:
            _add(bibliographies, str(item))
    return bibliographies, problems
