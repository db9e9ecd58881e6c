"""The verdict table built once per snapshot, kept in the invoking user's cache folder.

Judging every work of a full Retraction Watch export through :func:`rwgate.core.check` takes
seconds to minutes; a screen of a small table would spend most of its time there, and a screen
on many cores would not get faster where it starts. So the table is built once per snapshot and
kept, as Parquet, in ``<cache folder>/screen-verdicts/`` (``Settings.cache_folder``: the invoking
user's, never beside the snapshot, the document or the references).

Correct by construction, as the memos are (:mod:`rwgate.settings.recorded`):

- the entry's name covers what is asked: the snapshot's import id (its content's identity, a
  new one on every import that changes it, never its size or mtime), rwgate's code identity
  (the rules the table is judged by, and this module's layout), and :data:`LAYOUT`;
- the build runs under a :class:`~rwgate.settings.recorded.Recorder`, so everything it read is in
the
  entry's record (the snapshot and its id, each environment variable and file consulted, the
  code, the moment a part of the verdict stops holding); an entry is used only when every one
  of them still holds, and an incomplete record (a snapshot without an import id) is never kept;
- the policy does not shape the table: it is judged by ``rwgate check``'s default rules, with
  the snapshot as its only source (:func:`rwgate.frontends.screen.verdicts.build`), whatever the
  user's
  configuration says.

Files are written atomically (:mod:`rwgate.fsutil`): the Parquet file under a name that carries
its content's digest, then the record naming it. An entry not used for :data:`MAX_IDLE` goes.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

from rwgate.frontends.screen.verdicts import Verdicts
from rwgate.settings import recorded

FOLDER = "screen-verdicts"
LAYOUT = 1
"""The entry's layout (the payload's keys, the Parquet file's columns)."""
MAX_IDLE = 30 * 86400.0


def _entry(cache: Path, ident: str) -> Path:
    request = {"layout": LAYOUT, "snapshot_id": ident, "code_id": recorded.code_id(cache)}
    return recorded.memo_path(cache, FOLDER, request)


def _from_payload(payload: Any, folder: Path, snapshot: Path) -> Verdicts | None:
    """The table a kept payload names, or None when it is not this layout or its file is gone."""
    if not isinstance(payload, dict) or payload.get("layout") != LAYOUT:
        return None
    file = folder / str(payload["file"])
    if not file.is_file():
        return None
    with contextlib.suppress(OSError):
        os.utime(file)  # used: not pruned while in use
    as_of = payload["as_of"]
    return Verdicts(
        snapshot,
        None if as_of is None else dt.date.fromisoformat(as_of),
        bool(payload["full_export"]),
        payload["export_rows"],
        file=file,
        count=int(payload["count"]),
    )


def _keep(tmp: Path, folder: Path) -> Path:
    """The Parquet file ``tmp`` in ``folder``, named by its digest, written atomically (a file
    of that name holds the same bytes already: it is only marked used)."""
    from rwgate.fsutil import write_atomic_with

    with tmp.open("rb") as handle:
        sha = hashlib.file_digest(handle, "sha1").hexdigest()
    file = folder / f"{sha}.parquet"
    if file.is_file():
        os.utime(file)
    else:
        with tmp.open("rb") as source:
            write_atomic_with(file, lambda out: shutil.copyfileobj(source, out))
    return file


def _build(snapshot: Path, scratch: Path, folder: Path | None) -> tuple[Verdicts, Any]:
    """Judge the snapshot's works (recording what was read); the table and the record."""
    from rwgate.frontends.screen.verdicts import build, write_parquet

    with recorded.recording() as run:
        built = build(snapshot)
    file = scratch / "verdicts.parquet"
    write_parquet(built, file, names=True)
    if folder is not None:
        file = _keep(file, folder)
    table = Verdicts(
        snapshot,
        built.as_of,
        built.full_export,
        built.export_rows,
        file=file,
        count=len(built.rows),
    )
    return table, run


def verdicts(snapshot: Path, cache: Path | None, scratch: Path) -> Verdicts:
    """The verdict table of ``snapshot``: kept in ``cache`` (None: built in ``scratch``, a
    folder that lives as long as the screen) and reused while its record holds.

    Raises :class:`~rwgate.sources.snapshot.source.SnapshotError` when there is no usable
    snapshot."""
    ident = recorded.snapshot_id(snapshot)
    if cache is None or not ident:  # no file (build says so), or no id: nothing to key by
        return _build(snapshot, scratch, None)[0]
    entry = _entry(cache, ident)
    folder = entry.parent
    kept = _from_payload(recorded.replay(entry, cache), folder, snapshot)
    if kept is not None:
        return kept
    table, run = _build(snapshot, scratch, folder)
    payload = {
        "layout": LAYOUT,
        "file": table.file.name,
        "as_of": table.as_of.isoformat() if table.as_of else None,
        "full_export": table.full_export,
        "export_rows": table.export_rows,
        "count": table.count,
    }
    if recorded.remember(entry, run, payload, MAX_IDLE, cache):
        from rwgate.fsutil import prune_older

        prune_older(folder, MAX_IDLE, "*.parquet")
    return table
