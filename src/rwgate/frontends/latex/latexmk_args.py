"""rw-latexmk's command line: rwgate's own options, latexmk's options and the documents, told
apart without a list of latexmk's options (only those that take a value, or stop the gate)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

PROG = "rw-latexmk"

_VALUED = frozenset(["-e", "-r", "-MF", "-bm", "-bi", "-bs", "-dF", "-pF"])
_NO_GATE = frozenset(
    ["-c", "-C", "-CA", "-v", "-version", "-commands", "-showextraoptions", "-rules", "-pvc"]
)
_HELP = frozenset(("-h", "-help"))
USAGE = f"""usage: {PROG} [rwgate options] [latexmk options] FILE.tex ...

latexmk with the rwgate integrity gate: flagged works are annotated in the typeset bibliography;
when the policy fails, each offending citation is listed, NAME.pdf is renamed NAME.pdf.rejected
and the exit code is 1. Every other option is passed to latexmk (see latexmk -help).
With -pvc (which never returns) each bibtex/biber run gates itself, as with latexmkrc.example.

rwgate options:
"""


def usage(options: list[tuple[str, str | None, str | None]]) -> str:
    """The help text, listing exactly the rwgate options rw-latexmk accepts, from its own
    parser: each as ``(name, value name or None, help or None)``."""
    lines = [USAGE]
    for name, value, said in options:
        shown = f"  {name} {value}" if value else f"  {name}"
        lines.append(f"{shown:<32}{said or ''}".rstrip() + "\n")
    return "".join(lines)


@dataclass
class Invocation:
    """One command line, sorted: rwgate's options, latexmk's, the files; whether to gate."""

    own: list[str] = field(default_factory=list)
    latexmk: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    gate: bool = True
    help: bool = False


def no_bibtex(latexmk_args: list[str]) -> bool:
    """``-bibtex-`` (or ``-nobibtex``): the user told latexmk never to run the bibliography tool,
    so a ``.bbl`` deleted here would never come back."""
    return any(_single_dash(a) in ("-bibtex-", "-nobibtex") for a in latexmk_args)


def _single_dash(arg: str) -> str:
    return arg[1:] if arg.startswith("--") else arg


def split_args(argv: list[str], own_names: dict[str, bool]) -> Invocation:
    """rwgate's options (anywhere), latexmk's options, and the documents to build."""
    inv = Invocation()
    i = 0
    while i < len(argv):
        arg = argv[i]
        name = arg.split("=", 1)[0]
        if name in own_names:
            width = 2 if own_names[name] and "=" not in arg else 1
            inv.own.extend(argv[i : i + width])
            i += width
            continue
        short = _single_dash(arg)
        inv.help = inv.help or short in _HELP
        inv.gate = inv.gate and short not in _NO_GATE
        if short in _VALUED:
            inv.latexmk.extend(argv[i : i + 2])
            i += 2
            continue
        if arg.startswith("-"):
            inv.latexmk.append(arg)
        else:
            inv.files.append(arg)
        i += 1
    return inv


def tex_path(name: str) -> Path:
    """The document a file argument names: ``paper`` is ``paper.tex``, as latexmk reads it."""
    path = Path(name)
    if not path.is_file() and path.with_name(path.name + ".tex").is_file():
        path = path.with_name(path.name + ".tex")
    return path
