"""The lockfile: what the bibliography's works were last time, so a run can say what is new.

Papers are retracted after they are cited. ``--lock FILE`` records each cited work's status and
notice DOIs; ``--since FILE`` then reports and gates on what changed and nothing else.

The file is JSON, sorted and indented, one work per block, keyed by DOI (``key:KEY`` without one);
it records no time, so an unchanged bibliography gives a byte-identical file:

    {"schema": "rwgate.lock/1",
     "works": {"10.1016/s0140-6736(97)11096-0": {"keys": ["wakefield1998"],
                "notices": ["10.1016/s0140-6736(10)60175-4"], "status": "retracted"}}}

Under ``--since``, a citation failed for a notice that has not changed is still annotated but no
longer fails the gate; one failed for not being judged (``unverified``...) is never unchanged.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from rwgate.contract.models import Citation
from rwgate.contract.vocab import UNJUDGED_STATUSES, status_label
from rwgate.errors import ConfigError
from rwgate.verdicts.result import FLAGGED, CheckResult

LOCK_SCHEMA = "rwgate.lock/1"
_UNJUDGED = frozenset(UNJUDGED_STATUSES)
Works = dict[str, dict[str, Any]]


def identity(c: Citation) -> str:
    """A citation's name in the lock: its DOI, else ``key:KEY``."""
    return c.doi if c.doi else f"key:{c.key}"


def _notice_dois(c: Citation) -> list[str]:
    return sorted({n.doi for n in c.notices if n.doi})


def state(result: CheckResult) -> Works:
    """The lock's ``works`` table for a result."""
    works: Works = {}
    for c in result.citations:
        entry = works.setdefault(identity(c), {"keys": [], "notices": [], "status": c.status})
        entry["keys"] = sorted({*entry["keys"], c.key})
        entry["notices"] = sorted({*entry["notices"], *_notice_dois(c)})
    return dict(sorted(works.items()))


def render_lock(result: CheckResult) -> str:
    """The lockfile's text (sorted keys, two-space indent, a final newline)."""
    body = {"schema": LOCK_SCHEMA, "works": state(result)}
    return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def read_lock(path: Path) -> Works | None:
    """The ``works`` of a lockfile, None when there is none yet; ConfigError (one line naming the
    file) when it is not a lockfile."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not a readable rwgate lockfile ({exc})") from None
    works = data.get("works") if isinstance(data, dict) else None
    if not isinstance(works, dict) or data.get("schema") != LOCK_SCHEMA:
        raise ConfigError(f"{path}: not an rwgate lockfile (expected schema {LOCK_SCHEMA})")
    for name, entry in works.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("status"), str):
            raise ConfigError(f"{path}: works.{name}: expected a table with a status")
        if not isinstance(entry.get("notices", []), list):
            raise ConfigError(f"{path}: works.{name}.notices: expected a list")
    return works


def change(c: Citation, before: dict[str, Any] | None) -> str | None:
    """What changed for one citation since the lock, or None."""
    now = status_label(c.status)  # a sentence a person reads: no snake_case status
    if before is None:
        if c.status in FLAGGED:
            return f"cited since the lock, already {now}"
        if c.status in _UNJUDGED and c.action == "fail":
            return f"cited since the lock, {now}"
        return None
    was = before["status"]
    if c.status != was:
        if c.status in _UNJUDGED:
            return f"{now} now (was {status_label(str(was))}): could not be checked again"
        if c.status == "clean":
            return f"no notice in force now (was {status_label(str(was))})"
        return f"newly {now} (was {status_label(str(was))})"
    if c.status in _UNJUDGED and c.action == "fail":
        # Fail closed: a work that cannot be judged, or a key no bibliography defines, is never
        # "unchanged" (it was unverified at the lock and may have been retracted since).
        return f"still {now}: not judged, so never unchanged"
    new = sorted(set(_notice_dois(c)) - {str(d) for d in before.get("notices", [])})
    if new:
        return "new notice" + ("s " if len(new) > 1 else " ") + ", ".join(f"doi:{d}" for d in new)
    return None


def since(result: CheckResult, works: Works, name: str) -> CheckResult:
    """``result`` judged against a lock: changed citations carry ``change``; unchanged ones no
    longer fail (they are still annotated). ``name`` is how reports call the lock."""
    out: list[Citation] = []
    for c in result.citations:
        said = change(c, works.get(identity(c)))
        update: dict[str, Any] = {"change": said}
        if said is None and c.action == "fail":  # only a notice status can be unchanged
            update["action"] = "annotate"
            update["reason"] = f"unchanged since {name}" + (f"; {c.reason}" if c.reason else "")
        out.append(c.model_copy(update=update))
    return replace(result, citations=out, since=name)
