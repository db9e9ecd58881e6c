"""What a run read, recorded as it read it: the promise a memo (a remembered verdict) keeps.

A memo replays an earlier verdict only while nothing it depends on has changed, and a hand-kept
list of inputs goes stale the day a new setting is added. So the layers that read inputs record
each read here, by construction: the environment through :class:`RecordingEnv` (every variable
consulted, set or not), each file read or looked for and not found (:func:`read_bytes`,
:func:`note_file`, :func:`note_missing`), the snapshot's id (:func:`note_snapshot`), and every
deadline (:func:`note_expiry`: an allow-list ``until``, a cache TTL, a snapshot going stale).
:func:`replay` re-checks every recorded input, and rwgate's own code (:func:`code_files`), before
it replays. Whatever cannot be recorded (:func:`note_unrecordable`) makes the record incomplete,
and an incomplete record is never written: fail closed.

The record is JSON, layout ``rwgate-record/1``, so that pandoc's Lua can check it too
(``pandoc.utils.sha1``, ``io.open``, ``os.getenv``)::

    {
      "layout": "rwgate-record/1",
      "files":   {"/abs/path": "<sha1 hex of its bytes>" | null},   null: looked for, absent
      "env":     {"NAME": "<value>" | null},                        null: consulted, unset
      "derived": {"<kind>\\u0000/abs/path": "<value>" | null},      Python-only checks (a reader's
                                                                    digest of part of a file); a
                                                                    checker that does not know a
                                                                    kind does not replay
      "snapshot_path": "/abs/snapshot.sqlite3" | null,              null: no snapshot consulted
      "snapshot_id": "<16 hex>" | null,                             null: no file there; the
                                                                    SQLite header's bytes 60-63
                                                                    and 68-71 (user_version,
                                                                    application_id), hex
      "code_id": "<sha1 hex>",           sha1 over, for each name in code_files in that order,
                                         name + "\\u0000" + sha1hex(bytes) + "\\n"
      "code_root": "/abs/site-packages/rwgate",
      "code_files": ["__init__.py", "cli.py", ...],   "/"-separated, relative to code_root
      "expires": 1767225600.0,           Unix seconds: no replay at or after it
      "payload": {...}                   what the front end replays (its own layout)
    }

A checker replays only when ``layout`` is known, ``expires`` is in the future, every ``files``
entry hashes the same (or is still absent), every ``env`` entry has the same value (or is still
unset), the snapshot header holds the same id, and the code hashes to ``code_id``.

Standard library only, and cheap: a memo hit must not load Pydantic or the integrity core.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

TYPE_CHECKING = False  # typing costs more to import than this module (a memo hit pays it)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Check = Callable[[str], str | None]

LAYOUT = "rwgate-record/1"
CODE_CACHE = "code-id.json"
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # rwgate/
_SKIP_DIRS = frozenset({"__pycache__"})
_SKIP_SUFFIXES = (".pyc", ".pyo")
_SQLITE_MAGIC = b"SQLite format 3\0"


def digest(data: bytes) -> str:
    """The sha1 (hex) records use for a file's bytes."""
    from _sha1 import sha1  # a small extension module: hashlib would load OpenSSL first

    return str(sha1(data).hexdigest())


class Recorder:
    """The inputs of one run so far (see the module docstring); filled by the ``note_*``
    functions while it is active (:func:`recording`)."""

    def __init__(self) -> None:
        self.files: dict[str, str | None] = {}
        self.env: dict[str, str | None] = {}
        self.derived: dict[str, str | None] = {}
        self.snapshot: tuple[str, str | None] | None = None
        self.expires: float | None = None
        self.unrecordable: list[str] = []

    @property
    def complete(self) -> bool:
        """Whether everything read was recorded (an incomplete record is never written)."""
        return not self.unrecordable

    def record(self, payload: Any, max_age: float, cache_dir: Path | None) -> dict[str, Any]:
        """The record as JSON data (module docstring), expiring within ``max_age`` seconds."""
        code_id, files = _code(cache_dir)
        cap = time.time() + max_age
        return {
            "layout": LAYOUT,
            "files": dict(sorted(self.files.items())),
            "env": dict(sorted(self.env.items())),
            "derived": dict(sorted(self.derived.items())),
            "snapshot_path": self.snapshot[0] if self.snapshot else None,
            "snapshot_id": self.snapshot[1] if self.snapshot else None,
            "code_id": code_id,
            "code_root": _PACKAGE,
            "code_files": files,
            "expires": cap if self.expires is None else min(cap, self.expires),
            "payload": payload,
        }


_active: list[Recorder] = []


@contextlib.contextmanager
def recording() -> Iterator[Recorder]:
    """Record what the code inside reads. Recorders nest: a read is noted in every active one
    (a parsed-bibliography entry records its inputs, and so does the build around it)."""
    recorder = Recorder()
    _active.append(recorder)
    try:
        yield recorder
    finally:
        _active.remove(recorder)


def current() -> Recorder | None:
    """The innermost active recorder (the run a front end is recording), if any."""
    return _active[-1] if _active else None


def note_env(name: str, value: str | None) -> None:
    """The configuration layer consulted ``name`` and found ``value`` (None: unset)."""
    for recorder in _active:
        recorder.env[name] = value


def note_file(path: str | os.PathLike[str], data: bytes | None) -> None:
    """``path`` was read and held ``data`` (None: it was looked for and not there)."""
    if not _active:
        return
    name = os.path.abspath(os.fspath(path))
    hashed = None if data is None else digest(data)
    for recorder in _active:
        recorder.files[name] = hashed


def note_missing(path: str | os.PathLike[str]) -> None:
    """``path`` was looked for and is not there: a file appearing there later invalidates."""
    note_file(path, None)


def note_derived(kind: str, path: str | os.PathLike[str], value: str | None) -> None:
    """A reader's own digest of (part of) ``path``, re-checked by the ``kind`` function passed
    to :func:`replay`: e.g. the citation lines of an ``.aux``, which change less than its bytes."""
    name = f"{kind}\0{os.path.abspath(os.fspath(path))}"
    for recorder in _active:
        recorder.derived[name] = value


def note_snapshot(path: str | os.PathLike[str], ident: str | None) -> None:
    """The snapshot consulted: its path and :func:`snapshot_id` (None: no file there). A
    snapshot without an id (written before ids existed) cannot be recorded."""
    if ident == "":
        note_unrecordable(f"{path}: the snapshot has no import id (run `rwgate data update`)")
    for recorder in _active:
        recorder.snapshot = (os.path.abspath(os.fspath(path)), ident)


def note_expiry(when: float) -> None:
    """Part of the verdict stops holding at ``when`` (Unix seconds)."""
    for recorder in _active:
        recorder.expires = when if recorder.expires is None else min(recorder.expires, when)


def note_unrecordable(why: str) -> None:
    """Something was read that a record cannot re-check: the run's record is never written."""
    for recorder in _active:
        recorder.unrecordable.append(why)


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """``path``'s bytes, recorded (a missing file is recorded as absent, then raises)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        note_missing(path)
        raise
    note_file(path, data)
    return data


def is_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a file, recorded: its bytes if so (what is there matters), absent if
    not. For a search that takes the first candidate found."""
    if os.path.isfile(path):
        if _active:
            with contextlib.suppress(OSError):
                read_bytes(path)
        return True
    note_missing(path)
    return False


class RecordingEnv(Mapping[str, str]):
    """An environment whose every look-up by name is noted (:func:`note_env`), set or not
    (``get`` and ``in`` are :class:`Mapping`'s, through ``__getitem__``).

    The configuration layer reads the environment only through this, so a variable added there
    is in every record without a change to any memo. Listing the whole environment cannot be
    re-checked name by name: it makes the record incomplete.
    """

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = os.environ if env is None else env

    def __getitem__(self, name: str) -> str:
        value = self._env.get(name)
        note_env(name, value)
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[str]:
        note_unrecordable("the whole environment was listed")
        return iter(self._env)

    def __len__(self) -> int:
        return len(self._env)


def environ(env: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """``env`` (default ``os.environ``) as a :class:`RecordingEnv` (once: no double wrapping)."""
    return env if isinstance(env, RecordingEnv) else RecordingEnv(env)


# --- identities ---------------------------------------------------------------------------


def snapshot_id(path: str | os.PathLike[str]) -> str | None:
    """The import id in the snapshot's SQLite header (``rwgate.sources.snapshot.schema`` sets it
    on every import): None when there is no file, "" when the file has none (or is not SQLite).
    A 100-byte read: no ``sqlite3``, and pandoc's Lua can read it the same way."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return ""
    if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
        return ""
    ident = (header[60:64] + header[68:72]).hex()
    return "" if ident == "0" * 16 else ident


def code_files(root: str = _PACKAGE) -> list[str]:
    """rwgate's installed files (modules, templates, data), "/"-separated, relative to ``root``,
    in code-point order; compiled caches excluded."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
        rel = os.path.relpath(folder, root)
        for name in files:
            if not name.endswith(_SKIP_SUFFIXES):
                found.append(name if rel == "." else f"{rel}/{name}".replace(os.sep, "/"))
    return sorted(found)


def _code_digest(root: str, files: list[str]) -> str:
    lines = []
    for name in files:
        with open(os.path.join(root, name), "rb") as handle:
            lines.append(f"{name}\0{digest(handle.read())}\n")
    return digest("".join(lines).encode("utf-8"))


def _stats(root: str, files: list[str]) -> str:
    parts = []
    for name in files:
        info = os.stat(os.path.join(root, name))
        parts.append(f"{name}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ino}")
    return digest("\n".join([root, *parts]).encode("utf-8"))


_code_memo: tuple[str, str, list[str]] | None = None


def _code(cache_dir: Path | None, root: str = _PACKAGE) -> tuple[str, list[str]]:
    """(code id, files). Hashing every source takes ~7 ms and stat-ing them ~1 ms, so the id is
    kept in ``cache_dir/code-id.json`` under the files' (name, size, mtime_ns, inode) list."""
    global _code_memo
    files = code_files(root)
    stats = _stats(root, files)
    if _code_memo is not None and _code_memo[0] == stats:
        return _code_memo[1], files
    cache = None if cache_dir is None else Path(cache_dir) / CODE_CACHE
    known: dict[str, Any] = {}
    if cache is not None:
        with contextlib.suppress(OSError, ValueError):
            known = json.loads(cache.read_bytes())
    code_id = known.get(stats) if isinstance(known, dict) else None
    if not isinstance(code_id, str):
        code_id = _code_digest(root, files)
        if cache is not None:
            from rwgate.fsutil import write_atomic

            with contextlib.suppress(OSError):
                write_atomic(cache, json.dumps({stats: code_id}))
    if root == _PACKAGE:
        _code_memo = (stats, code_id, files)
    return code_id, files


def code_id(cache_dir: Path | None) -> str:
    """rwgate's code identity, as a record keeps it (``code_id``): for a cache entry's name."""
    return _code(cache_dir)[0]


# --- memos --------------------------------------------------------------------------------


def memo_path(cache_dir: Path, folder: str, request: Any) -> Path:
    """Where the memo for ``request`` (what was asked: document, arguments, working directory;
    JSON data) lives. What the answer read is the record's business, not the name's."""
    text = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return Path(cache_dir) / folder / f"{digest(text.encode('utf-8'))}.json"


def remember(
    path: Path, recorder: Recorder, payload: Any, max_age: float, cache_dir: Path | None
) -> bool:
    """Write the memo (record and ``payload``) atomically when the record is complete; whether
    it was written. A memo that cannot be written only costs the next run time. The one prune
    of every store: entries in its folder past ``max_age`` go (each change of the inputs leaves
    one behind)."""
    if not recorder.complete:
        return False
    try:
        text = json.dumps(recorder.record(payload, max_age, cache_dir), ensure_ascii=False)
        from rwgate.fsutil import prune_older, write_atomic

        write_atomic(path, text.encode("utf-8"))
    except (OSError, ValueError, UnicodeError):
        return False
    prune_older(path.parent, max_age)
    return True


def load(path: Path) -> dict[str, Any] | None:
    """The record at ``path`` (not checked), or None when there is none of this layout."""
    try:
        data = json.loads(Path(path).read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("layout") == LAYOUT else None


def still_true(
    record: Mapping[str, Any],
    cache_dir: Path | None,
    checks: Mapping[str, Check] | None = None,
) -> bool:
    """Whether every input ``record`` names is as it was (module docstring: the checker's
    rules). ``checks``: the functions for its ``derived`` kinds (an unknown kind: False)."""
    try:
        if not float(record["expires"]) > time.time():
            return False
        if any(os.environ.get(name) != value for name, value in record["env"].items()):
            return False
        for name, kept in record["files"].items():
            if _digest_or_none(name) != kept:
                return False
        for key, value in record["derived"].items():
            kind, _, name = key.partition("\0")
            check = (checks or {}).get(kind)
            if check is None or check(name) != value:
                return False
        snap = record["snapshot_path"]
        if snap is not None and snapshot_id(snap) != record["snapshot_id"]:
            return False
        if record["code_root"] != _PACKAGE:
            return False
        return bool(_code(cache_dir)[0] == record["code_id"])
    except (KeyError, TypeError, ValueError, AttributeError, OSError):
        return False


def _digest_or_none(name: str) -> str | None:
    try:
        with open(name, "rb") as handle:
            return digest(handle.read())
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def replay(
    path: Path, cache_dir: Path | None, checks: Mapping[str, Check] | None = None
) -> Any | None:
    """The payload remembered at ``path`` when every recorded input still holds, else None.
    A hit is noted in any active recorder (its inputs are the outer run's inputs too), as if
    they had been read."""
    record = load(path)
    if record is None or not still_true(record, cache_dir, checks):
        return None
    for recorder in _active:
        recorder.files.update(record["files"])
        recorder.env.update(record["env"])
        recorder.derived.update(record["derived"])
        if record.get("snapshot_path") is not None:
            recorder.snapshot = (record["snapshot_path"], record["snapshot_id"])
    note_expiry(float(record["expires"]))
    return record.get("payload")
