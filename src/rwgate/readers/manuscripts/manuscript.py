"""Manuscripts in, :class:`~rwgate.contract.models.CitedDocument` out: the keys cited and the
bibliography files named. Markdown (and every text format pandoc reads) goes through pandoc itself,
so the keys are the ones citeproc will see; LaTeX through :mod:`rwgate.readers.builds.latexdoc`.
The pandoc filter needs only :func:`document_from_ast`: the file readers are imported where run.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rwgate.contract.models import CitedDocument, Location, Problem
from rwgate.errors import InputError
from rwgate.readers.builds.bibfind import unreadable
from rwgate.readers.locate import OUTSIDE, Allowed, OutsideRoots, resolve_bibliography
from rwgate.readers.manuscripts import pandoc_ast
from rwgate.readers.reach import CANNOT_JUDGE as UNJUDGED
from rwgate.readers.reach import unreached

if TYPE_CHECKING:
    from rwgate.readers.manuscripts.project import Project
    from rwgate.readers.manuscripts.staged import Staged

# pandoc's own wording (Text.Pandoc.Logging, CouldNotLoadIncludeFile), stable across 3.x. The
# position it gives is where the reader stopped, after the directive, so the line is looked up.
_SKIPPED_INCLUDE = re.compile(r"^Could not load include file (?P<name>.*) at .* line \d+")


class ManuscriptError(InputError):
    """The manuscript itself could not be read; the message is one line naming the file."""


def _line_of(document: Path, needle: str) -> int | None:
    """The first line of the source that mentions ``needle``, to point the user at it."""
    try:
        text = document.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return next((n for n, line in enumerate(text.splitlines(), start=1) if needle in line), None)


def document_from_ast(
    ast: dict[str, Any],
    document: Path,
    resource_path: list[Path] | None = None,
    allowed: Allowed | None = None,
    keys: list[str] | None = None,
    names: list[str] | None = None,
) -> CitedDocument:
    """Reduce a pandoc AST to a CitedDocument; shared by ``rwgate check`` and the pandoc filter.
    ``keys``: :func:`pandoc_ast.cited_keys` of ``ast`` when the caller has them already;
    ``names``: the bibliographies when a project, not ``ast`` alone, names them."""
    problems: list[Problem] = []
    bibliographies: list[str] = []
    for name in pandoc_ast.bibliography_paths(ast) if names is None else names:
        where = Location(file=str(document), line=_line_of(document, name))
        try:
            found = resolve_bibliography(name, document, resource_path, allowed)
        except OutsideRoots:
            problems.append(unreadable(f"a bibliography {OUTSIDE}", where))
            continue
        if found is None:
            problems.append(unreadable(f"bibliography file not found: {name}", where))
        elif str(found) not in bibliographies:
            bibliographies.append(str(found))
    if pandoc_ast.rwgate_block_malformed(ast):
        problems.append(
            Problem(
                message="metadata field 'rwgate' must be a map (e.g. rwgate: {policy: strict})",
                location=Location(file=str(document), line=_line_of(document, "rwgate:")),
                severity="error",
            )
        )
    return CitedDocument(
        path=str(document),
        keys=pandoc_ast.cited_keys(ast) if keys is None else keys,
        cite_all=pandoc_ast.cites_all(ast),
        bibliographies=bibliographies,
        inline_references=pandoc_ast.inline_references(ast),
        metadata=pandoc_ast.rwgate_metadata(ast),
        problems=problems,
    )


def read_markdown(
    path: Path,
    resource_path: list[Path] | None = None,
    allowed: Allowed | None = None,
    pandoc_format: str = "markdown",
) -> CitedDocument:
    """Read a Markdown (or other pandoc-readable text) manuscript through pandoc, R Markdown and
    Quarto as those tools hand it over (:mod:`.staged`, :mod:`.project`). An include the sandboxed
    pandoc skipped and what staging could not see are ``unseen`` problems; citations that reach
    no bibliography are an error. ``allowed`` confines the files the metadata names."""
    path = Path(path)
    if not path.is_file():
        raise ManuscriptError(f"{path}: no such file")
    warnings: list[str] = []
    project = _project(path, allowed)
    quarto = path.suffix.lower() == ".qmd" or (project is not None and project.kind == "quarto")
    root = project.root if project is not None else None
    ast, staged = read_source_ast(path, pandoc_format, warnings, quarto, root, allowed)
    doc = _with_project(ast, path, resource_path, allowed, project)
    for warning in warnings:
        skipped = _SKIPPED_INCLUDE.match(warning)
        if skipped:
            message = f"included file not read (its citations are not checked): {skipped['name']}"
            where = Location(file=str(path), line=_line_of(path, skipped["name"]))
            doc.problems.append(Problem(message=message, location=where, unseen=True))
    if staged is not None:
        doc.problems += _staged_problems(path, staged)
    inline = [str(entry.get("id", "")) for entry in doc.inline_references]
    lost = any(p.unreadable for p in doc.problems)  # a bibliography not found: its own error
    why = None if lost else unreached(doc.keys, doc.bibliographies, doc.bibliographies, inline)
    if why:
        raise ManuscriptError(f"{path}: {CANNOT_JUDGE} ({why})")
    return doc


CANNOT_JUDGE = (
    f"{UNJUDGED}: name the bibliography (front matter, _quarto.yml, bookdown's index.Rmd)"
)
KNITR_SUFFIXES = (".qmd", ".rmd", ".rmarkdown")
"""Sources knitr or Quarto turn into Markdown: their code chunks are code, never prose."""


def read_source_ast(
    path: Path,
    pandoc_format: str,
    warnings: list[str],
    quarto: bool | None = None,
    root: Path | None = None,
    allowed: Allowed | None = None,
) -> tuple[dict[str, Any], Staged | None]:
    """pandoc's AST of ``path`` as Quarto or knitr hand it to pandoc (``quarto``: read as Quarto
    reads it; by default a ``.qmd`` is); the staged text is written to a private temporary
    folder. None for the staged part when the source is pandoc's alone."""
    from rwgate.readers.manuscripts.staged import stage
    from rwgate.readers.pandoc_exe import PandocError, run_pandoc_json

    quarto = path.suffix.lower() == ".qmd" if quarto is None else quarto
    knitr = path.suffix.lower() in KNITR_SUFFIXES
    try:
        if not knitr and not quarto:
            return run_pandoc_json(path, pandoc_format, warnings=warnings), None
        text = path.read_bytes().decode("utf-8", "surrogateescape")
        staged = stage(path, text, quarto=quarto, knitr=knitr, root=root, allowed=allowed)
        if staged.text == text:
            return run_pandoc_json(path, pandoc_format, warnings=warnings), staged
        with tempfile.TemporaryDirectory(prefix="rwgate-knitr-") as folder:
            copy = Path(folder) / path.name
            copy.write_bytes(staged.text.encode("utf-8", "surrogateescape"))
            said: list[str] = []
            try:
                ast = run_pandoc_json(copy, pandoc_format, warnings=said)
            except PandocError as exc:
                raise PandocError(str(exc).replace(str(copy), str(path))) from None
            warnings += [w.replace(str(copy), str(path)) for w in said]
            return ast, staged
    except PandocError as exc:
        raise ManuscriptError(str(exc)) from exc
    except OSError as exc:
        raise ManuscriptError(f"{path}: cannot read: {exc.strerror}") from exc


def _named(file: Path, path: Path) -> str:
    """``file`` as the report names it: as the user named the document when it is the document."""
    return str(path) if file == path or file == path.resolve() else str(file)


def _staged_problems(path: Path, staged: Staged) -> list[Problem]:
    """What Quarto or knitr would read that rwgate could not (unseen: strict cannot judge), and
    fences knitr 1.46 and later refuse."""
    fence = "a chunk's closing fence differs from its opening one (knitr >= 1.46 stops here)"
    return [
        Problem(message=message, location=Location(file=_named(file, path), line=line), unseen=True)
        for message, file, line in staged.unseen
    ] + [
        Problem(message=fence, location=Location(file=_named(file, path), line=line))
        for file, line in staged.mismatched
    ]


def _own_layer(ast: dict[str, Any]) -> dict[str, Any]:
    """The document's own citation fields, as plain values (a list stays a list)."""
    from rwgate.readers.manuscripts.project import FORMATS, format_bibliographies

    meta = pandoc_ast.meta_map(ast)
    own: dict[str, Any] = {}
    raw = meta.get("bibliography")
    if raw is not None:
        names = pandoc_ast.bibliography_paths(ast)
        own["bibliography"] = names if raw.get("t") == "MetaList" else (names or [""])[0]
    block = pandoc_ast.rwgate_metadata(ast)
    if block:
        own["rwgate"] = block
    crossref = pandoc_ast.meta_to_plain(meta.get("crossref"))
    if isinstance(crossref, dict):
        own["crossref"] = crossref
    per_format = format_bibliographies(pandoc_ast.meta_to_plain(meta.get("format")))
    if per_format:
        own[FORMATS] = per_format
    return own


def _project(path: Path, allowed: Allowed | None) -> Project | None:
    """The Quarto project or bookdown book of ``path`` (a lone ``.qmd`` is a project of its own:
    its format-level bibliographies count)."""
    from rwgate.readers.manuscripts.project import Project, project_for

    project = project_for(path, allowed)
    if project is None and path.suffix.lower() == ".qmd":
        project = Project(kind="quarto")
    return project


def _with_project(
    ast: dict[str, Any],
    path: Path,
    resource_path: list[Path] | None,
    allowed: Allowed | None,
    project: Project | None,
) -> CitedDocument:
    """The document, with what its Quarto project or bookdown book adds to its metadata."""
    from rwgate.readers.manuscripts.project import cited_in, combined, cross_references

    if project is None:
        return document_from_ast(ast, path, resource_path, allowed)
    merged = combined(project, _own_layer(ast))
    value = merged.get("bibliography")
    names = [str(n) for n in (value if isinstance(value, list) else [value]) if n]
    doc = document_from_ast(ast, path, resource_path, allowed, names=names)
    keys, cite_all = cited_in(merged.get("nocite"))
    doc.keys += [key for key in keys if key not in doc.keys]
    if project.kind == "quarto":  # @fig-x, @sec-y: Quarto's cross-references, not citations
        refs = cross_references(doc.keys, merged.get("crossref"))
        doc.keys = [key for key in doc.keys if key not in refs]
    doc.keys += [key for key in _prose_keys(merged, ast) if key not in doc.keys]
    own_ids = {str(entry.get("id", "")) for entry in doc.inline_references}
    given = pandoc_ast.csl_entries(merged.get("references"))
    doc.inline_references += [e for e in given if str(e.get("id", "")) not in own_ids]
    doc.cite_all = doc.cite_all or cite_all
    block = merged.get("rwgate")
    if isinstance(block, dict):
        doc.metadata = block
    doc.problems += [Problem(message=problem) for problem in project.problems]
    own = path.resolve()
    named = [f for f in project.files if f != own]  # named as the document is: relative or not
    doc.project_metadata = [str(f) if path.is_absolute() else os.path.relpath(f) for f in named]
    return doc


def _prose_keys(merged: dict[str, Any], ast: dict[str, Any]) -> list[str]:
    """Keys cited in the Markdown fields (``abstract``, ``subtitle``...) a project file gives and
    the document does not set itself (its own are in ``ast``): read by pandoc, as Quarto does."""
    import yaml

    from rwgate.readers.manuscripts.project import PROSE
    from rwgate.readers.pandoc_exe import PandocError, run_pandoc_json

    meta = pandoc_ast.meta_map(ast)
    given = {k: merged[k] for k in PROSE if k in merged and k not in meta}
    if not given:
        return []
    block = yaml.safe_dump(given, allow_unicode=True)
    with tempfile.TemporaryDirectory(prefix="rwgate-meta-") as folder:
        staged = Path(folder) / "metadata.md"
        staged.write_text(f"---\n{block}---\n", encoding="utf-8")
        try:
            return pandoc_ast.cited_keys(run_pandoc_json(staged, "markdown"))
        except PandocError as exc:
            raise ManuscriptError(f"project metadata: {exc}") from exc


def read_latex_manuscript(path: Path, allowed: Allowed | None = None) -> CitedDocument:
    """A LaTeX manuscript: its ``.aux``/``.bcf`` when fresh, else its sources."""
    from rwgate.readers.builds.latexaux import LatexError
    from rwgate.readers.builds.latexdoc import read_latex

    try:
        return read_latex(Path(path), allowed=allowed)
    except LatexError as exc:
        raise ManuscriptError(str(exc)) from exc


def read_manuscript(path: Path, allowed: Allowed | None = None) -> CitedDocument:
    """Read any manuscript with the reader its suffix names (another suffix is an UnknownFormat
    error); ``allowed``: which files besides ``path`` may be read (the MCP server's roots)."""
    from rwgate.readers.bibliographies.registry import reader_for

    return reader_for(path, ["manuscript"]).read_manuscript(Path(path), allowed)
