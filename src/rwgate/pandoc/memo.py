"""The verdict memo: a rebuild whose citation inputs did not change skips the check entirely.

Authors rebuild after every prose edit; the check would give the same verdicts, yet loading the
models, the cache and the bibliography readers costs far more than the rest of the filter. So
after a full run the filter remembers its outcome (the annotations, its stderr lines, the report,
the exit status) under a key over everything that outcome depends on, and the next run with the
same key replays it. The key is computed with the standard library alone: the cited keys, the
bibliography files' bytes, inline references, the ``rwgate:`` block, the environment, the
configuration file, rwgate's version. The snapshot is checked by size and mtime on use.

It stays out of the way whenever being wrong could matter: not used at all when any layer of
configuration mentions ``no_cache`` or ``cache_dir``; never written for a run that was offline,
had ``unverified`` citations or source errors (so a failure is retried on the next build); and an
entry expires when the earliest look-up behind it would, and within the hour in any case, so
retractions published since are seen as soon as the look-up cache would see them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rwgate import __version__
from rwgate.config_files import (
    ConfigError,
    locate_config,
    user_config_path,
    verdict_environment,
)
from rwgate.references import pandoc_ast
from rwgate.references.locate import resolve_bibliography
from rwgate.render.annotation import Annotation

if TYPE_CHECKING:
    from rwgate.pandoc.render import Mode, Shadowing

# pandoc tells a JSON filter no input file: bibliographies resolve from the working directory.
DOCUMENT = Path("(pandoc input)")
MEMO_DIR = "filter-memo"
LAYOUT = 1
MAX_AGE = 3600.0
RESOURCE_PATH_ENV = "RWGATE_RESOURCE_PATH"
_CACHE_SETTINGS = frozenset({"no_cache", "cache_dir"})


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
    snapshot: str = ""
    snapshot_stamp: list[int] | None = None
    expires: float = 0.0


def resource_path(env: Mapping[str, str]) -> list[Path]:
    """``RWGATE_RESOURCE_PATH``: pandoc does not tell a filter its ``--resource-path``."""
    value = env.get(RESOURCE_PATH_ENV, "")
    return [Path(part) for part in value.split(os.pathsep) if part.strip()]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _mentions_cache(section: Any) -> bool:
    return isinstance(section, Mapping) and any(
        str(name).replace("-", "_") in _CACHE_SETTINGS for name in section
    )


def _key_material(
    ast: dict[str, Any], fmt: str, env: Mapping[str, str], keys: list[str]
) -> dict[str, Any] | None:
    """Everything the verdict depends on, or None when the memo must not be used."""
    if "RWGATE_NO_CACHE" in env or pandoc_ast.rwgate_block_malformed(ast):
        return None
    if _mentions_cache(pandoc_ast.rwgate_metadata(ast)):
        return None
    try:
        found = locate_config(Path.cwd())
    except ConfigError:
        return None  # the full run reports it
    config = None
    if found is not None:
        path, raw, section = found
        if not isinstance(section, Mapping) or _mentions_cache(section):
            return None
        config = [str(path), hashlib.sha256(raw).hexdigest()]
    user = user_config_path(env)
    user_config = None
    if user.is_file():
        raw = user.read_bytes()
        if any(name.encode() in raw for name in _CACHE_SETTINGS):
            return None  # the user's own cache choice: the full run follows it
        user_config = [str(user), hashlib.sha256(raw).hexdigest()]
    resource = resource_path(env)
    bibliographies = []
    for name in pandoc_ast.bibliography_paths(ast):
        file = resolve_bibliography(name, DOCUMENT, resource)
        bibliographies.append([name, str(file or ""), _sha256(file) if file else ""])
    meta = ast.get("meta")
    meta = meta if isinstance(meta, dict) else {}
    from rwgate.paths import default_snapshot_path

    return {
        "layout": LAYOUT,
        "version": __version__,
        "format": fmt,
        "cwd": str(Path.cwd()),
        "keys": keys,
        "all": pandoc_ast.cites_all(ast),
        "bibliography": bibliographies,
        "references": meta.get("references"),
        "rwgate": meta.get("rwgate"),
        "env": verdict_environment(env),
        "config": config,
        "user_config": user_config,
        "snapshot": str(default_snapshot_path()),
    }


def memo_file(
    ast: dict[str, Any], fmt: str, env: Mapping[str, str], keys: list[str]
) -> Path | None:
    """Where this document's verdict is remembered, or None when the memo is not to be used.
    ``keys``: :func:`pandoc_ast.cited_keys` of ``ast`` (the filter walks the document once)."""
    try:
        material = _key_material(ast, fmt, env, keys)
    except OSError:
        return None  # an unreadable bibliography or folder: the full run says which
    if material is None:
        return None
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    key = hashlib.sha256(text.encode("utf-8")).hexdigest()
    cache_dir = env.get("RWGATE_CACHE_DIR", "").strip()
    if cache_dir:
        base = Path(cache_dir)
    else:
        from rwgate.paths import default_cache_dir

        base = default_cache_dir()
    return base / MEMO_DIR / f"{key}.json"


def snapshot_stamp(path: str) -> list[int] | None:
    """Size and mtime of the snapshot file: a new snapshot changes verdicts."""
    try:
        stat = Path(path).stat()
    except OSError:
        return None
    return [stat.st_size, stat.st_mtime_ns]


def load(path: Path) -> Verdict | None:
    """The remembered verdict, if there is one that is still good."""
    from rwgate.pandoc.render import Shadowing

    try:
        data = json.loads(path.read_bytes())
        verdict = Verdict(**data)
        verdict.annotations = {k: Annotation(**a) for k, a in data["annotations"].items()}
        if data["shadowing"] is not None:
            verdict.shadowing = Shadowing(**data["shadowing"])
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None  # none yet, or not one this version wrote: run the check
    if verdict.expires <= time.time() or snapshot_stamp(verdict.snapshot) != verdict.snapshot_stamp:
        return None
    return verdict


def store(path: Path, verdict: Verdict) -> None:
    """Remember ``verdict``; a memo that cannot be written only costs the next build time."""
    from rwgate.fsutil import write_atomic

    try:
        write_atomic(path, json.dumps(asdict(verdict), ensure_ascii=False))
        _prune(path.parent)
    except OSError:
        pass


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


def store_for_lua(path: Path, verdict: Verdict) -> None:
    """The verdict in the shape ``filters/rwgate.lua`` replays without starting Python.

    The Lua filter names ``path`` (its own key over the cited keys, bibliography bytes,
    metadata, environment and configuration files) and only replays what it can place itself:
    a failed gate (its lines and exit status) or annotations of rendered entries. Anything else
    (shadow .bib files, citation markers, a report to write) is not written, so the Lua filter
    calls rw-filter again.
    """
    if verdict.report_path is not None or verdict.inline:
        return
    if verdict.exit_code == 0 and verdict.annotations and verdict.mode != "entries":
        return
    try:
        size = Path(verdict.snapshot).stat().st_size if verdict.snapshot else None
    except OSError:
        size = None
    data = {
        "layout": LUA_LAYOUT,
        "version": __version__,
        "expires": verdict.expires,
        "exit_code": verdict.exit_code,
        "lines": verdict.lines,
        "annotations": lua_annotations(verdict.annotations),
        "snapshot": verdict.snapshot,
        "snapshot_size": size,
    }
    from rwgate.fsutil import write_atomic

    with contextlib.suppress(OSError):
        write_atomic(path, json.dumps(data, ensure_ascii=False))
        _prune(path.parent)


def _prune(folder: Path) -> None:
    """Drop entries past any possible expiry (each change of the inputs leaves one behind)."""
    from rwgate.fsutil import prune_older

    prune_older(folder, MAX_AGE)
