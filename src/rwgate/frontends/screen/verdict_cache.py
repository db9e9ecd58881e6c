"""The verdict table built once per snapshot, kept in the invoking user's cache folder.

Judging every work of a full export through :func:`rwgate.core.check` takes seconds to minutes,
so the table is kept as Parquet in ``<cache folder>/screen-verdicts/`` (the invoking user's,
never beside the snapshot or the references). Correct by construction, as the memos of
:mod:`rwgate.settings.recorded` are: the entry's name covers the snapshot's import id, rwgate's
code identity and :data:`LAYOUT`; the build runs under a recorder, and an entry is used only
while everything it read still holds. The policy does not shape the table (it is judged by
check's default rules, the snapshot its only source). An entry not used for :data:`MAX_IDLE` goes.
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


def _from_payload(payload: Any, folder: Path, snapshot: Path) -> Verdicts | None:
    """The table a kept payload names, or None when it is not this layout or its file is gone."""
    if not isinstance(payload, dict) or payload.get("layout") != LAYOUT:
        return None
    file = folder / str(payload["file"])
    if not file.is_file():
        return None
    with contextlib.suppress(OSError):
        os.utime(file)  # used: not pruned while in use
    as_of = None if payload["as_of"] is None else dt.date.fromisoformat(payload["as_of"])
    full, rows, count = bool(payload["full_export"]), payload["export_rows"], int(payload["count"])
    return Verdicts(snapshot, as_of, full, rows, file, count)


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
    count = len(built.rows)
    return Verdicts(snapshot, built.as_of, built.full_export, built.export_rows, file, count), run


def verdicts(snapshot: Path, cache: Path | None, scratch: Path) -> Verdicts:
    """The verdict table of ``snapshot``: kept in ``cache`` (None: built in ``scratch``, a
    folder that lives as long as the screen) and reused while its record holds.

    Raises :class:`~rwgate.sources.snapshot.source.SnapshotError` when there is no usable
    snapshot."""
    ident = recorded.snapshot_id(snapshot)
    if cache is None or not ident:  # no file (build says so), or no id: nothing to key by
        return _build(snapshot, scratch, None)[0]
    request = {"layout": LAYOUT, "snapshot_id": ident, "code_id": recorded.code_id(cache)}
    entry = recorded.memo_path(cache, FOLDER, request)
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
