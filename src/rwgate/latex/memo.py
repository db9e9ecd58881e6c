"""The rebuild memo: an ``rw-latexmk`` rebuild whose bibliography inputs did not change replays
the last gate without starting the integrity core.

After every edit of the prose an author rebuilds; latexmk then has little or nothing to do, yet
the gate after it would load the models, the cache and the readers to reach the verdict it gave
last time. So after a full gate that passed, ``rw-latexmk`` remembers what it printed under a key
over everything the verdict depends on, and the next build with the same key replays it:

- **the key** (the entry's file name): the ``.tex`` file, the working directory, rw-latexmk's and
  latexmk's options, the ``RWGATE_*`` environment, the project's and the user's configuration
  files (their bytes) and rwgate's version;
- **checked on use**: the directories latexmk reported, the cite and ``\\bibdata`` lines of the
  ``.aux`` tree (or the ``.bcf``), the names of the ``.aux`` files beside it (a new multibib or
  bibunits list), the bytes of every ``.bib``, ``.bbl`` and secondary ``.aux`` judged, and the
  snapshot's size and mtime.

It stays out of the way whenever being wrong could matter. It is never written for a gate that
failed, an offline run, a run with ``unverified`` works, source errors or input problems, a
``report``/``lock``/``since`` setting (files to write or read), DOI recovery, a project
``$success_cmd``, or a latexmk failure; not used with ``--no-cache`` or when a configuration
file names the cache. An entry expires when the earliest look-up behind it would, and within the
hour in any case, so a retraction published since is seen as soon as the look-up cache sees it.

Only the standard library and rwgate's light helpers are imported here.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple

from rwgate import __version__
from rwgate.config_files import (
    ConfigError,
    locate_config,
    user_config_path,
    verdict_environment,
)
from rwgate.paths import default_cache_dir, default_snapshot_path

from .reuse import inputs_key

LAYOUT = 1
MEMO_DIR = "latex-memo"
MAX_AGE = 3600.0
# Settings that make a gate write or read files beyond the build, or reach the network on its own.
_NO_MEMO = ("no_cache", "cache_dir", "report", "lock", "since", "recover_dois")
_NO_MEMO_ENV = ("RWGATE_NO_CACHE", "RWGATE_REPORT", "RWGATE_LOCK", "RWGATE_SINCE")
_NO_MEMO_FLAGS = ("--no-cache", "--cache-dir", "--recover-dois")


class Texts(NamedTuple):
    """The gate's report as printed: plain, and coloured for a terminal."""

    plain: str
    coloured: str


@dataclass
class Entry:
    """What a passing gate printed, and everything it was computed from."""

    text: str
    coloured: str
    expires: float
    dirs: str
    aux: str
    bcf: str | None
    inputs: dict[str, str | None]
    aux_names: list[str]
    files: dict[str, str]
    snapshot: list[object] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    """``NAME.pdf.rejected`` and the like: a passing gate leaves none from an earlier failure."""
    layout: int = LAYOUT

    def replay(self, colour: bool) -> int:
        """What the gate did: its report on stderr, stale rejected outputs removed; exit 0."""
        for name in self.rejected:
            with contextlib.suppress(OSError):
                os.unlink(name)
        sys.stderr.write(self.coloured if colour else self.text)
        return 0


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _names(raw: bytes) -> bool:
    return any(name.encode() in raw or name.replace("_", "-").encode() in raw for name in _NO_MEMO)


def memo_file(
    tex: Path, own: Sequence[str], latexmk_args: Sequence[str], env: Mapping[str, str]
) -> Path | None:
    """Where this build's gate is remembered; None when the memo is not to be used."""
    if any(a.split("=", 1)[0] in _NO_MEMO_FLAGS for a in own) or any(
        e in env for e in _NO_MEMO_ENV
    ):
        return None
    try:
        found = locate_config(tex)
    except (ConfigError, OSError):
        return None  # the full run reports it
    config = None
    if found is not None:
        path, raw, _ = found
        if _names(raw):
            return None
        config = [str(path), hashlib.sha256(raw).hexdigest()]
    user = user_config_path(env)
    user_config = None
    with contextlib.suppress(OSError):
        raw = user.read_bytes()
        if _names(raw):
            return None
        user_config = [str(user), hashlib.sha256(raw).hexdigest()]
    material = {
        "layout": LAYOUT,
        "version": __version__,
        "tex": str(tex.resolve()),
        "cwd": str(Path.cwd()),
        "own": list(own),
        "latexmk": list(latexmk_args),
        "env": verdict_environment(env),
        "config": config,
        "user_config": user_config,
        "snapshot": str(default_snapshot_path()),  # where it is by default moves with XDG_DATA_HOME
    }
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    key = hashlib.sha256(text.encode("utf-8")).hexdigest()
    base = env.get("RWGATE_CACHE_DIR", "").strip() or str(default_cache_dir())
    return Path(base) / MEMO_DIR / f"{key}.json"


def load(path: Path) -> Entry | None:
    """The remembered gate, if there is one not expired."""
    try:
        entry = Entry(**json.loads(path.read_bytes()))
    except (OSError, ValueError, TypeError):
        return None  # none yet, or not one this version wrote
    if entry.layout != LAYOUT or entry.expires <= time.time():
        return None
    return entry


def _aux_names(aux: Path) -> list[str]:
    return sorted(p.name for p in aux.parent.glob("*.aux"))


def _stamp(path: str) -> list[object]:
    try:
        stat = Path(path).stat()
    except OSError:
        return [path, None]
    return [path, [stat.st_size, stat.st_mtime_ns]]


def still_true(entry: Entry, dirs: str) -> bool:
    """Whether every input of the remembered gate is as it was (so its verdict would be too)."""
    try:
        aux, bcf = Path(entry.aux), Path(entry.bcf) if entry.bcf else None
        return (
            entry.dirs == dirs
            and entry.inputs.get("bibtex") == (inputs_key("bibtex", aux) if aux.is_file() else None)
            and entry.inputs.get("biber") == (inputs_key("biber", bcf) if bcf else None)
            and entry.aux_names == _aux_names(aux)
            and all(_sha256(Path(name)) == digest for name, digest in entry.files.items())
            and (not entry.snapshot or _stamp(str(entry.snapshot[0])) == entry.snapshot)
        )
    except OSError:
        return False


def remember(
    path: Path,
    texts: Texts,
    expires: float,
    dirs: str,
    aux: Path,
    files: Sequence[Path],
    snapshot: str | None,
    rejected: Sequence[Path] = (),
) -> None:
    """Write the entry for a passing gate; a memo that cannot be written only costs time."""
    bcf = aux.with_suffix(".bcf")
    try:
        entry = Entry(
            text=texts.plain,
            coloured=texts.coloured,
            expires=expires,
            dirs=dirs,
            aux=str(aux),
            bcf=str(bcf) if bcf.is_file() else None,
            inputs={
                "bibtex": inputs_key("bibtex", aux) if aux.is_file() else None,
                "biber": inputs_key("biber", bcf) if bcf.is_file() else None,
            },
            aux_names=_aux_names(aux),
            files={str(f): _sha256(f) for f in dict.fromkeys(files)},
            snapshot=_stamp(snapshot) if snapshot else [],
            rejected=[str(r) for r in rejected],
        )
        from rwgate.fsutil import write_atomic

        write_atomic(path, json.dumps(asdict(entry), ensure_ascii=False))
        _prune(path.parent)
    except OSError:
        pass


def _prune(folder: Path) -> None:
    """Drop entries past any possible expiry (each change of the inputs leaves one behind)."""
    from rwgate.fsutil import prune_older

    prune_older(folder, MAX_AGE)


def forget(path: Path | None) -> None:
    """Drop the entry (a gate that failed or could not be remembered)."""
    if path is not None:
        with contextlib.suppress(OSError):
            os.unlink(path)
