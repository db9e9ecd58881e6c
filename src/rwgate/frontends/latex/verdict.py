"""The verdict of one LaTeX build, the fingerprint that says whether its ``.bbl`` is current, and
the hooks' integrity step: judge what the bibliography tool read, annotate what it wrote.

The hooks and ``rw-latexmk`` both read the cited keys from the files LaTeX wrote (the ``.aux``
for BibTeX, the ``.bcf`` for biber) through :mod:`rwgate.readers.builds.latexdoc` and judge them
here, so they judge the same references and compute the same fingerprint. The fingerprint covers
exactly what the hooks write into the ``.bbl`` (each annotated key and its LaTeX text): when it
differs from the one stored next to the ``.bbl``, the typeset bibliography is stale even if
latexmk thinks every file is up to date.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rwgate.frontends.kit import annotations_for, judge_document
from rwgate.frontends.latex.asprinted import unjudged
from rwgate.frontends.latex.bbl import annotate_bbl
from rwgate.frontends.latex.memo import ENV_GATE, HookError, note_source, read_state, state_path
from rwgate.fsutil import write_atomic
from rwgate.readers.builds.latexaux import LatexError
from rwgate.readers.builds.latexdoc import aux_document, bcf_document
from rwgate.render.annotate import TemplateProblem
from rwgate.render.latex import annotation_latex
from rwgate.render.report import render_text
from rwgate.render.safe import term_safe
from rwgate.settings.config import Settings
from rwgate.verdicts.result import CheckResult

if TYPE_CHECKING:
    from rwgate.contract.models import Citation

STATE_SCHEMA = "rwgate.latex/1"


def latex_notes(citations: Sequence[Citation], template: str | None = None) -> dict[str, str]:
    """The LaTeX note each annotated work of ``citations`` carries, by key."""
    return {
        key: annotation_latex(note) for key, note in annotations_for(citations, template).items()
    }


def fingerprint(notes: Mapping[str, str]) -> str:
    data = json.dumps(sorted(notes.items()), ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def write_state(
    bbl: Path,
    citations: Sequence[Citation],
    notes: Mapping[str, str],
    report: str | None,
) -> None:
    """Record what the ``.bbl`` now says (and the verdicts behind it) next to it."""
    state = {
        "schema": STATE_SCHEMA,
        "bbl": bbl.name,
        "fingerprint": fingerprint(notes),
        "annotated": sorted(notes),
        "notes": dict(notes),
        "report": report,  # digest of the report printed for this pass (one report per build)
        "citations": [
            c.model_dump(mode="json", include={"key", "doi", "status", "action", "allowed"})
            for c in citations
        ],
    }
    # Compact: only then does json use its C encoder (1,300 citations: 35 ms -> 5 ms a pass).
    write_atomic(state_path(bbl), json.dumps(state, separators=(",", ":")) + "\n")


def write_report(result: CheckResult, path: Path) -> None:
    """The JSON report (``report`` setting or ``RWGATE_REPORT``), written atomically."""
    try:
        write_atomic(path, result.report().to_json() + "\n")
    except OSError as exc:
        raise HookError(f"{path}: cannot write report: {exc.strerror or exc}") from None


def read_fingerprint(bbl: Path) -> str | None:
    """The fingerprint the hook stored for ``bbl``; None when absent or unreadable."""
    state = read_state(bbl)
    value = state.get("fingerprint") if state is not None else None
    return value if isinstance(value, str) else None


def annotate_build(
    tool: str, source: Path, bbl: Path, settings: Settings, tex: Path | None
) -> tuple[bool, dict[str, str]]:
    """Judge the keys of ``source`` (.aux or .bcf), annotate ``bbl``: whether the gate fails,
    and the notes (noted in the pass's record with what the tool read)."""
    # Bibliography names resolve from the document's folder, then from where the tool runs.
    first = [tex.resolve().parent] if tex else []
    search = list(dict.fromkeys([*first, Path.cwd(), source.resolve().parent]))
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
        stops, warns = unjudged(bbl, result, refs, doc.bibtex_keys)
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
