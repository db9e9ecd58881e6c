"""Bibliography commands a document reaches through its own macros.

A thesis class may wrap ``\\bibliography`` in a macro of its own (``\\references{dissertation}``,
defined as ``\\newcommand*\\references[1]{...\\bibliography{#1}}``): read naively, the document
names no bibliography and every citation passes as ``missing_entry``. So the simple definitions
(``\\newcommand``, ``\\renewcommand``, ``\\providecommand``, ``\\DeclareRobustCommand``,
``\\def``) of the document's ``.tex`` files and of the ``.cls``/``.sty`` files in its own folder
are read, each use of a macro reaching a bibliography command has its arguments put in place of
``#1``..``#9``, and the bibliography commands of the result are what the document names. Bounded
(:data:`MAX_DEPTH`, :data:`MAX_EXPANSIONS`); a name still holding a ``#`` is a parameter, never a
file. Nothing is executed; ``\\let``, ``\\csname`` and expl3 are not followed.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from rwgate.readers.builds.bblscan import balanced, group

MAX_DEPTH = 8
MAX_EXPANSIONS = 10_000
MAX_PACKAGES = 64

BIB_COMMANDS = "bibliography|addbibresource|addglobalbib|addsectionbib|defaultbibliography"
BIB_COMMAND = re.compile(
    rf"\\(?P<cmd>{BIB_COMMANDS})(?![A-Za-z@])\s*(?:\[[^\]]*\])?\s*\{{(?P<names>[^{{}}]*)\}}"
)
_BIB_NAMES = frozenset(BIB_COMMANDS.split("|"))
_NEWCOMMAND = re.compile(
    r"\\(?:newcommand|renewcommand|providecommand|DeclareRobustCommand)\*?\s*"
    r"(?:\{\s*\\(?P<braced>[A-Za-z@]+)\s*\}|\\(?P<bare>[A-Za-z@]+))"
    r"\s*(?:\[\s*(?P<nargs>\d)\s*\])?\s*(?P<opt>\[)?"
)
_DEF = re.compile(r"\\[gex]?def\s*\\(?P<name>[A-Za-z@]+)(?P<params>(?:\s*#\d)*)\s*(?=\{)")
_PACKAGE = re.compile(
    r"\\(?:documentclass|usepackage|RequirePackage|LoadClass|LoadClassWithOptions)"
    r"\s*(?:\[[^\]]*\])?\s*\{(?P<names>[^{}]*)\}"
)


@dataclass(frozen=True)
class Macro:
    nargs: int
    default: str | None  # the optional first argument's default, when it has one
    body: str


@dataclass(frozen=True)
class Named:
    """A bibliography name found through a macro, with the file and line of the macro's use."""

    name: str
    file: Path
    line: int


def definitions(text: str) -> dict[str, Macro]:
    """The simple macro definitions in ``text`` (comments already stripped); the last wins."""
    return {name: macro for name, macro, _ in _definitions(text) if name not in _BIB_NAMES}


def _blanked(text: str) -> str:
    """``text`` with each definition blanked out (lines kept): the ``\\references[1]`` of
    ``\\newcommand*\\references[1]{...}`` is not a use of the macro."""
    for _, _, (start, end) in _definitions(text):
        span = text[start:end]
        text = text[:start] + re.sub(r"[^\n]", " ", span) + text[end:]
    return text


def _definitions(text: str) -> list[tuple[str, Macro, tuple[int, int]]]:
    found: list[tuple[str, Macro, tuple[int, int]]] = []
    for match in _NEWCOMMAND.finditer(text):
        name = match.group("braced") or match.group("bare")
        default = None
        at = match.end()
        if match.group("opt"):
            close = balanced(text, at - 1, "[", "]")
            if close < 0:
                continue
            default, at = text[at : close - 1], close
        body = group(text, at)
        if body is not None:
            macro = Macro(int(match.group("nargs") or 0), default, body[0])
            found.append((name, macro, (match.start(), body[1])))
    for match in _DEF.finditer(text):
        body = group(text, match.end())
        if body is not None:
            macro = Macro(match.group("params").count("#"), None, body[0])
            found.append((match.group("name"), macro, (match.start(), body[1])))
    return sorted(found, key=lambda item: item[2])


def _argument(text: str, at: int) -> tuple[str, int] | None:
    """One undelimited argument as TeX reads it: a group, or a single token."""
    while at < len(text) and text[at].isspace():
        at += 1
    if at >= len(text):
        return None
    if text[at] == "{":
        return group(text, at)
    if text[at] == "\\":
        word = re.match(r"\\(?:[A-Za-z@]+|.)", text[at:], re.S)
        return (word.group(0), at + len(word.group(0))) if word else None
    return (text[at], at + 1) if text[at] != "}" else None


def _substitute(body: str, args: list[str]) -> str:
    def put(match: re.Match[str]) -> str:
        if match.group(0) == "##":
            return "#"
        index = int(match.group(0)[1]) - 1
        return args[index] if index < len(args) else match.group(0)

    return re.sub(r"##|#[1-9]", put, body)


def _uses(text: str, name: str, macro: Macro) -> Iterator[tuple[int, str]]:
    """Each use of ``\\name`` in ``text``: where it starts, and the body with its arguments."""
    for match in re.finditer(rf"\\{re.escape(name)}(?![A-Za-z@])\*?", text):
        at, args = match.end(), []
        if macro.default is not None:
            rest = text[at:].lstrip()
            if rest.startswith("["):
                start = len(text) - len(rest)
                close = balanced(text, start, "[", "]")
                if close < 0:
                    continue
                args.append(text[start + 1 : close - 1])
                at = close
            else:
                args.append(macro.default)
        while len(args) < macro.nargs:
            found = _argument(text, at)
            if found is None:
                break
            args.append(found[0])
            at = found[1]
        if len(args) == macro.nargs:
            yield match.start(), _substitute(macro.body, args)


def _reaching(macros: dict[str, Macro]) -> dict[str, Macro]:
    """The macros whose body names a bibliography, directly or through another such macro."""
    reach = {n: m for n, m in macros.items() if BIB_COMMAND.search(m.body)}
    for _ in range(MAX_DEPTH):
        more = {
            n: m
            for n, m in macros.items()
            if n not in reach
            and any(re.search(rf"\\{re.escape(r)}(?![A-Za-z@])", m.body) for r in reach)
        }
        if not more:
            break
        reach.update(more)
    return reach


def bibliography_names(texts: list[tuple[Path, str]], macros: dict[str, Macro]) -> list[Named]:
    """Every bibliography name the uses of ``macros`` in ``texts`` give, in order of use."""
    reach = _reaching(macros)
    found: list[Named] = []
    budget = [MAX_EXPANSIONS]
    for path, source in texts:
        text = _blanked(source)
        starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]
        for name, macro in reach.items():
            for start, expanded in _uses(text, name, macro):
                line = bisect.bisect_right(starts, start)
                for bib in _names_in(expanded, reach, 1, budget):
                    found.append(Named(bib, path, line))
    return found


def _names_in(text: str, reach: dict[str, Macro], depth: int, budget: list[int]) -> list[str]:
    budget[0] -= 1
    if depth > MAX_DEPTH or budget[0] < 0:
        return []
    names = [
        name.strip()
        for match in BIB_COMMAND.finditer(text)
        for name in match.group("names").split(",")
        if name.strip() and "#" not in name
    ]
    for name, macro in reach.items():
        for _, expanded in _uses(text, name, macro):
            names += _names_in(expanded, reach, depth + 1, budget)
    return names


def local_packages(
    texts: list[str], root: Path, read: Callable[[Path], str]
) -> list[tuple[Path, str]]:
    """The ``.cls``/``.sty`` files of the document's own folder that it loads (and that they
    load in turn), with their text as ``read`` gives it; a system class is never read."""
    found: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    todo = list(texts)
    while todo and len(found) < MAX_PACKAGES:
        text = todo.pop(0)
        for match in _PACKAGE.finditer(text):
            for name in (n.strip() for n in match.group("names").split(",")):
                for suffix in (".cls", ".sty"):
                    path = root / f"{name}{suffix}"
                    if not name or "/" in name or path in seen or not path.is_file():
                        continue
                    seen.add(path)
                    body = read(path)
                    found.append((path, body))
                    todo.append(body)
    return found
