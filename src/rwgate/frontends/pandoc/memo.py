"""The verdict memo: a rebuild whose citation inputs did not change skips the check entirely.

Authors rebuild after every prose edit, and loading the models, the cache and the readers costs
far more than the rest of the filter. So a full run's outcome (:class:`Verdict`) is remembered
through :mod:`rwgate.verdicts.remembered` with the record of everything the run read, and the next
run with the same :func:`request` replays it while every recorded input still holds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rwgate.readers.manuscripts import pandoc_ast
from rwgate.render.annotation import Annotation

if TYPE_CHECKING:
    from rwgate.frontends.pandoc.render import Mode, Shadowing

# pandoc tells a JSON filter no input file: bibliographies resolve from the working directory.
DOCUMENT = Path("(pandoc input)")
MEMO_DIR = "filter-memo"
REQUEST_LAYOUT = 3


@dataclass
class Verdict:
    """What a full run did, replayable without the check (see the module docstring)."""

    exit_code: int
    lines: list[str]
    annotations: dict[str, Annotation] = field(default_factory=dict)
    mode: Mode | None = None
    shadowing: Shadowing | None = None
    inline: bool = False
    report_path: str | None = None
    report_text: str | None = None


def resource_path(env: Mapping[str, str]) -> list[Path]:
    """``RWGATE_RESOURCE_PATH``: pandoc does not tell a filter its ``--resource-path``."""
    value = env.get("RWGATE_RESOURCE_PATH", "")
    return [Path(part) for part in value.split(os.pathsep) if part.strip()]


def request(
    ast: dict[str, Any], fmt: str, keys: list[str], printed: list[Any] | None = None
) -> dict[str, Any] | None:
    """What this run asks (the memo's name: the cited ``keys``, the bibliography names, the
    ``rwgate``/``references``/``nocite`` metadata, the format, the working directory and what
    the rendered entries print, so that another CSL style is verified again), or None when the
    memo is not to be used (a malformed ``rwgate`` block: the full run says why)."""
    if pandoc_ast.rwgate_block_malformed(ast):
        return None
    meta = pandoc_ast.meta_map(ast)
    return {
        "layout": REQUEST_LAYOUT,
        "cwd": str(Path.cwd()),
        "format": fmt,
        "keys": keys,
        "all": pandoc_ast.cites_all(ast),
        "bibliography": pandoc_ast.bibliography_paths(ast),
        "references": meta.get("references"),
        "nocite": meta.get("nocite"),
        "rwgate": meta.get("rwgate"),
        "printed": printed or [],
    }


def verdict_of(data: Any) -> Verdict | None:
    """The remembered payload as a :class:`Verdict`; None when it is not one this version wrote."""
    from rwgate.frontends.pandoc.render import Shadowing

    if not isinstance(data, dict):
        return None
    try:
        verdict = Verdict(**data)
        verdict.annotations = {k: Annotation(**a) for k, a in data["annotations"].items()}
        if data["shadowing"] is not None:
            verdict.shadowing = Shadowing(**data["shadowing"])
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    return verdict
