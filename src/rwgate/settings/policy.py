"""Policy: what each status does to a build (fail, annotate, warn, ignore).

The same :class:`Policy` object decides for the CLI, the pandoc filter, the LaTeX hooks and MCP, so
a build and an agent can never disagree about a citation.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Literal, get_args

from pydantic import BaseModel, Field, field_validator, model_validator

from rwgate.contract.doi import InvalidDOI, normalize
from rwgate.contract.models import Action, Status
from rwgate.settings import recorded

Preset = Literal["default", "strict", "permissive"]

# DESIGN.md's policy table, row for row: the statuses, and their (default, strict, permissive)
# actions. Under strict a cited key no entry answers to fails: it could be any work.
_TABLE: dict[tuple[Status, ...], tuple[Action, Action, Action]] = {
    ("retracted", "withdrawn", "removed"): ("annotate", "fail", "annotate"),
    ("partially_retracted", "replaced", "expression_of_concern"): (
        "annotate",
        "annotate",
        "ignore",
    ),
    ("unknown_notice",): ("annotate", "fail", "annotate"),
    ("corrected", "amended", "reinstated"): ("ignore", "annotate", "ignore"),
    ("unverified", "invalid_doi", "doi_mismatch"): ("warn", "fail", "ignore"),
    ("missing_entry",): ("warn", "fail", "ignore"),
    ("unknown_doi", "no_doi"): ("warn", "warn", "ignore"),
}


OVERRIDES: dict[str, Action] = {
    "fail_on": "fail", "annotate": "annotate", "warn": "warn", "ignore": "ignore"
}  # fmt: skip
"""The per-status override lists of a policy (and of the settings), and the action each sets."""


def preset_actions(preset: Preset) -> dict[Status, Action]:
    """DESIGN.md's policy table for one preset; ``clean`` is always ignored."""
    column = get_args(Preset).index(preset)
    actions: dict[Status, Action] = {"clean": "ignore"}
    for statuses, row in _TABLE.items():
        actions.update(dict.fromkeys(statuses, row[column]))
    return actions


class AllowEntry(BaseModel):
    """An intentional citation of a flagged work (e.g. a paper that discusses the retraction)."""

    key: str | None = None
    doi: str | None = None
    reason: str = Field(min_length=1)
    until: dt.date | None = None

    @field_validator("doi")
    @classmethod
    def _canonical_doi(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return normalize(value)
        except InvalidDOI as exc:
            raise ValueError(str(exc)) from None

    @model_validator(mode="after")
    def _needs_target(self) -> AllowEntry:
        if not self.key and not self.doi:
            raise ValueError("an allow entry needs a key or a doi")
        return self

    def matches(self, key: str, doi: str | None) -> bool:
        return (self.key is not None and self.key == key) or (
            self.doi is not None and doi is not None and self.doi == doi
        )


class Policy(BaseModel):
    """A preset plus per-status overrides and the allow-list."""

    preset: Preset = "default"
    fail_on: list[Status] = Field(default_factory=list)
    annotate: list[Status] = Field(default_factory=list)
    warn: list[Status] = Field(default_factory=list)
    ignore: list[Status] = Field(default_factory=list)
    allow: list[AllowEntry] = Field(default_factory=list)

    @model_validator(mode="after")
    def _no_status_twice(self) -> Policy:
        seen: dict[str, str] = {}
        for name in OVERRIDES:
            for status in getattr(self, name):
                if status in seen and seen[status] != name:
                    raise ValueError(f"status {status!r} is in both {seen[status]} and {name}")
                seen[status] = name
        return self

    def actions(self) -> dict[Status, Action]:
        table = preset_actions(self.preset)
        for name, action in OVERRIDES.items():
            table.update(dict.fromkeys(getattr(self, name), action))
        return table

    def action(self, status: Status) -> Action:
        return self.actions()[status]

    def allow_ends(self) -> float | None:
        """When the first allow-list entry still in force runs out (the local midnight after its
        ``until`` date, as :meth:`decide` counts days); None when none will. A remembered
        verdict must not outlive it: the work it allowed fails from then on. Asked once per
        check (the core), it notes in the run's record what a dated entry depends on: the end,
        and the time zone (a local date: which day it is), as readers note the files they read."""
        if all(entry.until is None for entry in self.allow):
            return None
        recorded.note_env("TZ", os.environ.get("TZ"))
        recorded.is_file("/etc/localtime")
        today = dt.date.today()
        ends = [
            dt.datetime.combine(entry.until + dt.timedelta(days=1), dt.time()).timestamp()
            for entry in self.allow
            if entry.until is not None and entry.until >= today
        ]
        if ends:
            recorded.note_expiry(min(ends))
        return min(ends, default=None)

    def decide(
        self,
        key: str,
        doi: str | None,
        status: Status,
        today: dt.date | None = None,
        actions: dict[Status, Action] | None = None,
    ) -> tuple[Action, AllowEntry | None, str | None]:
        """Action for one citation, the allow entry that covers it, and a warning when one has
        expired: an allowed work never fails and is still annotated. An expired entry does not
        hide a later one still in force (a key entry that ran out beside a DOI entry that did
        not). ``actions``: :meth:`actions`, computed once by a caller that decides many."""
        action = (actions or self.actions())[status]
        today = today or dt.date.today()
        warning: str | None = None
        for entry in self.allow:
            if not entry.matches(key, doi):
                continue
            if entry.until is not None and entry.until < today:
                warning = warning or (
                    f"{key}: allow-list entry expired on {entry.until.isoformat()} ({entry.reason})"
                )
                continue
            return "annotate" if action == "fail" else action, entry, warning
        return action, None, warning

    def describe(self) -> dict[str, object]:
        """The policy as the JSON report shows it."""
        return {
            "preset": self.preset,
            "actions": dict(self.actions()),
            "allow": [e.model_dump(mode="json", exclude_none=True) for e in self.allow],
        }
