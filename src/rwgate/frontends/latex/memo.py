"""The rebuild memo: an ``rw-latexmk`` rebuild whose bibliography inputs did not change replays
the last gate without starting the integrity core.

After every edit of the prose an author rebuilds; latexmk then has little or nothing to do, yet
the gate after it would load the models, the cache and the readers to reach the verdict it gave
last time. So after a full gate that passed, ``rw-latexmk`` remembers what it printed with the
record of everything the gate read (:mod:`rwgate.settings.recorded`), and of what the readers do
not note
themselves (:func:`note_build`). The memo's name covers what was asked: the ``.tex``, the
working directory, rw-latexmk's and latexmk's options. The next build replays it only when every
recorded input still holds; no list of inputs is kept here.

Whether a gate may be remembered is :func:`rwgate.verdicts.remembered.refusal`'s one rule
(rw-latexmk
remembers no failing gate and no report); the memo is not used with ``--no-memo``,
``--no-cache`` or ``--cache-dir``. A record expires when the earliest look-up or allow-list entry
behind it would, and within the hour in any case.

Only the standard library and rwgate's light helpers are imported here.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rwgate.frontends.latex.reuse import CHECKS, note_source
from rwgate.settings import recorded
from rwgate.verdicts.remembered import Door, door, memo_base

REQUEST_LAYOUT = 2
MEMO_DIR = "latex-memo"
# Flags that turn the memo off, or put the look-up cache elsewhere than the memo.
_NO_MEMO_FLAGS = ("--no-memo", "--no-cache", "--cache-dir")


@dataclass
class Entry:
    """What a passing gate printed, plain and coloured for a terminal (the record's payload)."""

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
    (``dirs``: the directories it reported), else None. The gate's own derived kinds, beside
    the ``.aux`` lines of :data:`reuse.CHECKS`: the ``.aux`` names and latexmk's directories."""
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
    build's), only an entry whose record still holds: this gate then says otherwise. One whose
    inputs differ (a stricter configuration tried) stays, to replay when they are back."""
    if entry is None:
        return
    if dirs is not None:
        record = recorded.load(entry.path)
        if record is None or replayable(entry, record, dirs) is None:
            return
    entry.forget()
