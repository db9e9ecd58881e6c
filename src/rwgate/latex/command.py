"""``rwgate bibtex``, ``biber``, ``latex-notes``, ``latexmk``: the LaTeX front end's sub-commands.

Their arguments belong to bibtex, biber and latexmk, so argparse must not read them: each parser
takes everything after the sub-command name verbatim (no prefix characters). Only a lone
``--help``/``-h`` or ``--version`` is rwgate's own (bibtex and biber spell theirs ``-help`` and
``-version``, and latexmk never passes either alone).
"""

from __future__ import annotations

import argparse
from typing import Any

_HOOK_HELP = """usage: rwgate {tool} [{tool} arguments]

Runs {tool}, then checks the works the bibliography holds and annotates each flagged entry of the
.bbl {tool} wrote; when the policy fails, the citations are listed and the exit code is 1.
latexmk runs it in place of {tool} (rw-latexmk, or the $bibtex/$biber lines of
latexmkrc.example); every argument goes to {tool}.
"""


def _own_answer(tool: str, args: list[str]) -> int | None:
    """``rwgate bibtex --help`` / ``--version``: rwgate's answer, exit 0 (None: a real run)."""
    if args in (["--help"], ["-h"]):
        print(_HOOK_HELP.format(tool=tool), end="")
        return 0
    if args == ["--version"]:
        from rwgate import __version__

        print(f"rwgate {tool} (rwgate {__version__})")
        return 0
    return None


def _bibtex(args: argparse.Namespace) -> int:
    from .hooks import run_hook

    answered = _own_answer("bibtex", list(args.args))
    return answered if answered is not None else run_hook("bibtex", list(args.args))


def _biber(args: argparse.Namespace) -> int:
    from .hooks import run_hook

    answered = _own_answer("biber", list(args.args))
    return answered if answered is not None else run_hook("biber", list(args.args))


_NOTES_HELP = """usage: rwgate latex-notes [rwgate options] TEX AUX_DIR JOB

The latexmkrc hook run before each LaTeX pass (latexmkrc.example's before_xlatex): for a
bibliography no bibliography tool writes (an arXiv bundle's .bbl, a document's own
thebibliography) it judges the entries, writes annotated copies into AUX_DIR/rwgate-notes/ and
prints the TeX code that makes LaTeX read them; the user's files are left as they are. Exit 1 when
the notes cannot reach the PDF or the policy fails. A document whose .bbl BibTeX or biber writes
costs a read of its .aux and prints nothing.
"""


def _notes(args: argparse.Namespace) -> int:
    from .notescmd import run_notes

    argv = list(args.args)
    if argv in (["--help"], ["-h"]):
        print(_NOTES_HELP, end="")
        return 0
    if argv == ["--version"]:
        return _own_answer("latex-notes", argv) or 0
    return run_notes(argv)


def _latexmk(args: argparse.Namespace) -> int:
    from .latexmk import main

    if list(args.args) == ["--version"]:  # --help is latexmk.main's own (rw-latexmk's usage)
        return _own_answer("latexmk", ["--version"]) or 0
    return main(list(args.args))


def add_latex_commands(sub: Any) -> None:
    """Register the sub-commands on ``rwgate``'s sub-parsers."""
    commands = (
        ("bibtex", _bibtex, "run bibtex, then annotate flagged entries of the .bbl (latexmk hook)"),
        ("biber", _biber, "run biber, then annotate flagged entries of the .bbl (latexmk hook)"),
        ("latexmk", _latexmk, "latexmk with the integrity gate (same as rw-latexmk)"),
        (
            "latex-notes",
            _notes,
            "annotated copies of a bibliography no tool writes (latexmk before_xlatex hook)",
        ),
    )
    for name, func, text in commands:
        parser = sub.add_parser(
            name, help=text, description=text, add_help=False, prefix_chars="\0"
        )
        parser.add_argument("args", nargs=argparse.REMAINDER)
        parser.set_defaults(func=func)
