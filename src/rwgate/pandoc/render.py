"""Putting the annotations into the document, whichever stage of the build the filter runs at.

* After ``--citeproc``: into each flagged ``Div#ref-KEY`` (see :mod:`rwgate.pandoc.placement`).
* Before citeproc or without it, LaTeX output: BibTeX/biber will format the bibliography later, so
  the ``bibliography`` metadata is pointed at shadow .bib files that carry the annotation.
* Otherwise nothing will ever render the entry for the filter, so a marker follows each citation of
  a flagged work and one warning says so.
* JATS: entries are annotated (``<mixed-citation>``) and, since ``+element_citations`` rebuilds the
  list from metadata (and a filter is not told the writer's extensions), every citation is marked.

Writing the shadow files needs the references and bibtexparser; placing needs neither, so the two
are apart: a rebuild answered from the verdict memo places the remembered shadows with the same
:func:`place` as the run that wrote them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import panflute as pf
from panflute.elements import from_json

from rwgate.pandoc.log import say
from rwgate.pandoc.placement import annotate_entries, has_rendered_bibliography, mark_citations
from rwgate.render.annotation import Annotation

if TYPE_CHECKING:
    from rwgate.models import Reference

LATEX_FORMATS = frozenset({"latex", "beamer"})
Mode = Literal["entries", "shadow", "markers"]


@dataclass(frozen=True)
class Shadowing:
    """The shadow bibliographies written for one document.

    ``names``: the new ``bibliography`` list; ``keys``: the works annotated in a shadow;
    ``files``: each shadow file (relative to the working directory) with the sha256 of what was
    written, so a memo hit can tell that the file is still the one it points at.
    """

    names: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)


def _relative(path: Path) -> str:
    """The path as pandoc/BibTeX will see it: relative to the working directory when possible."""
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive on Windows
        return path.as_posix()


def write_shadows(
    annotations: Mapping[str, Annotation],
    refs: Mapping[str, Reference],
    files: list[tuple[str, str]],
) -> tuple[Shadowing, bool]:
    """Write shadow copies of the .bib files holding flagged entries; (result, all written)."""
    from rwgate.pandoc.shadowbib import ShadowError, write_shadow
    from rwgate.references.readers import by_name

    notes_by_file: dict[str, dict[str, str]] = {}
    for key, annotation in annotations.items():
        ref = refs.get(key)
        if ref is None or ref.location is None:
            continue
        if Path(ref.location.file).suffix.lower() in by_name("bibtex").suffixes:
            notes_by_file.setdefault(ref.location.file, {})[key] = annotation.text
    shadows: dict[str, Path] = {}
    done: set[str] = set()
    complete = True
    for file, notes in notes_by_file.items():
        try:
            target, keys = write_shadow(Path(file), notes, Path.cwd())
        except ShadowError as exc:
            say("WARNING", str(exc))
            complete = False
            continue
        shadows[file] = target
        done |= keys
    if not shadows:
        return Shadowing(), complete
    names = []
    for name, found in files:
        shadow = shadows.get(found)
        names.append(_relative(shadow) if shadow is not None else name)
    written = {_relative(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in shadows.values()}
    return Shadowing(names, sorted(done), written), complete


def shadows_intact(shadowing: Shadowing | None) -> bool:
    """Whether every shadow file still holds what was written (a memo hit points at them)."""
    if shadowing is None:
        return True
    for name, digest in shadowing.files.items():
        try:
            if hashlib.sha256(Path(name).read_bytes()).hexdigest() != digest:
                return False
        except OSError:
            return False
    return True


def load(source: bytes, fmt: str) -> pf.Doc:
    """The pandoc JSON as a panflute document."""
    doc = json.loads(source, object_hook=from_json)
    doc.format = fmt
    return doc


def placement_mode(doc: pf.Doc, fmt: str) -> Mode:
    """Where annotations go in this document (see the module docstring)."""
    if has_rendered_bibliography(doc):
        return "entries"
    return "shadow" if fmt in LATEX_FORMATS else "markers"


def place(
    doc: pf.Doc,
    mode: Mode,
    annotations: Mapping[str, Annotation],
    shadowing: Shadowing | None = None,
    inline: bool = False,
) -> bytes:
    """Put the annotations into ``doc``; returns the annotated document as pandoc JSON."""
    placed = annotate_entries(doc, annotations) if mode == "entries" else set()
    rest = {key: a for key, a in annotations.items() if key not in placed}
    if shadowing is not None and shadowing.files:
        doc.metadata["bibliography"] = pf.MetaList(*(pf.MetaString(n) for n in shadowing.names))
        say(
            "WARNING",
            f"no rendered bibliography (filter ran before --citeproc or without it): "
            f"bibliography now points at {', '.join(shadowing.files)}, whose flagged entries "
            "carry the notice in 'note' (BibTeX/biblatex print it; citeproc's CSL styles do not: "
            "with --citeproc, run it before the filter, or use --lua-filter filters/rwgate.lua, "
            "which works on either side)",
        )
    if shadowing is not None:
        rest = {key: a for key, a in rest.items() if key not in shadowing.keys}
    if rest:
        mark_citations(doc, rest)
        where = "no entry" if mode == "entries" else "filter ran before --citeproc or without it"
        say(
            "WARNING",
            f"references could not be annotated ({where}): {', '.join(rest)}; "
            "a notice follows each citation instead",
        )
    if doc.format.startswith("jats") and not inline and annotations:
        # -t jats+element_citations builds <element-citation> from metadata, not from the
        # rendered entries, and a filter is not told the writer's extensions: so in JATS the
        # notice also follows every citation, whichever way the list is written.
        inline = True
        say("WARNING", "JATS output: a notice also follows each citation of a flagged work "
            "(element citations are built from metadata and cannot carry it)")  # fmt: skip
    if inline:
        mark_citations(doc, {key: a for key, a in annotations.items() if key not in rest})
    return json.dumps(doc.to_json(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
