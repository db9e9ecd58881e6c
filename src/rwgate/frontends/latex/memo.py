"""What rw-latexmk and its bibliography hooks share and remember: the environment they talk
through, the record the hook leaves next to each ``.bbl``, and the two memos.

rw-latexmk runs latexmk, latexmk runs ``rwgate bibtex``/``rwgate biber`` (the hooks), and the two
talk through these variables only. Both memos go through the one door
(:mod:`rwgate.verdicts.remembered`) and replay only while every input their record holds (the
``.aux`` by the lines BibTeX reads from it, :func:`aux_cites`) still holds:

* the pass memo: latexmk reruns the bibliography tool whenever LaTeX adds ``\\bibcite`` lines to
  the ``.aux``, so a later pass of the same gated build replays the first pass's notes (plain
  ``latexmk`` with the hooks, no build id, never does);
* the rebuild memo: a rebuild whose bibliography inputs did not change replays the last gate that
  passed (:func:`rwgate.verdicts.remembered.refusal`'s rule: no failing gate, no report), named
  for the ``.tex``, the working directory and the options; ``--no-memo``, ``--no-cache`` and
  ``--cache-dir`` turn it off.

A replay parses nothing, so it loads neither Pydantic nor the integrity core: only the standard
library and rwgate's light helpers are imported here.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
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


REQUEST_LAYOUT = 2
MEMO_DIR = "latex-memo"
# Flags that turn the memo off, or put the look-up cache elsewhere than the memo.
_NO_MEMO_FLAGS = ("--no-memo", "--no-cache", "--cache-dir")


@dataclass
class Entry:
    """What a passing gate printed, plain and coloured (the record's payload)."""

    text: str
    coloured: str
    rejected: list[str] = field(default_factory=list)
    """``NAME.pdf.rejected`` and the like: a passing gate leaves none from an earlier failure."""

    def replay(self, colour: bool) -> int:
        """What the gate did: its report on stderr, stale rejected outputs removed; exit 0."""
        for name in self.rejected:
            with contextlib.suppress(OSError):
                os.unlink(name)
        sys.stderr.write(self.coloured if colour else self.text)
        return 0


def memo_door(
    tex: Path, own: Sequence[str], latexmk_args: Sequence[str], env: Mapping[str, str]
) -> Door | None:
    """The door to this build's remembered gate; None when the memo is not to be used."""
    refused = any(a.split("=", 1)[0] in _NO_MEMO_FLAGS for a in own)
    request = {
        "layout": REQUEST_LAYOUT,
        "tex": str(tex.resolve()),
        "cwd": str(Path.cwd()),
        "own": list(own),
        "latexmk": list(latexmk_args),
    }
    return door(memo_base(env, refused), MEMO_DIR, request, CHECKS)


def _aux_names(folder: str) -> str | None:
    names = sorted(p.name for p in Path(folder).glob("*.aux"))
    return "\n".join(names) if names else None


def replayable(entry: Door, record: Mapping[str, Any], dirs: str) -> Entry | None:
    """The remembered gate when every input of its record still holds after this latexmk run
    (``dirs``: the directories it reported), else None."""
    if not entry.holds(record, {"aux-names": _aux_names, "dirs": lambda _name: dirs}):
        return None
    try:
        return Entry(**record["payload"])
    except (KeyError, TypeError):
        return None


def note_build(aux: Path, dirs: str, files: Iterable[Path]) -> None:
    """Note in the gate's record what it judged that the readers do not note themselves: the
    ``.aux`` tree's cite lines, the ``.bcf``, the ``.aux`` names, latexmk's directories, and the
    bytes of the ``.bbl`` files and secondary ``.aux`` files it read."""
    note_source("bibtex", aux)
    note_source("biber", aux.with_suffix(".bcf"))
    recorded.note_derived("aux-names", aux.parent, _aux_names(str(aux.parent)))
    recorded.note_derived("dirs", aux, dirs)
    for name in dict.fromkeys(files):
        try:
            recorded.read_bytes(name)
        except OSError:
            recorded.note_unrecordable(f"{name}: cannot be read again")


def forget(entry: Door | None, dirs: str | None = None) -> None:
    """Drop the entry (a gate that failed or could not be remembered). With ``dirs`` (this
    build's), only if its record still holds: one whose inputs differ (a stricter configuration
    tried) stays, to replay when they are back."""
    if entry is None:
        return
    if dirs is not None:
        record = recorded.load(entry.path)
        if record is None or replayable(entry, record, dirs) is None:
            return
    entry.forget()
