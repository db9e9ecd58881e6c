"""Which keys a LaTeX document's ``.tex`` sources cite, and which bibliographies they name: what
is read before the first LaTeX run, or when the ``.aux``/``.bcf`` is stale. The citation commands
of natbib, biblatex, apacite and multibib, the files ``\\input``, ``\\include``, ``\\subfile`` and
``\\import`` bring in, the bibliography commands (also through the document's own macros,
:mod:`.texmacros`), and the files with a ``thebibliography`` of their own (:mod:`.bbl`).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from pathlib import Path

from rwgate.contract.models import Location, Problem
from rwgate.readers.builds import texmacros
from rwgate.readers.builds.latexread import (
    Allowed,
    LatexError,
    Walk,
    check_allowed,
    read_tex,
    split_keys,
)

_MAX_DEPTH = 50
THEBIBLIOGRAPHY = re.compile(r"\\begin\s*\{thebibliography\}")


@dataclass
class TexScan:
    """What the ``.tex`` sources say: each cited key and bibliography name (in order) with the file
    and line of its first mention."""

    cite_all: bool = False
    problems: list[Problem] = field(default_factory=list)
    key_locations: dict[str, Location] = field(default_factory=dict)
    bib_locations: dict[str, Location] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    newcites: set[str] = field(default_factory=set)  # multibib's lists: \newcites{Meth,Supp}
    texts: list[tuple[Path, str]] = field(default_factory=list, repr=False)  # comments stripped
    embedded: list[Path] = field(default_factory=list)  # with a thebibliography of their own

    @property
    def keys(self) -> list[str]:
        return list(self.key_locations)

    @property
    def bib_names(self) -> list[str]:
        return list(self.bib_locations)


_CITE_COMMANDS = (  # natbib's, biblatex's (from Cite), apacite's (from citeA)
    "cite citep citet citealp citealt citeauthor citefullauthor citeyear citeyearpar citenum"
    " Citep Citet Citealp Citealt Citeauthor citetalias citepalias nocite"
    " Cite parencite Parencite footcite footcitetext textcite Textcite smartcite Smartcite"
    " autocite Autocite supercite fullcite footfullcite citetitle Citetitle citedate citeurl"
    " citeA citeNP citeyearNP citeauthorNP"
)
_MULTICITE_COMMANDS = (
    "cites Cites parencites Parencites footcites footcitetexts smartcites Smartcites"
    " textcites Textcites supercites autocites Autocites"
)
_OPT = r"(?:\s*\[(?:[^\[\]{}]|\{[^{}]*\})*\])"
_TEX_RE = re.compile(
    rf"\\(?P<multi>{'|'.join(_MULTICITE_COMMANDS.split())})(?![A-Za-z])(?:\s*\([^()]*\)){{0,2}}"
    rf"(?P<margs>(?:{_OPT}{{0,2}}\s*\{{[^{{}}]*\}})+)"
    rf"|\\(?P<cite>{'|'.join(_CITE_COMMANDS.split())})(?![A-Za-z])\*?{_OPT}{{0,2}}\s*\{{(?P<keys>[^{{}}]*)\}}"
    r"|\\(?P<inc>input|include|subfile)(?![A-Za-z])\s*"
    r"(?:\{(?P<incarg>[^{}]*)\}|(?P<incbare>[^\s{}\\%]+))"
    r"|\\(?P<imp>import|subimport|inputfrom|subinputfrom|includefrom|subincludefrom)\*?"
    r"\s*\{(?P<impdir>[^{}]*)\}\s*\{(?P<impfile>[^{}]*)\}"
    rf"|\\(?P<bib>{texmacros.BIB_COMMANDS})"
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
    path = base / Path(name).expanduser()
    if path.suffix == ".tex":
        return [path]
    return [path.with_name(path.name + ".tex"), path]


def scan_tex(path: Path | str, allowed: Allowed | None = None) -> TexScan:
    """Scan a ``.tex`` file and the files it includes for citations and bibliography names."""
    main = Path(path)
    if not main.is_file():
        raise LatexError(f"{main}: no such file")
    scan = TexScan()
    _scan_file(main, scan, Walk(allowed, root=main.parent), depth=0)
    _through_macros(scan, main.parent, allowed)
    return scan


def _through_macros(scan: TexScan, root: Path, allowed: Allowed | None) -> None:
    """The bibliography commands the document reaches through its own macros (a thesis class's
    ``\\references{dissertation}``), defined in its ``.tex`` or its folder's ``.cls``/``.sty``."""
    packages = texmacros.local_packages(
        [text for _, text in scan.texts], root, lambda p: strip_comments(read_tex(p, allowed))
    )
    macros: dict[str, texmacros.Macro] = {}
    for _, text in [*packages, *scan.texts]:
        macros.update(texmacros.definitions(text))
    for named in texmacros.bibliography_names(scan.texts, macros):
        _bibliography(scan, named.name, Location(file=str(named.file), line=named.line))


def _scan_file(path: Path, scan: TexScan, walk: Walk, depth: int) -> None:
    resolved = path.resolve()
    if resolved in walk.seen or depth > _MAX_DEPTH:
        return
    walk.seen.add(resolved)
    scan.files.append(path)
    text = strip_comments(read_tex(path, walk.allowed))
    scan.texts.append((path, text))
    if THEBIBLIOGRAPHY.search(text):
        scan.embedded.append(path)
    starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]
    matches = list(_TEX_RE.finditer(text))
    _through_kpathsea(matches, walk)
    for match in matches:
        here = Location(file=str(path), line=bisect.bisect_right(starts, match.start()))
        if match.group("multi"):
            _cite(scan, re.sub(_OPT, "", match.group("margs")), "", here)
        elif match.group("cite"):
            _cite(scan, "{" + match.group("keys") + "}", match.group("cite"), here)
        elif match.group("bib") or match.group("putbib") is not None:
            _bibliography(scan, match.group("bibarg") or match.group("putbib") or "", here)
        elif match.group("newcites") is not None:
            scan.newcites.update(split_keys(match.group("newcites")))
        elif match.group("mcmd"):
            _multibib(scan, match, here)
        else:
            _include(scan, match, path, here, walk, depth)


def _cite(scan: TexScan, args: str, command: str, here: Location) -> None:
    for group in re.findall(r"\{([^{}]*)\}", args):
        for key in split_keys(group):
            if key == "*":
                scan.cite_all = scan.cite_all or command == "nocite"
            elif "#" not in key:  # \cite{#1} in a macro definition: a parameter, not a key
                scan.key_locations.setdefault(key, here)


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
    for name in split_keys(names):
        if "#" not in name:  # \bibliography{#1} in a macro definition: a parameter, not a file
            scan.bib_locations.setdefault(name, here)


def _include(
    scan: TexScan, match: re.Match[str], current: Path, here: Location, walk: Walk, depth: int
) -> None:
    if match.group("imp"):
        base = current.parent if match.group("imp").startswith("sub") else walk.root
        name = match.group("impdir").strip() + match.group("impfile").strip()
    else:
        base, name = walk.root, (match.group("incarg") or match.group("incbare") or "").strip()
    if not name:
        return
    candidates = _tex_candidates(name, base)
    for candidate in candidates:
        check_allowed(candidate, walk.allowed, f"{here}: an included file")
    found = next((c for c in candidates if c.is_file()), None)
    if found is None and not match.group("imp"):
        found = next((walk.kpathsea[c] for c in _kpse_names(name) if c in walk.kpathsea), None)
    if found is not None:
        _scan_file(found, scan, walk, depth + 1)
        return
    scan.problems.append(
        Problem(
            message=f"included file not found: {name} (nor through TEXINPUTS): the citations "
            "in it are not checked",
            location=here,
            unseen=True,
        )
    )


def _kpse_names(name: str) -> list[str]:
    """The names LaTeX asks kpathsea for when ``\\input{name}`` is not found as written."""
    return [name] if name.endswith(".tex") else [f"{name}.tex", name]


def _through_kpathsea(matches: list[re.Match[str]], walk: Walk) -> None:
    """Ask kpathsea once (into ``walk.kpathsea``) for the ``\\input``/``\\include``/``\\subfile``
    names of one file not next to the document, as LaTeX finds them (``TEXINPUTS``); never with
    ``allowed`` (MCP's roots): the server's TeX paths are not the document's."""
    if walk.allowed is not None:
        return
    wanted: list[str] = []
    for match in matches:
        name = (match.group("incarg") or match.group("incbare") or "").strip()
        if not match.group("inc") or not name or Path(name).expanduser().is_absolute():
            continue
        if not any(c.is_file() for c in _tex_candidates(name, walk.root)):
            wanted += [n for n in _kpse_names(name) if n not in walk.kpathsea]
    if wanted:
        from rwgate.readers.builds.bibfind import kpsewhich_all

        walk.kpathsea.update(kpsewhich_all(list(dict.fromkeys(wanted)), walk.root))
