"""The verdict of one LaTeX build, and the fingerprint that says whether its ``.bbl`` is current.

The bibliography hooks and ``rw-latexmk`` both read the cited keys from the files LaTeX wrote
(the ``.aux`` for BibTeX, the ``.bcf`` for biber) through :mod:`rwgate.readers.builds.latexdoc` and
judge them here, so they judge the same references and compute the same fingerprint. The
fingerprint covers exactly what the hooks write into the ``.bbl`` (each annotated key and its
LaTeX text): when it differs from the one stored next to the ``.bbl``, the typeset bibliography
is stale even if latexmk thinks every file is up to date.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rwgate.frontends.kit import annotations_for
from rwgate.frontends.latex.env import HookError
from rwgate.frontends.latex.reuse import read_state, state_path
from rwgate.fsutil import write_atomic
from rwgate.render.latex import annotation_latex
from rwgate.verdicts.result import CheckResult

if TYPE_CHECKING:
    from rwgate.contract.models import Citation

STATE_SCHEMA = "rwgate.frontends.latex/1"


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
    report: str | None = None,
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
