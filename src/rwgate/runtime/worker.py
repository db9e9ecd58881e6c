"""The resident worker: ``python -P -m rwgate.runtime.worker SOCKET`` (started by
:mod:`rwgate.runtime.resident`).

It imports what ``rw-filter`` and the LaTeX hooks need once, then serves runs on a Unix socket:
each connection from this user is ``fork``ed into a keeper (:mod:`rwgate.runtime.keeper`), which
runs it exactly as a fresh process would. The parent never runs a request itself, so no state
passes from one run to the next: each starts from the state of a fresh import.

Lifetime: one worker per socket (a lock file beside it); it exits after ``RWGATE_RESIDENT_IDLE``
seconds without a run (default 900), and within a few seconds when its socket is removed or taken
over, or when rwgate's files change (the identity in the socket's name no longer holds).
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import importlib
import os
import signal
import socket
import sys
import time
from pathlib import Path

from rwgate.runtime import keeper, resident

TICK = 2.0  # seconds between looks at the socket and the code
DEFAULT_IDLE = 900.0
# Imported before serving: everything a filter or hook run loads on its common paths.
WARM = (
    "rwgate.frontends.cli.main",
    "rwgate.frontends.pandoc.filter",
    "rwgate.frontends.pandoc.render",
    "rwgate.frontends.pandoc.shadowbib",
    "rwgate.frontends.pandoc.lua",
    "rwgate.readers.manuscripts.manuscript",
    "rwgate.readers.bibliographies.registry",
    "rwgate.readers.bibliographies.bibtex",
    "rwgate.readers.bibliographies.csl",
    "rwgate.readers.bibliographies.parsed",
    "rwgate.frontends.kit",
    "rwgate.core",
    "rwgate.settings.config",
    "rwgate.sources",
    "rwgate.sources.cache",
    "rwgate.sources.crossref",
    "rwgate.sources.snapshot.source",
    "rwgate.render.annotate",
    "rwgate.render.report",
    "rwgate.frontends.latex.hooks",
    "rwgate.frontends.latex.verdict",
    "rwgate.frontends.latex.latexmk",
    "rwgate.frontends.latex.gate",
    "rwgate.readers.join",
    "panflute",
    "httpx",
    "diskcache",
    "platformdirs",
    "ctypes",  # the keeper's prctl
    "resource",  # the keeper takes the client's limits
)


def _idle_limit() -> float:
    try:
        return max(1.0, float(os.environ.get(resident.ENV_IDLE, DEFAULT_IDLE)))
    except ValueError:
        return DEFAULT_IDLE


def serve(path: Path) -> int:
    """Serve runs on ``path`` until idle; 0 also when another worker already serves it."""
    lock = open(resident.lock_path(str(path)), "a")  # noqa: SIM115 (held for the process's life)
    os.utime(lock.fileno())  # a start: clients start no other for a while (resident.START_EVERY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0
    key = path.stem
    folder = resident.socket_folder(os.environ)
    if resident.identity(os.environ) != key or folder is None or Path(folder) != path.parent:
        return 0  # started for other code or another place: never serve under a wrong name
    _prune(path.parent, path.stem)
    signal.signal(signal.SIGTERM, _leave)  # a kill removes the socket too (see finally)
    for name in WARM:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    _warm_heap()
    # What the imports made is never collected: a run's collector then leaves those pages alone,
    # so a fork does not copy them (copy-on-write) the first time it collects.
    gc.collect()
    gc.freeze()
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    os.chmod(path, 0o600)
    listener.listen(32)
    listener.settimeout(TICK)
    inode = os.stat(path).st_ino
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # runs are reaped by the kernel
    idle, last = _idle_limit(), time.monotonic()
    try:
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                if time.monotonic() - last > idle or not _still_ours(path, inode, key):
                    return 0
                continue
            last = time.monotonic()
            if keeper.peer(conn)[1] != os.getuid():  # a socket in a 0700 folder: a second guard
                conn.close()
                continue
            if os.fork() == 0:
                try:  # the child never leaves through serve's finally (the socket is the parent's)
                    listener.close()
                    lock.close()
                    keeper.keep(conn)
                finally:
                    os._exit(0)
            conn.close()
    finally:
        if _still_ours(path, inode, None):
            with contextlib.suppress(OSError):
                path.unlink()


def _warm_heap() -> None:
    """Decode a document-sized pandoc AST once and let it go: the allocator keeps the memory, so
    a run's first decode of its document (forked from here) does not grow the heap (~15 ms)."""
    import json

    para = [{"t": "Str", "c": "word"}, {"t": "Space"}] * 20
    blocks = [{"t": "Para", "c": para} for _ in range(250)]
    text = json.dumps({"pandoc-api-version": [1, 23, 1], "meta": {}, "blocks": blocks})
    for _ in range(2):
        json.loads(text)


def _leave(_signum: int, _frame: object) -> None:
    raise SystemExit(0)


def _prune(folder: Path, own: str) -> None:
    """Remove what workers of other code left (a socket, a lock) once nothing holds their lock:
    each edit or upgrade of rwgate names a new worker."""
    for lock_file in folder.glob("*.lock"):
        if lock_file.stem == own:
            continue
        try:
            with open(lock_file, "a") as held:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # no worker holds it
                if time.time() - os.fstat(held.fileno()).st_mtime < resident.START_EVERY:
                    continue  # one is starting
                with contextlib.suppress(OSError):
                    lock_file.with_suffix(".sock").unlink()
                lock_file.unlink()
        except OSError:
            continue


def _still_ours(path: Path, inode: int, key: str | None) -> bool:
    try:
        if os.stat(path).st_ino != inode:
            return False
    except OSError:
        return False
    return key is None or resident.identity(os.environ) == key


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(
            "usage: python -m rwgate.runtime.worker SOCKET (started by rwgate itself)",
            file=sys.stderr,
        )
        return 2
    return serve(Path(args[0]))


if __name__ == "__main__":
    sys.exit(main())
