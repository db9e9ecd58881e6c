"""Which keys a LaTeX document cites, and which bibliography files it names.

The most faithful answer is what LaTeX itself wrote: ``\\citation`` lines in the ``.aux`` file (for
BibTeX and natbib) or ``bcf:citekey`` elements in the ``.bcf`` control file (for biblatex/biber).
Those are what bibtex and biber read, so the latexmk hooks use them directly. Before the first
LaTeX run, or when those files are stale, the ``.tex`` sources are scanned instead. Each piece is a
separate function because the bibtex and biber hooks need only one of them.

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
from rwgate.models import CitedDocument, Location, Problem
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


def _check_allowed(path: Path, allowed: Allowed | None, where: object = None) -> None:
    # Judged as the document names it (a symlink by its own name), never by what it points to;
    # the refusal never names the file, and comes before any look at whether it exists.
    if allowed is not None and not allowed(path):
        raise LatexError(f"{where or 'a file the document reads'} {OUTSIDE}")


def _read(path: Path, allowed: Allowed | None) -> str:
    _check_allowed(path, allowed)
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
    return info


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
    _check_allowed(path, allowed)
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
    r"|\\(?P<bib>bibliography|addbibresource|addglobalbib|addsectionbib)(?![A-Za-z])"
    r"\s*(?P<bibopt>\[[^\]]*\])?\s*\{(?P<bibarg>[^{}]*)\}"
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
    return scan


def _scan_file(path: Path, scan: TexScan, walk: _Walk, depth: int) -> None:
    resolved = path.resolve()
    if resolved in walk.seen or depth > _MAX_DEPTH:
        return
    walk.seen.add(resolved)
    scan.files.append(path)
    text = strip_comments(_read(path, walk.allowed))
    starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]
    for match in _TEX_RE.finditer(text):
        here = Location(file=str(path), line=bisect.bisect_right(starts, match.start()))
        if match.group("multi"):
            _cite(scan, re.sub(_OPT, "", match.group("margs")), "", here)
        elif match.group("cite"):
            _cite(scan, "{" + match.group("keys") + "}", match.group("cite"), here)
        elif match.group("bib"):
            _bibliography(scan, match, here)
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


def _bibliography(scan: TexScan, match: re.Match[str], here: Location) -> None:
    # Options (location=remote, label=...) do not change the name; URLs are handled by the caller.
    for name in _split_keys(match.group("bibarg")):
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
        _check_allowed(candidate, walk.allowed, f"{here}: an included file")
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
    bibliographies, missing = resolve_bibliographies(
        names, [tex.parent], Location(file=origin), scan.bib_locations, allowed
    )
    return CitedDocument(
        path=str(tex),
        keys=keys,
        cite_all=cite_all,
        bibliographies=bibliographies,
        problems=[*problems, *missing],
        key_locations=scan.key_locations,
    )
