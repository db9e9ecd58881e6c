"""The metadata a Quarto project or a bookdown book gives a document, merged as those tools merge.

A chapter rarely names its bibliography: ``_quarto.yml`` or bookdown's ``index.Rmd`` does, and the
tool merges it into every chapter before pandoc runs, so rwgate reads the same files in the same
order: Quarto's ``project-context.ts``/``project-profile.ts`` (``mergeConfigs``,
``toInputRelativePaths``), bookdown's ``merge_chapters`` (the last YAML block that sets a field
wins) and the ``pandoc_args`` of ``_output.yml`` and the front matter. Only the citation fields
(:data:`_KEYS`) are taken; files outside the allowed roots are never read.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rwgate.readers.locate import Allowed

Layer = dict[str, Any]
_ARG_OPTIONS = ("--metadata-file", "--defaults", "-d", "--bibliography")
PROSE = ("title", "subtitle", "abstract", "description", "thanks")
"""Metadata Quarto and pandoc render as Markdown: a project file's citations there are cited."""
_KEYS = ("bibliography", "nocite", "rwgate", "crossref", "references", *PROSE)
_FRONT = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)
MARKDOWN = (".md", ".markdown", ".qmd", ".rmd", ".rmarkdown")
LEVELS = 2
"""Folders looked through above a chapter for ``_bookdown.yml`` (``rmd_subdir`` chapters sit in
subfolders of the book); Quarto looks all the way up, and so does rwgate."""


@dataclass
class Project:
    """What a project adds to a document: its layers (lowest first) and the files read."""

    kind: str = ""
    root: Path | None = None
    layers: list[Layer] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    """The files whose citation fields were merged, in the order read (the report names them)."""
    problems: list[str] = field(default_factory=list)
    command_line: list[str] = field(default_factory=list)
    """``--bibliography`` files a book's ``pandoc_args`` give (they replace the field)."""


def _visible(path: Path, allowed: Allowed | None) -> bool:
    """Whether ``path`` may be read and is a file: outside the allowed roots (MCP) a file is never
    looked at, so its existence is never revealed."""
    return (allowed is None or allowed(path)) and path.is_file()


def _yaml_file(folder: Path, stem: str, allowed: Allowed | None) -> Path | None:
    """``stem.yml``, else ``stem.yaml``, in ``folder``: the first that is :func:`_visible`."""
    paths = (folder / f"{stem}.yml", folder / f"{stem}.yaml")
    return next((path for path in paths if _visible(path, allowed)), None)


def _load(
    path: Path, allowed: Allowed | None, project: Project, front: bool = False
) -> dict[str, Any]:
    """A YAML file's top-level map, or (``front``) a Markdown file's front matter: {} when
    absent, refused or not a map; a parse error noted."""
    if not _visible(path, allowed):
        return {}
    try:
        if front:
            match = _FRONT.match(path.read_text(encoding="utf-8", errors="replace"))
            data = yaml.safe_load(match.group(1)) if match else None
        else:
            data = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        said = "front matter not read" if front else "not read as YAML"
        project.problems.append(f"{path}: {said} ({type(exc).__name__})")
        return {}
    return data if isinstance(data, dict) else {}


def _paths(value: Any, base: Path, fixup: bool) -> Any:
    """``bibliography`` names made absolute against ``base``: always (``fixup`` False, a folder
    pandoc runs in) or, as Quarto does, only when the file is there."""
    if isinstance(value, list):
        return [_paths(item, base, fixup) for item in value]
    if isinstance(value, str) and value and not Path(value).is_absolute():
        candidate = base / value
        if not fixup or candidate.exists():
            return str(candidate)
    return value


def _layer(data: dict[str, Any], base: Path, fixup: bool = True) -> Layer:
    """The citation fields of one file, its bibliography names resolved against ``base``."""
    layer = {key: data[key] for key in _KEYS if key in data}
    if "bibliography" in layer:
        layer["bibliography"] = _paths(layer["bibliography"], base, fixup)
    per_format = format_bibliographies(data.get("format"))
    if per_format:
        layer[FORMATS] = _paths(per_format, base, fixup)
    return layer


def _noted(path: Path, layer: Layer, project: Project) -> Layer:
    """``layer``, its file noted among those the project's metadata came from when it gives any."""
    if layer and path not in project.files:
        project.files.append(path)
    return layer


def _read(
    path: Path, base: Path, allowed: Allowed | None, project: Project, fixup: bool = True
) -> Layer:
    """The citation fields of the YAML file ``path`` (see :func:`_layer`), noted."""
    return _noted(path, _layer(_load(path, allowed, project), base, fixup), project)


FORMATS = "format-bibliography"
"""Bibliographies set under ``format: <name>:``: every format's, since any may be rendered."""


def format_bibliographies(formats: Any) -> list[str]:
    """The ``bibliography`` names under each output format of a ``format:`` map, in order."""
    found: list[str] = []
    for options in formats.values() if isinstance(formats, dict) else []:
        if isinstance(options, dict):
            found += [str(n) for n in _as_list(options.get("bibliography") or []) if n]
    return found


def merge(low: Any, high: Any) -> Any:
    """Quarto's ``mergeConfigs``: maps merged key by key, lists concatenated without repeats when
    either side is a list, otherwise the later value."""
    if isinstance(low, dict) and isinstance(high, dict):
        out = dict(low)
        for key, value in high.items():
            out[key] = merge(out[key], value) if key in out else value
        return out
    if isinstance(low, list) or isinstance(high, list):
        if low is None or high is None:
            return high if low is None else low
        combined: list[Any] = []
        for item in [*_as_list(low), *_as_list(high)]:
            if item not in combined:
                combined.append(item)
        return combined
    return high


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _profiles(config: dict[str, Any]) -> list[str]:
    """The active Quarto profiles: ``QUARTO_PROFILE``, else ``profile: default:``, plus the first
    of each ``profile: group:`` none of whose names is active."""
    named = os.environ.get("QUARTO_PROFILE", "")
    given = config.get("profile")
    settings: dict[str, Any] = given if isinstance(given, dict) else {}
    if not named:
        default = settings.get("default")
        named = ",".join(map(str, default)) if isinstance(default, list) else str(default or "")
    active = [name.strip() for name in named.split(",") if name.strip()]
    groups = settings.get("group")
    if isinstance(groups, list) and groups and not isinstance(groups[0], list):
        groups = [groups]
    for group in groups or []:
        if isinstance(group, list) and group and not any(str(g) in active for g in group):
            active.append(str(group[0]))
    return active


def _quarto(document: Path, root: Path, allowed: Allowed | None) -> Project:
    project = Project(kind="quarto", root=root)
    path = _yaml_file(root, "_quarto", allowed) or root / "_quarto.yaml"
    config = _load(path, allowed, project)
    layers = [_noted(path, _layer(config, root), project)]
    for key in ("metadata-file", "metadata-files"):
        for name in _as_list(config.get(key) or []):
            if isinstance(name, str):
                layers.append(_read(root / name, root, allowed, project))
    for profile in reversed(_profiles(config)):
        if found := _yaml_file(root, f"_quarto-{profile}", allowed):
            layers.append(_read(found, root, allowed, project))
    layers.append(_read(root / "_quarto.yml.local", root, allowed, project))
    folder = root
    for part in document.parent.relative_to(root).parts:
        folder = folder / part
        if found := _yaml_file(folder, "_metadata", allowed):
            layers.append(_read(found, folder, allowed, project))
    project.layers = [layer for layer in layers if layer]
    return project


def _pandoc_args(data: dict[str, Any]) -> list[str]:
    """Every ``pandoc_args`` list under an ``output:`` map (or an ``_output.yml``)."""
    found: list[str] = []
    stack: list[Any] = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            args = item.get("pandoc_args")
            if isinstance(args, list):
                found += [str(a) for a in args]
            stack += [v for k, v in item.items() if k != "pandoc_args"]
        elif isinstance(item, list):
            stack += item
    return found


def _args_layer(
    given: list[tuple[Path, list[str]]], root: Path, allowed: Allowed | None, project: Project
) -> Layer:
    """What ``--metadata-file``, ``--defaults`` and ``--bibliography`` in the ``given``
    ``pandoc_args`` lists (each with the file that gives it) add (pandoc runs in ``root``); the
    ``--bibliography`` files go to ``project.command_line``."""
    merged: Layer = {}
    for origin, args in given:
        for arg, following in zip(args, [*args[1:], ""], strict=False):
            option, _, value = arg.partition("=")
            value = value or following
            if option == "--metadata-file":
                merged = merge(merged, _read(root / value, root, allowed, project, False))
            elif option in ("--defaults", "-d"):
                path = root / value if Path(value).suffix else root / f"{value}.yaml"
                merged = _defaults(path, root, allowed, project, merged)
            elif option == "--bibliography":
                project.command_line.append(str(root / value))
                _noted(origin, {"bibliography": value}, project)
    return merged


def _defaults(
    path: Path, root: Path, allowed: Allowed | None, project: Project, merged: Layer
) -> Layer:
    """``merged`` with what a pandoc defaults file adds: its metadata files and ``metadata:``;
    its ``bibliography`` goes to ``project.command_line``."""
    defaults = _load(path, allowed, project)
    for name in _as_list(defaults.get("metadata-files") or defaults.get("metadata-file")):
        if isinstance(name, str):
            merged = merge(merged, _read(root / name, root, allowed, project, False))
    own = _layer(defaults.get("metadata") or {}, root, False)
    named = [str(root / b) for b in _as_list(defaults.get("bibliography") or [])]
    project.command_line += named
    _noted(path, {**own, "bibliography": named} if named else own, project)
    return merge(merged, own)


def _book_root(document: Path, allowed: Allowed | None) -> Path | None:
    """The bookdown book a ``.Rmd`` belongs to: the nearest folder with ``_bookdown.yml``, else
    the document's own folder when its ``index.Rmd`` says ``site: bookdown::bookdown_site``."""
    for folder in [document.parent, *document.parent.parents][: LEVELS + 1]:
        if _visible(folder / "_bookdown.yml", allowed):
            return folder
    index = document.parent / "index.Rmd"
    if _visible(index, allowed):
        head = index.read_text(encoding="utf-8", errors="replace")[:4096]
        if re.search(r"^site:\s*[\"']?bookdown::bookdown_site", head, re.M):
            return document.parent
    return None


def _bookdown(document: Path, root: Path, allowed: Allowed | None) -> Project:
    project = Project(kind="bookdown", root=root)
    config = _load(root / "_bookdown.yml", allowed, project)
    files = config.get("rmd_files")
    if isinstance(files, dict):  # per output format: any of them may be built
        files = next((v for v in files.values() if isinstance(v, list) and v), None)
    first = root / files[0] if isinstance(files, list) and files else root / "index.Rmd"
    output = root / "_output.yml"
    args = [(output, _pandoc_args(_load(output, allowed, project)))]
    if first.resolve() != document.resolve():
        index = _load(first, allowed, project, front=True)
        args.append((first, _pandoc_args(index.get("output") or {})))
        project.layers.append(_noted(first, _layer(index, root, False), project))
    project.layers.insert(0, _args_layer(args, root, allowed, project))
    return project


def project_for(document: Path, allowed: Allowed | None = None) -> Project | None:
    """The Quarto project or bookdown book ``document`` is part of, with its metadata, or None."""
    if document.suffix.lower() not in MARKDOWN:
        return None  # Quarto renders Markdown and notebooks; rst and Org are pandoc's alone
    here = document.resolve().parent
    for folder in [here, *here.parents]:
        if _yaml_file(folder, "_quarto", allowed):
            return _quarto(document.resolve(), folder, allowed)
    if document.suffix.lower() in (".rmd", ".rmarkdown"):
        root = _book_root(document.resolve(), allowed)
        if root is not None:
            return _bookdown(document, root, allowed)
        return _rmarkdown(document.resolve(), allowed)
    return None


def _rmarkdown(document: Path, allowed: Allowed | None) -> Project | None:
    """A lone R Markdown document whose ``pandoc_args`` (its ``output:`` or the ``_output.yml``
    beside it, which rmarkdown reads too) name metadata files or bibliographies; else None."""
    project = Project(kind="bookdown", root=document.parent)
    output = document.parent / "_output.yml"
    args = [
        (document, _pandoc_args(_load(document, allowed, project, front=True).get("output") or {})),
        (output, _pandoc_args(_load(output, allowed, project))),
    ]
    if not any(a.split("=")[0] in _ARG_OPTIONS for _, named in args for a in named):
        return None
    project.layers = [_args_layer(args, document.parent, allowed, project)]
    return project


def combined(project: Project, own: Layer) -> Layer:
    """The document's citation fields (``own``) with the project's, as the tool combines them."""
    if project.kind == "quarto":
        out: Layer = {}
        for layer in [*project.layers, own]:
            out = merge(out, layer)
        extra = out.pop(FORMATS, [])
        if extra:  # after the top-level names: those are found first, as in a format that has none
            out["bibliography"] = merge(out.get("bibliography"), list(extra))
        return out
    files, *book = project.layers  # bookdown: --metadata-file/--defaults, then index.Rmd
    yaml_blocks: Layer = {}
    for layer in [*book, own]:  # pandoc takes a field from the last YAML block that sets it
        yaml_blocks.update(layer)
    out = {**files, **yaml_blocks}  # the document's metadata over a metadata file's
    if project.command_line:
        out["bibliography"] = project.command_line  # --bibliography replaces the field
    return out


QUARTO_REF_TYPES = frozenset(
    {
        *("fig", "tbl", "lst", "eq", "sec"),  # floats, equations, sections
        *("thm", "lem", "cor", "prp", "cnj", "def", "exm", "exr", "alg", "prf", "rem", "sol"),
        *("nte", "tip", "wrn", "imp", "cau"),  # callouts
    }
)
"""Quarto's cross-reference types (quarto-cli filters/crossref/refs.lua ``valid_ref_types``,
customnodes/theorem.lua, the callout and float categories)."""


def cross_references(keys: list[str], crossref: Any) -> set[str]:
    """The keys Quarto's crossref filter takes for cross-references (``@fig-plot``, ``@sec-intro``,
    and a ``crossref: custom:`` type): they never reach citeproc, resolved or not."""
    types = set(QUARTO_REF_TYPES)
    custom = crossref.get("custom") if isinstance(crossref, dict) else None
    for kind in custom if isinstance(custom, list) else []:
        if isinstance(kind, dict) and isinstance(kind.get("key"), str):
            types.add(kind["key"].lower())
    return {k for k in keys if (m := re.match(r"([A-Za-z]+)-", k)) and m[1].lower() in types}


def cited_in(value: Any) -> tuple[list[str], bool]:
    """Keys (and whether ``@*``) in a ``nocite`` value written in a YAML file."""
    text = " ".join(str(v) for v in _as_list(value)) if value is not None else ""
    keys = re.findall(r"@([A-Za-z0-9_][\w:.#$%&+?<>~/-]*[\w])|@\{([^}]*)\}", text)
    names = [a or b for a, b in keys]
    return names, "@*" in text
