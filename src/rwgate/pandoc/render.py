"""Putting the annotations into the document, whichever stage of the build the filter runs at.

* After ``--citeproc``: into each flagged ``Div#ref-KEY`` (see :mod:`rwgate.pandoc.placement`).
* Before citeproc or without it, LaTeX output: BibTeX/biber will format the bibliography later, so
  the ``bibliography`` metadata is pointed at shadow .bib files that carry the annotation.
* Otherwise nothing will ever render the entry for the filter, so a marker follows each citation of
  a flagged work and one warning says so.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import panflute as pf
from panflute.elements import from_json

from rwgate.models import Reference
from rwgate.pandoc.log import say
from rwgate.pandoc.placement import annotate_entries, has_rendered_bibliography, mark_citations
from rwgate.render.annotate import Annotation

LATEX_FORMATS = frozenset({"latex", "beamer"})


def _relative(path: Path) -> str:
    """The path as pandoc/BibTeX will see it: relative to the working directory when possible."""
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive on Windows
        return path.as_posix()


def shadow_bibliographies(
    doc: pf.Doc,
    annotations: Mapping[str, Annotation],
    refs: Mapping[str, Reference],
    files: list[tuple[str, str]],
) -> set[str]:
    """Point ``bibliography`` at shadow copies of the .bib files holding flagged entries."""
    from rwgate.pandoc.shadowbib import ShadowError, write_shadow
    from rwgate.references import BIBTEX_SUFFIXES

    notes_by_file: dict[str, dict[str, str]] = {}
    for key, annotation in annotations.items():
        ref = refs.get(key)
        if ref is None or ref.location is None:
            continue
        if Path(ref.location.file).suffix.lower() in BIBTEX_SUFFIXES:
            notes_by_file.setdefault(ref.location.file, {})[key] = annotation.text
    shadows: dict[str, Path] = {}
    done: set[str] = set()
    for file, notes in notes_by_file.items():
        try:
            target, keys = write_shadow(Path(file), notes, Path.cwd())
        except ShadowError as exc:
            say("WARNING", str(exc))
            continue
        shadows[file] = target
        done |= keys
    if not shadows:
        return done
    names = []
    for name, found in files:
        shadow = shadows.get(found)
        names.append(_relative(shadow) if shadow is not None else name)
    doc.metadata["bibliography"] = pf.MetaList(*(pf.MetaString(n) for n in names))
    listed = ", ".join(_relative(p) for p in shadows.values())
    say(
        "WARNING",
        f"no rendered bibliography (filter ran before --citeproc or without it): "
        f"bibliography now points at {listed}, whose flagged entries carry the notice in 'note' "
        "(BibTeX/biblatex print it; with --citeproc, run it before the filter)",
    )
    return done


def render(
    source: bytes,
    fmt: str,
    annotations: Mapping[str, Annotation],
    refs: Mapping[str, Reference],
    files: list[tuple[str, str]],
    inline: bool = False,
) -> bytes:
    """The annotated document as pandoc JSON."""
    doc = json.loads(source, object_hook=from_json)
    doc.format = fmt
    rendered = has_rendered_bibliography(doc)
    placed = annotate_entries(doc, annotations) if rendered else set()
    rest = {key: a for key, a in annotations.items() if key not in placed}
    if rest and not rendered and fmt in LATEX_FORMATS:
        shadowed = shadow_bibliographies(doc, rest, refs, files)
        rest = {key: a for key, a in rest.items() if key not in shadowed}
    if rest:
        mark_citations(doc, rest)
        where = "filter ran before --citeproc or without it" if not rendered else "no entry"
        say(
            "WARNING",
            f"references could not be annotated ({where}): {', '.join(rest)}; "
            "a notice follows each citation instead",
        )
    if inline:
        mark_citations(doc, {key: a for key, a in annotations.items() if key not in rest})
    return json.dumps(doc.to_json(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
