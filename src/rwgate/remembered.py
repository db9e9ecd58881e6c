"""The remembered verdict: the one rule of what may be remembered, and the one door to a memo.

A front end that remembers its verdict (rw-filter and the Lua filter, rw-latexmk) asks two
things, and both are answered here, once, so that front ends cannot disagree:

* **may this run be remembered?** :func:`refusal` gives the first reason of :data:`REASONS` that
  holds, or None. The verdict says how long it holds and whether every source answered
  (:attr:`rwgate.result.CheckResult.expires`, ``complete``): no front end looks into the sources.
  Where rw-filter and rw-latexmk really differ, the difference is an argument of :func:`refusal`
  whose docstring says why.
* **is there one to replay?** a :class:`Door` names a request's memo in the invoking user's cache
  folder (:func:`door`) and finds, re-checks (every input the record names,
  :mod:`rwgate.recorded`), replays, or keeps; :func:`through` is the whole operation for a front
  end that can judge and replay in one call.

Standard library only: a memo hit must not load Pydantic or the integrity core.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rwgate import recorded
from rwgate.config_files import memo_disabled

if TYPE_CHECKING:
    from rwgate.config import Settings
    from rwgate.result import CheckResult

T = TypeVar("T")
MAX_AGE = 3600.0
"""No verdict is replayed more than an hour after it was reached, whatever its look-ups say."""

REASONS: dict[str, str] = {
    "memo_off": "memos are off (--no-memo, RWGATE_NO_MEMO)",
    "no_cache": "no look-up cache (--no-cache, RWGATE_NO_CACHE)",
    "cache_elsewhere": "the look-up cache is kept elsewhere than the memo (the configuration "
    "chose it): the memo's record would not cover its answers",
    "offline": "offline: the cache and snapshot answered what they hold; the next build, maybe "
    "online, judges again",
    "incomplete": "a source could not answer, or the cache could not be used (retried next time)",
    "unverified": "a work is unverified (retried next time)",
    "recovery": "DOI recovery: its title searches are not in the record",
    "lockfile": "a lockfile is written or read (lock, since): an effect beyond the build that a "
    "payload cannot replay",
    "report": "a report file is written, and this front end does not replay one",
    "failed": "the gate failed, and this front end does not replay a failure",
    "problems": "the gate said it could not read or leave an input as it is",
    "build_failed": "the build tool failed: the gate did not see a finished build",
    "success_cmd": "the project's $success_cmd runs after a passing gate: an effect a payload "
    "cannot replay",
}
"""Every reason a run is not remembered, by key (the memo matrix test has one row per key and
front end)."""


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

    ``base``: the memo folder the invoking user's environment names (None: memos off).
    ``result``: None for a run that judged nothing (no citations). ``effects``: keys of
    :data:`REASONS` the front end saw itself (a build tool that failed, a ``$success_cmd``).

    ``replays_failure``: rw-filter replays a failing verdict (its ``ERROR`` lines and exit
    status: pandoc writes no output either way, and nothing else happened); rw-latexmk does not,
    because a failing gate renames the PDF, and a rebuild must do that again on the fresh one.
    ``replays_report``: rw-filter keeps the report's text in its payload and writes it again;
    rw-latexmk keeps only what it printed, so a run that writes a report is judged again.
    """
    seen = [e for e in effects if e in REASONS]
    reasons = {
        "memo_off": base is None or settings.no_memo,
        "no_cache": settings.no_cache,
        "cache_elsewhere": base is not None and _cache_dir(settings) != base,
        "offline": settings.offline,
        "recovery": settings.recover_dois,
        "lockfile": settings.lock is not None or settings.since is not None,
        "report": settings.report is not None and not replays_report,
        **{effect: True for effect in seen},
    }
    if result is not None:
        reasons["incomplete"] = not result.complete
        reasons["unverified"] = any(c.status == "unverified" for c in result.citations)
        reasons["failed"] = result.exit_code != 0 and not replays_failure
    return next((key for key in REASONS if reasons.get(key)), None)


def _cache_dir(settings: Settings) -> Path:
    from rwgate.paths import default_cache_dir

    return Path(settings.cache_dir or default_cache_dir())


def memo_base(env: Mapping[str, str], refused: bool = False) -> Path | None:
    """The cache folder memos live in (the invoking user's: environment and flags only, never a
    document), or None when none is to be used (``refused``: a flag said so; ``RWGATE_NO_MEMO``;
    ``RWGATE_NO_CACHE``). Every variable read is recorded."""
    env = recorded.environ(env)
    if refused or memo_disabled(env) or env.get("RWGATE_NO_CACHE") is not None:
        return None
    named = env.get("RWGATE_CACHE_DIR", "").strip()
    if named:
        return Path(named)
    from rwgate.paths import default_cache_dir

    return default_cache_dir()


@dataclass(frozen=True)
class Door:
    """One request's memo: where it lives, and the cache folder its record's checks use."""

    path: Path
    base: Path
    max_age: float = MAX_AGE

    def load(self) -> dict[str, Any] | None:
        """The record, not yet re-checked (for a front end that must run first: latexmk)."""
        return recorded.load(self.path)

    def holds(self, record: Mapping[str, Any], checks: Mapping[str, recorded.Check] | None) -> bool:
        """Whether every input ``record`` names is as it was (``checks``: derived kinds)."""
        return recorded.still_true(record, self.base, checks)

    def find(self, checks: Mapping[str, recorded.Check] | None = None) -> Any | None:
        """The payload when every recorded input still holds (noted in the run around)."""
        return recorded.replay(self.path, self.base, checks)

    def keep(self, run: recorded.Recorder, payload: Any) -> bool:
        """Remember ``payload`` with ``run``'s record (never an incomplete one); pruned."""
        return recorded.remember(self.path, run, payload, self.max_age, self.base)

    def forget(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.path)


def door(base: Path | None, folder: str, request: Any) -> Door | None:
    """The door to ``request``'s memo in ``base/folder`` (None: memos off). The name covers what
    was asked; what the answer read is the record's business."""
    if base is None:
        return None
    return Door(recorded.memo_path(base, folder, request), base)


def through(
    entry: Door | None,
    replay: Callable[[Any], T | None],
    run: Callable[[], tuple[T, Any | None]],
    then: Callable[[recorded.Recorder, Any], None] | None = None,
) -> T:
    """The one operation: find the memo, re-check its record and ``replay`` its payload (which
    may still decline: None); else ``run`` under recording and keep the payload it returns
    (None: not to be remembered, :func:`refusal`). ``then`` gets the record and payload of
    either (the Lua filter's copy)."""
    if entry is not None:
        with recorded.recording() as hit:
            payload = entry.find()
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
