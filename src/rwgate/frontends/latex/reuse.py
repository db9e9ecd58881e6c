"""What rw-latexmk and its bibliography hooks share: the environment they talk through, the
record the hook leaves next to each ``.bbl``, and the pass memo.

rw-latexmk runs latexmk, latexmk runs ``rwgate bibtex``/``rwgate biber`` (the hooks), and the two
talk through these variables only. latexmk reruns the bibliography tool whenever LaTeX adds
``\\bibcite`` lines to the ``.aux``, so a later pass of the same gated build replays the first
pass's verdict through the one door (:mod:`rwgate.verdicts.remembered`); its record holds what the
pass read, the ``.aux`` by the lines BibTeX reads from it (:func:`aux_cites`). A replay parses
nothing, so it loads neither Pydantic nor the integrity core: only the standard library and
rwgate's light helpers are imported here. Plain ``latexmk`` with the hooks (no build id) never
replays.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from rwgate.errors import UsageError
from rwgate.settings import recorded
from rwgate.verdicts.remembered import Door, door, memo_base

ENV_TEX = "RWGATE_LATEX_TEX"  # the main .tex (where configuration is searched from)
ENV_OVERRIDES = "RWGATE_LATEX_OVERRIDES"  # JSON: rw-latexmk's command-line settings
ENV_GATE = "RWGATE_LATEX_GATE"  # "0": rw-latexmk gates after latexmk; the hook only annotates
TOOL_ENV = {"bibtex": "RWGATE_BIBTEX", "biber": "RWGATE_BIBER"}  # e.g. bibtex8, a biber path
EXIT_GATE, EXIT_USAGE = 1, 2
ENV_BUILD = "RWGATE_LATEX_BUILD"  # set by rw-latexmk: one id per build
STATE_SUFFIX = ".rwgate.json"
PASS_DIR = "latex-pass"


class HookError(UsageError):
    """The hook cannot do its part; the message is one line."""


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
