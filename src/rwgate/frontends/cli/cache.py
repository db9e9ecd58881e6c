"""``rwgate cache``: what rwgate remembers, and ``rwgate cache clear`` to forget it.

The invoking user's cache folder holds the **look-up cache** (``json/``: service answers, each
with its TTL) and the **memos** (:data:`MEMOS`), each replayed only when every input it recorded
still holds (:mod:`rwgate.settings.recorded`). A user who suspects a stale verdict runs ``rwgate
cache clear --memos-only`` (nothing is fetched again) or sets ``RWGATE_NO_MEMO=1``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rwgate.settings.files import memo_disabled
from rwgate.settings.recorded import CODE_CACHE

LOOKUP = ("json", "look-up cache (service answers)")
MEMOS = (
    ("filter-memo", "verdict memos: pandoc filter"),
    ("latex-memo", "verdict memos: rw-latexmk"),
    ("latex-pass", "verdict memos: later passes of one rw-latexmk build"),
    ("parsed", "parsed bibliographies"),
    (CODE_CACHE, "rwgate's code identity"),
)


@dataclass
class Usage:
    """One remembered thing: files, bytes, the oldest and newest change."""

    name: str
    title: str
    files: int = 0
    size: int = 0
    oldest: float | None = None
    newest: float | None = None


def usage(base: Path, name: str, title: str) -> Usage:
    """What ``base/name`` (a folder or a file) holds."""
    found = Usage(name, title)
    target = base / name
    paths = [target] if target.is_file() else [p for p in target.rglob("*") if p.is_file()]
    for path in paths:
        with contextlib.suppress(OSError):
            info = path.stat()
            found.files += 1
            found.size += info.st_size
            found.oldest = min(found.oldest or info.st_mtime, info.st_mtime)
            found.newest = max(found.newest or info.st_mtime, info.st_mtime)
    return found


def _when(stamp: float | None) -> str:
    return "-" if stamp is None else dt.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


def _size(count: int) -> str:
    value = float(count)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{count} B"  # pragma: no cover


def _cache_dir(args: argparse.Namespace) -> Path:
    """The folder a check run by this user would use (flags, environment, user config)."""
    from rwgate.settings.config import load_settings

    overrides = {"cache_dir": args.cache_dir} if args.cache_dir else None
    return load_settings(overrides=overrides).cache_folder


def run_show(args: argparse.Namespace) -> int:
    base = _cache_dir(args)
    print(f"rwgate cache: {base}")
    rows = [usage(base, *LOOKUP), *(usage(base, *memo) for memo in MEMOS)]
    width = max(len(r.title) for r in rows)
    for row in rows:
        print(
            f"  {row.title:<{width}}  {row.name + ('' if row.name.endswith('.json') else '/'):<13}"
            f"  {row.files:>6} files  {_size(row.size):>9}"
            f"  oldest {_when(row.oldest)}  newest {_when(row.newest)}"
        )
    print(
        "memos are OFF (RWGATE_NO_MEMO)"
        if memo_disabled()
        else "memos replay only when every input they recorded still holds; RWGATE_NO_MEMO=1"
        " turns them off, `rwgate cache clear --memos-only` forgets them"
    )
    return 0


def run_clear(args: argparse.Namespace) -> int:
    base = _cache_dir(args)
    names = [name for name, _ in MEMOS] + ([] if args.memos_only else [LOOKUP[0]])
    freed = 0
    for name in names:
        freed += usage(base, name, name).size
        target = base / name
        with contextlib.suppress(FileNotFoundError):
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink()
    what = "memos" if args.memos_only else "memos and look-up cache"
    print(f"rwgate cache: cleared {what} in {base} ({_size(freed)})")
    return 0


def add_cache_command(sub: Any) -> None:
    """``rwgate cache [--cache-dir DIR]`` and ``rwgate cache clear [--memos-only]``."""
    cache = sub.add_parser(
        "cache",
        help="show or clear what rwgate remembers (memos, look-ups)",
        description="Show where rwgate keeps remembered verdicts (memos) and upstream look-ups, "
        "and how much; 'rwgate cache clear' forgets them.",
    )
    cache.add_argument("--cache-dir", type=Path, help="the cache folder (default: as a check)")
    cache.set_defaults(func=run_show)
    actions = cache.add_subparsers(dest="cache_action")
    clear = actions.add_parser("clear", help="forget memos and (unless --memos-only) look-ups")
    clear.add_argument(
        "--memos-only", action="store_true", help="keep the look-up cache; forget every memo"
    )
    clear.add_argument("--cache-dir", type=Path, default=argparse.SUPPRESS)
    clear.set_defaults(func=run_clear)
