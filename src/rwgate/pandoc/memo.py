"""The verdict memo: a rebuild whose citation inputs did not change skips the check entirely.

Authors rebuild after every prose edit; the check would give the same verdicts, yet loading the
models, the cache and the bibliography readers costs far more than the rest of the filter. So
after a full run the filter remembers its outcome (the annotations, its stderr lines, the report,
the exit status) with the record of everything the run read (:mod:`rwgate.recorded`: each file
by content, each file looked for and absent, each environment variable the configuration layer
consulted, the snapshot's import id, rwgate's code, the earliest expiry), and the next run with
the same request (the cited keys, the bibliography names, the ``rwgate``/``references``/
``nocite`` metadata, the format and the working directory) replays it only when every recorded
input still holds. No list of inputs is kept here: a new setting is recorded where it is read.

It stays out of the way whenever being wrong could matter: never written for a run that was
offline, had ``unverified`` citations or source errors (so a failure is retried on the next
build), wrote or read a lockfile, or kept its look-up cache anywhere but where the memo is; not
used at all with ``RWGATE_NO_CACHE`` or ``RWGATE_NO_MEMO``; and a record expires when the
earliest look-up or allow-list entry behind it would, and within the hour in any case.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rwgate import recorded
from rwgate.config_files import memo_disabled
from rwgate.references import pandoc_ast
from rwgate.render.annotation import Annotation

if TYPE_CHECKING:
    from rwgate.pandoc.render import Mode, Shadowing

# pandoc tells a JSON filter no input file: bibliographies resolve from the working directory.
DOCUMENT = Path("(pandoc input)")
MEMO_DIR = "filter-memo"
REQUEST_LAYOUT = 2
MAX_AGE = 3600.0
RESOURCE_PATH_ENV = "RWGATE_RESOURCE_PATH"


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
    value = env.get(RESOURCE_PATH_ENV, "")
    return [Path(part) for part in value.split(os.pathsep) if part.strip()]


def memo_base(env: Mapping[str, str]) -> Path | None:
    """The cache folder the memos live in (the invoking user's: environment only), or None
    when no memo is to be used (``RWGATE_NO_MEMO``, ``RWGATE_NO_CACHE``)."""
    env = recorded.environ(env)
    if memo_disabled(env) or env.get("RWGATE_NO_CACHE") is not None:
        return None
    named = env.get("RWGATE_CACHE_DIR", "").strip()
    if named:
        return Path(named)
    from rwgate.paths import default_cache_dir

    return default_cache_dir()


def memo_file(
    ast: dict[str, Any], fmt: str, env: Mapping[str, str], keys: list[str]
) -> Path | None:
    """Where this document's verdict is remembered, or None when the memo is not to be used.
    ``keys``: :func:`pandoc_ast.cited_keys` of ``ast`` (the filter walks the document once).
    The name covers what was asked; what the answer read is in the record (module docstring)."""
    base = memo_base(env)
    if base is None or pandoc_ast.rwgate_block_malformed(ast):
        return None
    meta = ast.get("meta")
    meta = meta if isinstance(meta, dict) else {}
    request = {
        "layout": REQUEST_LAYOUT,
        "cwd": str(Path.cwd()),
        "format": fmt,
        "keys": keys,
        "all": pandoc_ast.cites_all(ast),
        "bibliography": pandoc_ast.bibliography_paths(ast),
        "references": meta.get("references"),
        "nocite": meta.get("nocite"),
        "rwgate": meta.get("rwgate"),
    }
    return recorded.memo_path(base, MEMO_DIR, request)


def load(path: Path) -> Verdict | None:
    """The remembered verdict, when every input its record names still holds."""
    from rwgate.pandoc.render import Shadowing

    data = recorded.replay(path, path.parent.parent)
    if not isinstance(data, dict):
        return None  # none, or one that no longer holds
    try:
        verdict = Verdict(**data)
        verdict.annotations = {k: Annotation(**a) for k, a in data["annotations"].items()}
        if data["shadowing"] is not None:
            verdict.shadowing = Shadowing(**data["shadowing"])
    except (ValueError, TypeError, KeyError, AttributeError):
        return None  # not one this version wrote
    return verdict


def store(path: Path, recorder: recorded.Recorder, verdict: Verdict) -> None:
    """Remember ``verdict`` with what the run read; a memo that cannot be written (or whose
    record is incomplete) only costs the next build time."""
    if recorded.remember(path, recorder, asdict(verdict), MAX_AGE, path.parent.parent):
        _prune(path.parent)


LUA_LAYOUT = 1


def lua_annotations(annotations: Mapping[str, Annotation]) -> dict[str, dict[str, str | None]]:
    """The notices as the Lua filter places them: text, status, and the notice DOI with the link
    rw-filter would give it (escaped as :func:`rwgate.doi.url` escapes it)."""
    from rwgate.doi import url

    return {
        key: {
            "status": a.status,
            "text": a.text,
            "notice_doi": a.notice_doi,
            "url": url(a.notice_doi) if a.notice_doi else None,
        }
        for key, a in annotations.items()
    }


def store_for_lua(path: Path, recorder: recorded.Recorder, verdict: Verdict) -> None:
    """The verdict in the shape the Lua filter (``_extensions/rwgate/rwgate.lua``) replays
    without starting Python, at the path it named, with the run's record: the Lua filter
    re-checks every recorded input itself (it keeps no list of its own).

    It only replays what it can place itself: a failed gate (its lines and exit status) or
    annotations of rendered entries. Anything else (shadow .bib files, citation markers, a
    report to write) is not written, so the Lua filter calls rw-filter again.
    """
    if verdict.report_path is not None or verdict.inline:
        return
    if verdict.exit_code == 0 and verdict.annotations and verdict.mode != "entries":
        return
    payload = {
        "layout": LUA_LAYOUT,
        "exit_code": verdict.exit_code,
        "lines": verdict.lines,
        "annotations": lua_annotations(verdict.annotations),
    }
    cache = memo_base(os.environ)
    if cache is not None and recorded.remember(path, recorder, payload, MAX_AGE, cache):
        _prune(path.parent)


def _prune(folder: Path) -> None:
    """Drop entries past any possible expiry (each change of the inputs leaves one behind)."""
    from rwgate.fsutil import prune_older

    prune_older(folder, MAX_AGE)
