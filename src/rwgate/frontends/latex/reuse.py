"""A later bibliography pass of the same ``rw-latexmk`` build replays the first pass's verdict.

latexmk runs ``bibtex`` more than once in one build: it reruns it whenever the ``.aux`` changed,
and LaTeX adds ``\\bibcite`` lines to it after the first pass. Such a pass is remembered through
the one door (:mod:`rwgate.verdicts.remembered`), its memo named for the build id, the tool and the
files,
its record holding what the pass read: the configuration, the ``.bib`` files, the snapshot, the
``.bcf`` by its bytes, and the ``.aux`` by the lines BibTeX reads from it (:data:`CHECKS`: its
cite, ``\\bibdata`` and ``\\bibstyle`` lines and those of each ``\\@input`` file, so the
``\\bibcite`` lines do not count). Checking a record re-hashes files; it parses nothing, so a
replay does not load Pydantic or the integrity core. Unlike the rebuild memo it remembers
unverified and failing verdicts and offline runs: the same build's rw-latexmk re-checks after
latexmk in every build and reruns the bibliography when the verdict moved. Plain ``latexmk`` with
the hooks (no build id) never takes this path.

Only the standard library and rwgate's light helpers are imported here.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from rwgate.frontends.latex.env import ENV_GATE, ENV_OVERRIDES
from rwgate.settings import recorded
from rwgate.verdicts.remembered import Door, door, memo_base

ENV_BUILD = "RWGATE_LATEX_BUILD"  # set by rw-latexmk: one id per build
STATE_SUFFIX = ".rwgate.json"
PASS_DIR = "latex-pass"
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


def aux_cites(name: str) -> str | None:
    """The lines BibTeX reads from the ``.aux`` tree at ``name`` (None: no such file)."""
    if not Path(name).is_file():
        return None
    lines: list[str] = []
    seen: set[Path] = set()
    todo = [Path(name)]
    while todo:
        aux = todo.pop(0).resolve()
        if aux in seen or not aux.is_file():
            continue
        seen.add(aux)
        text = aux.read_text(encoding="utf-8", errors="replace")
        lines += [aux.name, *_AUX_INPUTS.findall(text)]
        todo.extend(aux.parent / name for name in _AUX_INCLUDE.findall(text))
    return recorded.digest("\n".join(lines).encode("utf-8"))


CHECKS: dict[str, recorded.Check] = {"aux-cites": aux_cites}
"""The derived kinds of the LaTeX records (both memos)."""


def note_source(tool: str, source: Path) -> None:
    """Note in the active records what the bibliography tool read: the ``.bcf``'s bytes, or
    the ``.aux`` tree's lines BibTeX reads (:func:`aux_cites`)."""
    if tool == "biber":
        recorded.is_file(source)
    else:
        recorded.note_derived("aux-cites", source, aux_cites(str(source)))


def pass_door(tool: str, source: Path, bbl: Path) -> Door | None:
    """The door to this build's pass memo; None outside a gated ``rw-latexmk`` build, or when
    rw-latexmk's flags (``--no-memo``, ``--no-cache``) turn memos off."""
    build = os.environ.get(ENV_BUILD)
    if not build or os.environ.get(ENV_GATE) != "0":
        return None
    try:
        flags = json.loads(os.environ.get(ENV_OVERRIDES) or "{}")
    except ValueError:
        return None
    if not isinstance(flags, dict):
        return None
    base = memo_base(os.environ, bool(flags.get("no_memo") or flags.get("no_cache")))
    if base is not None and flags.get("cache_dir"):
        base = Path(str(flags["cache_dir"]))
    files = [str(source.resolve()), str(bbl.resolve())]
    return door(base, PASS_DIR, {"build": build, "tool": tool, "files": files}, CHECKS)
