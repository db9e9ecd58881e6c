"""One bibliography run's integrity step: judge what the tool read, annotate what it wrote.

Kept apart from :mod:`rwgate.frontends.latex.hooks` (argument handling) so the hooks can run the
real tool
before the integrity core is even imported.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from rwgate.frontends.kit import judge_document
from rwgate.frontends.latex.asprinted import unjudged
from rwgate.frontends.latex.bbl import annotate_bbl
from rwgate.frontends.latex.env import ENV_GATE, HookError
from rwgate.frontends.latex.reuse import note_source, read_state
from rwgate.frontends.latex.verdict import latex_notes, write_report, write_state
from rwgate.readers.builds.latexaux import LatexError
from rwgate.readers.builds.latexdoc import aux_document, bcf_document
from rwgate.render.annotate import TemplateProblem
from rwgate.render.report import render_text
from rwgate.render.safe import term_safe
from rwgate.settings.config import Settings


def search_dirs(tex: Path | None, source: Path) -> list[Path]:
    """Where bibliography names are resolved: the document's folder, then where the tool runs."""
    dirs = [tex.resolve().parent] if tex else []
    for folder in (Path.cwd(), source.resolve().parent):
        if folder not in dirs:
            dirs.append(folder)
    return dirs


def annotate_build(
    tool: str, source: Path, bbl: Path, settings: Settings, tex: Path | None
) -> tuple[bool, dict[str, str]]:
    """Judge the keys of ``source`` (.aux or .bcf), annotate ``bbl``: whether the gate fails,
    and the notes (noted in the pass's record with what the tool read)."""
    search = search_dirs(tex, source)
    note_source(tool, source)
    try:
        doc = aux_document(source, search) if tool == "bibtex" else bcf_document(source, search)
    except LatexError as exc:
        raise HookError(str(exc)) from None
    result, refs = judge_document(doc, settings)
    try:
        notes = latex_notes(result.citations, settings.template)
    except TemplateProblem as exc:
        raise HookError(str(exc)) from None
    if not bbl.is_file():
        raise HookError(f"{bbl}: {tool} wrote no .bbl file")
    stops: list[str] = []
    if os.environ.get(ENV_GATE) != "0":  # under rw-latexmk, its gate says it after latexmk
        strict = result.policy.action("unverified") == "fail"
        stops, warns = unjudged(bbl, refs, result.citations, doc.bibtex_keys, None, strict)
        result.warnings += warns
    text = render_text(result, False, False, settings.template)
    # The verdict, not its wording: a later pass answers from the cache, and says so.
    verdict_lines = [(c.key, c.status, c.action, c.reason) for c in result.citations]
    seen = [verdict_lines, result.warnings, [str(p) for p in result.problems], result.exit_code]
    digest = hashlib.sha256(repr(seen).encode("utf-8")).hexdigest()
    before = read_state(bbl) or {}
    try:
        done = annotate_bbl(bbl, notes)
        write_state(bbl, result.citations, notes, digest)
    except OSError as exc:
        raise HookError(f"{exc.filename or bbl}: cannot write: {exc.strerror or exc}") from None
    if settings.report is not None:
        write_report(result, Path(settings.report))
    if os.environ.get(ENV_GATE) == "0":
        for key in done:
            print(f"rwgate {tool}: annotated {term_safe(key)} in {bbl}", file=sys.stderr)
    elif before.get("report") == digest:
        # latexmk runs the bibliography tool once per pass: the same report again is noise.
        summary = text.rstrip("\n").splitlines()[-2:]
        print(
            f"rwgate {tool}: the same verdict as the last pass: {' '.join(summary)}",
            file=sys.stderr,
        )
    else:
        sys.stderr.write(text)
    for line in stops:  # rule 2: rw-latexmk (ENV_GATE=0) says it after latexmk
        print(f"rwgate {tool}: error: {line}", file=sys.stderr)
    return result.exit_code != 0 or bool(stops), notes
