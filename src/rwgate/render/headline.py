"""The first line of every human report: what the policy did with the findings, and what
``--policy strict`` would do.

A large green "gate passed" above six retracted works reads as "nothing wrong"; the headline says
what happened ("6 works annotated: 3 retracted, ... - the gate passed under the default policy;
--policy strict would fail") in the colour of the gravest finding, red whenever the gate failed.
A pass when no source answered, or with nothing checked, says so.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rwgate.contract.models import Citation
from rwgate.contract.vocab import SEVERITIES, STATUSES, Severity, severity, status_label
from rwgate.render.provenance import unanswered
from rwgate.verdicts.result import CheckResult

_VERBS = {"fail": "failed the policy", "annotate": "annotated", "warn": "with a warning"}


@dataclass(frozen=True)
class Headline:
    text: str
    severity: Severity | None
    """The gravest finding's class; None when the gate failed (shown as a failure)."""


def _works(n: int) -> str:
    return f"{n} work{'s' if n != 1 else ''}"


def _breakdown(citations: list[Citation]) -> str:
    counts = Counter(c.status for c in citations)
    order = sorted(counts, key=STATUSES.index)
    return ", ".join(f"{counts[s]} {status_label(s)}" for s in order)


def _strict_fails(result: CheckResult) -> bool:
    """Whether ``--policy strict`` (with the same overrides and allow-list) would fail; against
    a lock only what changed can fail (:func:`rwgate.verdicts.lock.since`)."""
    actions = result.policy.model_copy(update={"preset": "strict"}).actions()
    since = result.since is not None
    if result.unseen:  # part of the document is not seen: strict cannot judge it (exit 2)
        return True
    return any(
        not c.allowed and actions[c.status] == "fail" and not (since and c.change is None)
        for c in result.citations
    )


def nothing_checked(result: CheckResult) -> bool:
    """Works were cited and not one could be judged (no source answered, or none has a DOI)."""
    summary = result.summary()
    return summary.cited > 0 and summary.checked == 0


def _verdict(result: CheckResult, code: int) -> str:
    preset = result.policy.preset
    if code == 2 and result.unseen and not any(p.unreadable for p in result.problems):
        return "cannot judge from the sources: rwgate cannot see part of the manuscript"
    if code == 2:
        return "the gate failed: an input could not be read"
    said = f"the gate {'passed' if code == 0 else 'failed'} under the {preset} policy"
    if code == 0 and nothing_checked(result):
        said += ", but nothing could be checked"
    if code == 0 and preset != "strict":
        said += "; --policy strict would " + ("fail" if _strict_fails(result) else "pass too")
    return said


def headline(result: CheckResult, code: int) -> Headline:
    """What happened, in one line (no trailing full stop, no markup)."""
    acted = [c for c in result.citations if c.action != "ignore"]
    groups = [
        f"{_works(len(group))} {verb}: {_breakdown(group)}"
        for action, verb in _VERBS.items()
        if (group := [c for c in acted if c.action == action])
    ]
    if not groups:
        groups = [f"{_works(len(result.citations))} cited, none flagged"]
    silent = unanswered(result.sources) if result.citations else None
    if silent:
        groups.insert(0, silent)
    found = {severity(c.status) for c in result.citations}
    worst: Severity = min(found, key=SEVERITIES.index, default="clean")
    return Headline(f"{'; '.join(groups)} — {_verdict(result, code)}", None if code else worst)
