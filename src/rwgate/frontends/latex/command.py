"""``rwgate bibtex``, ``biber``, ``latex-notes``, ``latexmk``: the LaTeX front end's sub-commands,
and ``latex-notes`` itself (its help, :data:`_NOTES_HELP`, says what it does).

Their arguments belong to bibtex, biber and latexmk, so argparse must not read them: each parser
takes everything after the sub-command name verbatim (no prefix characters). Only a lone
``--help``/``-h`` or ``--version`` is rwgate's own (bibtex and biber spell theirs ``-help`` and
``-version``, and latexmk never passes either alone).
"""

from __future__ import annotations

import argparse
import re
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rwgate.settings.config import Settings

PROG = "rwgate latex-notes"

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


def run_notes(argv: list[str]) -> int:
    """Print the TeX code that makes LaTeX read annotated copies (nothing when none is needed)."""
    from rwgate.errors import ConfigError, InputError
    from rwgate.frontends.latex.hooks import hook_settings, split_hook_args
    from rwgate.frontends.latex.memo import EXIT_USAGE, HookError

    try:
        opts, rest = split_hook_args(argv)
        if len(rest) != 3:
            raise HookError("give the .tex file, the aux directory and the job name")
        if _tool_writes_it(Path(rest[0]), Path(rest[1] or "."), rest[2]):
            return 0
        opts.tex = opts.tex or Path(rest[0])
        settings, _ = hook_settings(opts)
        return _notes(Path(rest[0]), Path(rest[1] or "."), rest[2], settings)
    except (HookError, ConfigError, InputError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


_BIBDATA = re.compile(r"\\bibdata\{([^{}]*)\}")
_DATASOURCE = re.compile(r"<bcf:datasource[^>]*>([^<]+)</bcf:datasource>")


def _tool_writes_it(tex: Path, aux_dir: Path, job: str) -> bool:
    """The quick answer for most documents, before anything heavy is imported (this runs before
    every LaTeX pass): BibTeX or biber writes the bibliography, since every source it reads is
    there, or the document prints none. Anything else is judged in full."""
    try:
        aux = (aux_dir / f"{job}.aux").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True  # no LaTeX run yet: nothing is printed from a bibliography
    folders = [tex.parent, Path.cwd(), aux_dir]

    def found(name: str, suffix: str) -> bool:
        name = name.strip()
        names = [name] if name.endswith(suffix) else [name + suffix, name]
        return any((folder / n).is_file() for folder in folders for n in names)

    if "\\abx@aux@" in aux:
        try:
            bcf = (aux_dir / f"{job}.bcf").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
        sources = _DATASOURCE.findall(bcf)
        return bool(sources) and all(found(s, "") for s in sources)
    data = _BIBDATA.findall(aux)
    if data:
        return all(found(n, ".bib") for names in data for n in names.split(",") if n.strip())
    return "\\bibcite" not in aux  # no \bibdata and nothing cited from a thebibliography


def _notes(tex: Path, aux_dir: Path, job: str, settings: Settings) -> int:
    from rwgate.frontends.latex.gate import (
        Build,
        cited_document,
        regenerable,
        users_bibliography,
        users_files,
        verdict,
    )
    from rwgate.frontends.latex.memo import EXIT_GATE
    from rwgate.frontends.latex.notedcopy import NoCopy, cannot_note, make_copies
    from rwgate.frontends.latex.verdict import latex_notes
    from rwgate.render.report import render_text

    build = Build(tex=tex, out_dir=aux_dir, aux_dir=aux_dir, job=job)
    cwd = Path.cwd()
    doc = cited_document(build, cwd)
    if regenerable(doc) and not users_bibliography(doc):
        return 0  # the bibtex/biber hook annotates what the tool writes
    files = users_files(build, doc)
    if not files:
        return 0  # nothing LaTeX reads yet (latexmk's first, empty .aux)
    current = verdict(build, settings, cwd)
    template = settings.template
    if current.result.citations:
        sys.stderr.write(render_text(current.result, False, False, template))
    try:
        notes = latex_notes(current.result.citations, template)
        copies = make_copies(tex, job, aux_dir, build.bbl, files, notes)
    except (NoCopy, OSError) as exc:
        print(f"{PROG}: error: {cannot_note(tex, exc)}", file=sys.stderr)
        return EXIT_GATE
    sys.stdout.write(copies.pretex)
    return EXIT_GATE if current.result.exit_code != 0 else 0
