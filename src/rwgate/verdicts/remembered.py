"""The remembered verdict: the one rule of what may be remembered, and the one door to a memo.

Every front end that remembers its verdict (rw-filter and the Lua filter, rw-latexmk) asks this
module, so that they cannot disagree. :func:`refusal` is the rule: the first of :data:`REASONS`
that holds. A :class:`Door` is one request's memo in the invoking user's cache folder, its record
re-checked by :mod:`rwgate.settings.recorded`; :func:`through` is the whole operation.

Standard library only: a memo hit must not load Pydantic or the integrity core.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rwgate.settings import recorded
from rwgate.settings.files import memo_disabled

if TYPE_CHECKING:
    from rwgate.settings.config import Settings
    from rwgate.verdicts.result import CheckResult

T = TypeVar("T")
MAX_AGE = 3600.0
"""No verdict is replayed more than an hour after it was reached, whatever its look-ups say."""

REASONS: dict[str, str] = {
    "memo_off": "memos are off (--no-memo, RWGATE_NO_MEMO)",
    "no_cache": "no look-up cache (--no-cache, RWGATE_NO_CACHE)",
    "cache_elsewhere": "the look-up cache is not where the memo is: its answers are unrecorded",
    "offline": "offline: the next build, maybe online, judges again",
    "incomplete": "a source could not answer, or the cache could not be used",
    "unverified": "a work is unverified (retried next time)",
    "recovery": "DOI recovery: its title searches are not in the record",
    "lockfile": "a lockfile is written or read (lock, since): an effect a payload cannot replay",
    "report": "a report file is written, and this front end does not replay one",
    "failed": "the gate failed, and this front end does not replay a failure",
    "problems": "the gate said it could not read an input, or leaves one as it is",
    "build_failed": "the build tool failed: the gate did not see a finished build",
    "success_cmd": "the project's $success_cmd: an effect a payload cannot replay",
}
"""Every reason a run is not remembered (tests/e2e/test_memo_matrix.py: a row per front end)."""


def refusal(
    settings: Settings,
    result: CheckResult | None,
    base: Path | None,
    *,
    replays_failure: bool,
    replays_report: bool,
    effects: Iterable[str] = (),
) -> str | None:
    """The first of :data:`REASONS` that forbids remembering this run, or None.

    ``base``: the memo folder (:func:`memo_base`; None: memos off). ``result``: None for a run
    that judged nothing. ``effects``: reasons the front end saw itself (``build_failed``...).

    ``replays_failure``: rw-filter replays a failing verdict (its ``ERROR`` lines and exit
    status: pandoc writes nothing either way); rw-latexmk does not, because a failing gate
    renames the PDF, which a rebuild must do again on the fresh one. ``replays_report``:
    rw-filter keeps the report's text and writes it again; rw-latexmk keeps only what it printed.
    """
    reasons = {effect: True for effect in effects}
    reasons |= {
        "memo_off": base is None or settings.no_memo,
        "no_cache": settings.no_cache,
        "cache_elsewhere": base != settings.cache_folder,
        "offline": settings.offline,
        "recovery": settings.recover_dois,
        "lockfile": settings.lock is not None or settings.since is not None,
        "report": settings.report is not None and not replays_report,
    }
    if result is not None:
        reasons["incomplete"] = not result.complete
        reasons["unverified"] = any(c.status == "unverified" for c in result.citations)
        reasons["failed"] = result.exit_code != 0 and not replays_failure
    return next((key for key in REASONS if reasons.get(key)), None)


def memo_base(env: Mapping[str, str], refused: bool = False) -> Path | None:
    """The cache folder memos live in (the invoking user's environment and flags, never a
    document's), or None when none is to be used (``refused``: a flag said so)."""
    env = recorded.environ(env)
    if refused or memo_disabled(env) or env.get("RWGATE_NO_CACHE") is not None:
        return None
    named = env.get("RWGATE_CACHE_DIR", "").strip()
    if named:
        return Path(named)
    from rwgate.settings.paths import default_cache_dir

    return default_cache_dir()


@dataclass(frozen=True)
class Door:
    """One request's memo (``path``), the cache folder its record's checks use, and the
    functions for the record's ``derived`` kinds (:func:`rwgate.settings.recorded.note_derived`)."""

    path: Path
    base: Path
    checks: Mapping[str, recorded.Check] = field(default_factory=dict)

    def holds(self, record: Mapping[str, Any], more: Mapping[str, recorded.Check]) -> bool:
        """Whether ``record`` still holds (``more``: checks known only now, after a build)."""
        return recorded.still_true(record, self.base, {**self.checks, **more})

    def keep(self, run: recorded.Recorder, payload: Any) -> bool:
        """Remember ``payload`` with ``run``'s record (never an incomplete one); pruned."""
        return recorded.remember(self.path, run, payload, MAX_AGE, self.base)

    def forget(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.path)


def door(
    base: Path | None,
    folder: str,
    request: Any,
    checks: Mapping[str, recorded.Check] | None = None,
) -> Door | None:
    """The door to ``request``'s memo (None: memos off). The name covers what was asked; what
    the answer read is the record's business."""
    if base is None:
        return None
    return Door(recorded.memo_path(base, folder, request), base, checks or {})


def through(
    entry: Door | None,
    replay: Callable[[Any], T | None],
    run: Callable[[], tuple[T, Any | None]],
    then: Callable[[recorded.Recorder, Any], None] | None = None,
) -> T:
    """Find the memo, re-check its record and ``replay`` its payload (which may decline: None);
    else ``run`` under recording and keep the payload it returns (None: :func:`refusal` said
    no). ``then`` gets the record and payload of either (the Lua filter's copy)."""
    if entry is not None:
        with recorded.recording() as hit:
            payload = recorded.replay(entry.path, entry.base, entry.checks)
            done = replay(payload) if payload is not None else None
        if done is not None:
            if then is not None:
                then(hit, payload)
            return done
    with recorded.recording() as ran:
        out, payload = run()
    if payload is not None:
        if entry is not None:
            entry.keep(ran, payload)
        if then is not None:
            then(ran, payload)
    return out
