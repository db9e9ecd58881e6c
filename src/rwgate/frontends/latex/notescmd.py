"""``rwgate latex-notes [rwgate options] TEX AUX_DIR JOB``: the latexmkrc hook run before each
LaTeX pass, for a bibliography no bibliography tool writes.

latexmk runs no BibTeX or biber for an arXiv-style bundle (its ``.bib`` is not there) or for a
document with its own ``thebibliography``, so the ``rwgate bibtex``/``rwgate biber`` hooks never
see them. ``latexmkrc.example`` runs this command from latexmk's ``before_xlatex`` hook instead:
when the document's bibliography is the user's own file, it judges it, writes the annotated copies
(:mod:`.notedcopy`) and prints the TeX code that makes LaTeX read them, which the hook puts before
the document. Exit 1 (latexmk then stops) when the notes cannot reach the PDF or the policy fails;
a document whose bibliography a tool writes costs a read of its ``.aux`` and prints nothing.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rwgate.frontends.latex.env import EXIT_GATE, EXIT_USAGE, HookError
from rwgate.frontends.latex.hooks import hook_settings, split_hook_args

if TYPE_CHECKING:
    from rwgate.settings.config import Settings

PROG = "rwgate latex-notes"


def run_notes(argv: list[str]) -> int:
    """Print the TeX code that makes LaTeX read annotated copies (nothing when none is needed)."""
    from rwgate.errors import ConfigError, InputError

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
