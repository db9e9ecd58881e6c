"""A later bibliography pass of the same ``rw-latexmk`` build reuses the first pass's verdict.

latexmk runs ``bibtex`` more than once in one build (the ``.aux`` it reads changes as LaTeX adds
``\\bibcite`` lines). When the citations and bibliography names the pass would judge are exactly
those of the pass before it in the same build, the hook re-applies the stored annotations
without starting the integrity core (which, with its imports, is most of a hook's cost). This is
safe because ``rw-latexmk`` re-checks after latexmk in every build and reruns the bibliography
when the verdict moved. Plain ``latexmk`` with the hooks (no build id) never takes this path.

Only the standard library and :mod:`rwgate.latex.bbl` are imported here.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

ENV_BUILD = "RWGATE_LATEX_BUILD"  # set by rw-latexmk: one id per build
STATE_SUFFIX = ".rwgate.json"
# The .aux lines that decide what BibTeX is asked for; \bibcite and the rest change between passes.
_AUX_INPUTS = re.compile(r"^\\(?:citation|bibdata|bibstyle)\{.*$", re.MULTILINE)
_AUX_INCLUDE = re.compile(r"^\\@input\{([^}]*)\}", re.MULTILINE)


def state_path(bbl: Path) -> Path:
    """``NAME.rwgate.json`` next to ``NAME.bbl``."""
    return bbl.with_name(bbl.stem + STATE_SUFFIX)


def read_state(bbl: Path) -> dict[str, Any] | None:
    """What the hook recorded next to ``bbl``; None when absent or unreadable."""
    try:
        state = json.loads(state_path(bbl).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def inputs_key(tool: str, source: Path) -> str:
    """A digest of what a pass judges: the ``.bcf``, or the cite lines of the ``.aux`` tree."""
    digest = hashlib.sha256(tool.encode())
    if tool == "biber":
        digest.update(source.read_bytes())
        return digest.hexdigest()
    seen: set[Path] = set()
    todo = [source]
    while todo:
        aux = todo.pop(0).resolve()
        if aux in seen or not aux.is_file():
            continue
        seen.add(aux)
        text = aux.read_text(encoding="utf-8", errors="replace")
        digest.update(aux.name.encode())
        digest.update("\n".join(_AUX_INPUTS.findall(text)).encode())
        todo.extend(aux.parent / name for name in _AUX_INCLUDE.findall(text))
    return digest.hexdigest()


def reuse(tool: str, source: Path, bbl: Path) -> list[str] | None:
    """Re-annotate ``bbl`` from this build's stored verdict; None when that does not apply."""
    build = os.environ.get(ENV_BUILD)
    if not build or not bbl.is_file():
        return None
    state = read_state(bbl)
    if state is None or state.get("build") != build:
        return None
    notes = state.get("notes")
    if not isinstance(notes, dict):
        return None
    try:
        if state.get("inputs") != inputs_key(tool, source):
            return None
        from .bbl import annotate_bbl  # here: rw-latexmk imports this module for inputs_key

        return annotate_bbl(bbl, {str(k): str(v) for k, v in notes.items()})
    except OSError:
        return None
