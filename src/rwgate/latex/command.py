"""``rwgate bibtex``, ``rwgate biber`` and ``rwgate latexmk``: the LaTeX front end's sub-commands.

Their arguments belong to bibtex, biber and latexmk, so argparse must not read them: each parser
takes everything after the sub-command name verbatim (no prefix characters, no ``--help``).
"""

from __future__ import annotations

import argparse
from typing import Any


def _bibtex(args: argparse.Namespace) -> int:
    from .hooks import run_hook

    return run_hook("bibtex", list(args.args))


def _biber(args: argparse.Namespace) -> int:
    from .hooks import run_hook

    return run_hook("biber", list(args.args))


def _latexmk(args: argparse.Namespace) -> int:
    from .latexmk import main

    return main(list(args.args))


def add_latex_commands(sub: Any) -> None:
    """Register the sub-commands on ``rwgate``'s sub-parsers."""
    commands = (
        ("bibtex", _bibtex, "run bibtex, then annotate flagged entries of the .bbl (latexmk hook)"),
        ("biber", _biber, "run biber, then annotate flagged entries of the .bbl (latexmk hook)"),
        ("latexmk", _latexmk, "latexmk with the integrity gate (same as rw-latexmk)"),
    )
    for name, func, text in commands:
        parser = sub.add_parser(
            name, help=text, description=text, add_help=False, prefix_chars="\0"
        )
        parser.add_argument("args", nargs=argparse.REMAINDER)
        parser.set_defaults(func=func)
