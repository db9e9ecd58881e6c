"""Shadow copies of the user's .bib files whose flagged entries carry the annotation.

Without citeproc (``--natbib``/``--biblatex``) BibTeX or biber formats the bibliography after the
filter has finished, so the annotation travels in the bibliography itself: a copy under
``.rwgate/`` (the user's file is never touched), identical but for each flagged entry's ``note``.
``note``, not ``addendum``: every standard BibTeX style and every biblatex style prints ``note``,
only biblatex knows ``addendum``. A style that prints no ``note`` (PLOS's plos2015.bst) loses it,
so the filter also puts the notice after each citation (:mod:`rwgate.frontends.pandoc.render`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from rwgate.errors import OutputError
from rwgate.render.latex import escape_text as latex_escape

SHADOW_DIR = ".rwgate"


class ShadowError(OutputError):
    """A shadow bibliography could not be written; the message names the file."""


def shadow_path(original: Path, workdir: Path) -> Path:
    """Where the shadow of ``original`` goes: one file per source path, stable across runs."""
    digest = hashlib.sha256(str(original.resolve()).encode("utf-8")).hexdigest()[:8]
    return workdir / SHADOW_DIR / f"{original.stem}-{digest}.bib"


def _with_note(existing: str | None, note: str) -> str:
    if not existing or not existing.strip():
        return note
    existing = existing.strip()
    return f"{existing} {note}" if existing.endswith((".", ";")) else f"{existing}. {note}"


def shadow_text(text: str, notes: Mapping[str, str]) -> tuple[str, set[str]]:
    """``text`` with ``notes`` (key -> plain annotation) added to the first entry of each key.

    Only the flagged entries are rewritten; everything else keeps its bytes, so macros, comments
    and the ``@preamble`` behave exactly as in the original.
    """
    import bibtexparser
    from bibtexparser.model import Field

    library = bibtexparser.parse_string(text)
    done: set[str] = set()
    out = text
    cursor = 0
    for entry in library.entries:
        raw = entry.raw
        if entry.key not in notes or entry.key in done or not raw:
            continue
        start = out.find(raw, cursor)
        if start < 0:
            continue
        current = entry.fields_dict.get("note")
        # Braced, so that styles which change the case of note (elsarticle-harv) keep it.
        notice = "{" + latex_escape(notes[entry.key]) + "}"
        value = _with_note(current.value if current else None, notice)
        entry.set_field(Field("note", value))
        rewritten = bibtexparser.write_string(bibtexparser.Library([entry])).strip()
        out = out[:start] + rewritten + out[start + len(raw) :]
        cursor = start + len(rewritten)
        done.add(entry.key)
    return out, done


def write_shadow(original: Path, notes: Mapping[str, str], workdir: Path) -> tuple[Path, set[str]]:
    """Write the shadow of ``original``; returns its path and the keys it annotated."""
    from rwgate.fsutil import write_atomic
    from rwgate.readers import ReaderError, read_text

    try:
        text, _problems = read_text(original)
    except ReaderError as exc:
        raise ShadowError(str(exc)) from None
    shadowed, done = shadow_text(text, notes)
    target = shadow_path(original, workdir)
    try:
        write_atomic(target, shadowed)
    except OSError as exc:
        raise ShadowError(f"{target}: cannot write shadow bibliography: {exc}") from None
    return target, done
