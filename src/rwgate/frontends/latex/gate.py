"""After latexmk: where the build products are, what the document cites, and the verdict.

latexmk cannot see that a cited work was retracted yesterday or that the policy changed, so the
gate recomputes the verdict from the files LaTeX wrote and compares its fingerprint with the one
the hook stored next to the ``.bbl``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from rwgate.contract.models import CitedDocument, Location, Problem, Reference
from rwgate.frontends.kit import judge_documents
from rwgate.frontends.latex.asprinted import unjudged
from rwgate.frontends.latex.memo import state_path
from rwgate.frontends.latex.verdict import fingerprint, latex_notes, read_fingerprint
from rwgate.readers.builds.latexaux import bibliography_parts, parse_aux
from rwgate.readers.builds.latexdoc import aux_document, bcf_document, read_latex
from rwgate.settings.config import Settings
from rwgate.verdicts.result import CheckResult

OUTPUT_SUFFIXES = (".pdf", ".ps", ".dvi", ".xdv")


@dataclass(frozen=True)
class Build:
    """Where latexmk put one document's products."""

    tex: Path
    out_dir: Path
    aux_dir: Path
    job: str
    success_cmd: bool = False
    """The project sets ``$success_cmd``: rw-latexmk held it back until the gate has passed."""

    @property
    def bbl(self) -> Path:
        return self.aux_dir / f"{self.job}.bbl"

    def outputs(self) -> list[tuple[Path, Path]]:
        """Each typeset output, with the name a failed gate renames it to."""
        names = [f"{self.job}{suffix}" for suffix in OUTPUT_SUFFIXES]
        return [(self.out_dir / name, self.out_dir / f"{name}.rejected") for name in names]


def build_from_latexmk(tex: Path, cwd: Path, report: str) -> Build:
    """Interpret what latexmk reported (``out_dir``, ``aux_dir``, ``do_cd``, ``jobname``, whether
    the project sets ``$success_cmd``)."""
    lines = [*report.split("\n"), "", "", "", "", ""]
    out_dir, aux_dir, do_cd, jobname, success = (line.strip() for line in lines[:5])
    base = tex.parent if do_cd == "1" else cwd
    out = base / out_dir if out_dir else base
    aux = base / aux_dir if aux_dir else out
    job = jobname.replace("%A", tex.stem) if jobname else tex.stem
    return Build(tex=tex, out_dir=out, aux_dir=aux, job=job, success_cmd=success == "1")


def cited_document(build: Build, cwd: Path) -> CitedDocument:
    """What the bibliography tool reads: .bcf for biber, .aux for BibTeX (with the other .aux files
    bibtex runs on: multibib, bibunits, chapterbib), else the source."""
    aux = build.aux_dir / f"{build.job}.aux"
    bcf = build.aux_dir / f"{build.job}.bcf"
    search = [build.tex.resolve().parent, cwd.resolve(), build.aux_dir.resolve()]
    if not aux.is_file():
        return _embedded(read_latex(build.tex, build.aux_dir))
    info = parse_aux(aux)
    if info.biblatex and bcf.is_file():
        return _own_bbl(build, bcf_document(bcf, search))
    if not info.bibdata and not info.biblatex:  # no BibTeX run: its own thebibliography?
        own = _embedded(read_latex(build.tex, build.aux_dir))
        if users_bibliography(own):
            return own
    doc = _own_bbl(build, aux_document(aux, search, info=info))
    parts = bibliography_parts(build.aux_dir, build.job, info)
    return doc.model_copy(update={"parts": [aux_document(p, search, info=i) for p, i in parts]})


def regenerable(doc: CitedDocument) -> bool:
    """Whether the bibliography tool can write the ``.bbl`` again: every source it reads exists."""
    return bool(doc.bibliographies) and not any(p.unreadable for p in doc.problems)


_USERS = (".tex", ".ltx", ".bbl")


def _own_files(doc: CitedDocument) -> list[Path]:
    """The bibliography files that are the user's own, which no tool of this build writes: a
    ``thebibliography`` in the sources, a ``.bbl`` they ``\\input``, a bundle's ``.bbl``."""
    return [Path(name) for name in doc.bibliographies if Path(name).suffix.lower() in _USERS]


def users_bibliography(doc: CitedDocument) -> bool:
    """The bibliography LaTeX prints is the user's own file (:func:`_own_files`)."""
    return bool(_own_files(doc))


def _embedded(doc: CitedDocument) -> CitedDocument:
    """A document with its own ``thebibliography`` (no ``\\bibdata``, no BibTeX run): its
    ``\\bibitem``s are judged as LaTeX prints them, and nothing can give them a note."""
    own = _own_files(doc)
    if not own:
        return doc
    note = Problem(
        message="the document's own thebibliography, not written by this build: every entry it "
        "prints is judged, and LaTeX reads an annotated copy of it (the file is left as it is)",
        location=Location(file=", ".join(str(p) for p in own)),
    )
    return doc.model_copy(update={"problems": [*doc.problems, note]})


def users_files(build: Build, doc: CitedDocument | None) -> list[Path]:
    """The files LaTeX prints the bibliography from that this build may not rewrite and that
    exist: the document's own ``thebibliography`` files, a bundle's ``.bbl``, or (``-bibtex-``)
    the ``.bbl`` an earlier run left."""
    own = _own_files(doc) if doc else []
    return [path for path in own or [build.bbl] if path.is_file()]


def _own_bbl(build: Build, doc: CitedDocument) -> CitedDocument:
    """A ``.bbl`` nothing here can regenerate (an arXiv-style bundle: .tex and .bbl, no .bib) is
    the user's file: its entries are judged as LaTeX prints them, and it is never deleted."""
    if regenerable(doc) or not build.bbl.is_file() or read_fingerprint(build.bbl) is not None:
        return doc
    note = Problem(
        message=f"{build.bbl.name}: no bibliography source to regenerate it; the entries it "
        "prints are judged, and LaTeX reads an annotated copy of it (the file is left as it is)",
        location=Location(file=str(build.bbl)),
    )
    kept = [p for p in doc.problems if not p.unreadable]
    return doc.model_copy(update={"bibliographies": [str(build.bbl)], "problems": [*kept, note]})


@dataclass
class Verdict:
    result: CheckResult
    fingerprints: dict[Path, str]
    """Each ``.bbl`` of the build (multibib's ``Meth.bbl``...): the fingerprint of its notes."""
    regenerable: bool = True
    """False for a ``.bbl`` this build cannot write again (never deleted, never annotated)."""
    doc: CitedDocument | None = None
    """What was judged: the files the verdict depends on (the rebuild memo watches them)."""
    unjudged: list[str] = field(default_factory=list)
    """Entries the bibliography tool printed that rwgate did not judge (DESIGN.md rule 2)."""

    def stale(self) -> list[Path]:
        """The .bbl files annotated for another verdict (or never annotated)."""
        return [
            bbl
            for bbl, expected in self.fingerprints.items()
            if bbl.is_file() and read_fingerprint(bbl) != expected
        ]


def verdict(build: Build, settings: Settings, cwd: Path) -> Verdict:
    """The verdict on every bibliography of the build, and what each .bbl must carry (judged
    together: the sources opened once for all of them)."""
    doc = cited_document(build, cwd)
    parts = list(filter(regenerable, doc.parts))  # a .bbl without its sources is the user's
    docs = [doc, *([doc.model_copy(update={"parts": []})] if doc.parts else []), *parts]
    both = judge_documents(docs, settings)
    bbls = [(build.bbl, doc), *((Path(part.path).with_suffix(".bbl"), part) for part in parts)]
    judged = [both[1 if doc.parts else 0], *both[len(docs) - len(parts) :]]
    written = [
        (bbl, part, said, latex_notes(said[0].citations, settings.template))
        for (bbl, part), said in zip(bbls, judged, strict=True)
    ]
    prints = {bbl: fingerprint(notes) for bbl, _, _, notes in written}
    result = both[0][0]
    own = doc.bibliographies == [str(build.bbl)] or users_bibliography(doc)
    return Verdict(result, prints, not own, doc, [] if own else _unjudged(written, result))


def _unjudged(
    written: list[
        tuple[Path, CitedDocument, tuple[CheckResult, dict[str, Reference]], dict[str, str]]
    ],
    shown: CheckResult,
) -> list[str]:
    """Rule 2 (:mod:`.asprinted`): each entry the tool printed in each ``.bbl`` of the build
    (with the notes the hook wrote into it) that rwgate did not judge for its key, one line
    each; the warnings go to ``shown``, the verdict the build reports."""
    lines: list[str] = []
    for bbl, doc, (result, refs), notes in written:
        stops, warns = unjudged(bbl, result, refs, doc.bibtex_keys, notes)
        lines += stops
        shown.warnings += [w for w in warns if w not in shown.warnings]
    return lines


def invalidate(bbls: list[Path]) -> None:
    """Make latexmk rerun the bibliography tool: its .bbl is gone (a build product, not user's)."""
    for bbl in bbls:
        bbl.unlink(missing_ok=True)
        state_path(bbl).unlink(missing_ok=True)


def reject_outputs(build: Build) -> list[tuple[Path, Path | str]]:
    """Rename the typeset outputs to ``NAME.pdf.rejected``: each output with where it went, or
    why it could not be moved (the caller names both, so a failed gate never hides a PDF)."""
    moved: list[tuple[Path, Path | str]] = []
    for path, target in build.outputs():
        if path.is_file():
            try:
                os.replace(path, target)
            except OSError as exc:
                moved.append((path, str(exc.strerror or exc)))
            else:
                moved.append((path, target))
    return moved


def clear_rejected(build: Build) -> None:
    """A passing build leaves no stale ``.rejected`` output from an earlier failure."""
    for _, rejected in build.outputs():
        rejected.unlink(missing_ok=True)
