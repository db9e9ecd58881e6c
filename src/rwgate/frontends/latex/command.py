"""``rwgate bibtex``, ``biber``, ``latex-notes``, ``latexmk``: the LaTeX front end's sub-commands.

Their arguments belong to bibtex, biber and latexmk, so argparse must not read them: each parser
takes everything after the sub-command name verbatim (no prefix characters). Only a lone
``--help``/``-h`` or ``--version`` is rwgate's own (bibtex and biber spell theirs ``-help`` and
``-version``, and latexmk never passes either alone).
"""

from __future__ import annotations

import argparse
from functools import partial
from typing import Any

_HOOK_HELP = """usage: rwgate {tool} [{tool} arguments]

Runs {tool}, then checks the works the bibliography holds and annotates each flagged entry of the
.bbl {tool} wrote; when the policy fails, the citations are listed and the exit code is 1.
latexmk runs it in place of {tool} (rw-latexmk, or the $bibtex/$biber lines of
latexmkrc.example); every argument goes to {tool}.
"""


_NOTES_HELP = """usage: rwgate latex-notes [rwgate options] TEX AUX_DIR JOB

The latexmkrc hook run before each LaTeX pass (latexmkrc.example's before_xlatex): for a
bibliography no bibliography tool writes (an arXiv bundle's .bbl, a document's own
thebibliography) it judges the entries, writes annotated copies into AUX_DIR/rwgate-notes/ and
prints the TeX code that makes LaTeX read them; the user's files are left as they are. Exit 1 when
the notes cannot reach the PDF or the policy fails. A document whose .bbl BibTeX or biber writes
costs a read of its .aux and prints nothing.
"""


def _run(name: str, args: argparse.Namespace) -> int:
    """rwgate's own answer to a lone ``--help``/``-h`` or ``--version`` (exit 0; latexmk's
    ``--help`` is :func:`rwgate.frontends.latex.latexmk.main`'s: rw-latexmk's usage), else the
    run."""
    argv = list(args.args)
    if argv in (["--help"], ["-h"]) and name != "latexmk":
        print(_NOTES_HELP if name == "latex-notes" else _HOOK_HELP.format(tool=name), end="")
        return 0
    if argv == ["--version"]:
        from rwgate import __version__

        print(f"rwgate {name} (rwgate {__version__})")
        return 0
    if name == "latexmk":
        from rwgate.frontends.latex.latexmk import main

        return main(argv)
    if name == "latex-notes":
        from rwgate.frontends.latex.notescmd import run_notes

        return run_notes(argv)
    from rwgate.frontends.latex.hooks import run_hook

    return run_hook(name, argv)


def add_latex_commands(sub: Any) -> None:
    """Register the sub-commands on ``rwgate``'s sub-parsers."""
    commands = {
        "bibtex": "run bibtex, then annotate flagged entries of the .bbl (latexmk hook)",
        "biber": "run biber, then annotate flagged entries of the .bbl (latexmk hook)",
        "latexmk": "latexmk with the integrity gate (same as rw-latexmk)",
        "latex-notes": (
            "annotated copies of a bibliography no tool writes (latexmk before_xlatex hook)"
        ),
    }
    for name, text in commands.items():
        parser = sub.add_parser(
            name, help=text, description=text, add_help=False, prefix_chars="\0"
        )
        parser.add_argument("args", nargs=argparse.REMAINDER)
        parser.set_defaults(func=partial(_run, name))
