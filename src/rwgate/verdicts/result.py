"""The verdict of one check, with what a report says about it.

Kept apart from :mod:`rwgate.core` so that renderers and front ends read a result without
importing the core; a verdict says whether every source answered (:attr:`complete`), so a front
end that remembers it needs no look into the sources.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field

from rwgate import __version__
from rwgate.contract.models import (
    Citation,
    Location,
    Problem,
    Report,
    SourceInfo,
    Status,
    Summary,
    ToolInfo,
)
from rwgate.contract.vocab import FLAGGED_STATUSES
from rwgate.settings.policy import Policy

FLAGGED: frozenset[Status] = frozenset(FLAGGED_STATUSES)
JUDGED: frozenset[Status] = FLAGGED | {"clean"}
RECOVERED_FROM_TITLE = "DOI recovered from title"


@dataclass
class CheckResult:
    """Verdicts plus everything a report needs to say how they were reached."""

    citations: list[Citation]
    policy: Policy
    sources: list[SourceInfo]
    warnings: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    generated: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    since: str | None = None
    """The lockfile this result was compared with (:mod:`rwgate.verdicts.lock`), if any."""
    project_metadata: list[str] = field(default_factory=list)
    """Project files whose metadata (bibliography, nocite, ``rwgate:``) was merged into the
    manuscript's (:attr:`rwgate.readers.gather.Gathered.project_metadata`)."""
    cited_at: dict[str, list[Location]] = field(default_factory=dict)
    """Key -> the manuscript lines citing it, when the check read manuscripts: SARIF puts each
    result there (the entry is its related location), so code scanning shows it in the diff."""
    complete: bool = True
    """Whether every source could answer and the cache could be used: a verdict with a failed
    look-up is retried, never remembered."""

    @property
    def unseen(self) -> list[Problem]:
        """What rwgate could not see of the manuscript (DESIGN.md rule 3): strict cannot judge."""
        return [p for p in self.problems if p.unseen]

    @property
    def exit_code(self) -> int:
        """0 passed, 1 the gate failed; 2 under ``--policy strict`` when part of the manuscript
        could not be seen (citations printed by code, an include not read): cannot judge."""
        if self.policy.preset == "strict" and self.unseen:
            return 2
        return 1 if any(c.action == "fail" for c in self.citations) else 0

    def summary(self) -> Summary:
        statuses = Counter(c.status for c in self.citations)  # one pass each: 100,000 works
        actions = Counter(c.action for c in self.citations)
        return Summary(
            cited=len(self.citations),
            checked=sum(n for s, n in statuses.items() if s in JUDGED),
            flagged=sum(n for s, n in statuses.items() if s in FLAGGED),
            failed=actions["fail"],
            warned=actions["warn"],
            unverified=statuses["unverified"],
            changed=None
            if self.since is None
            else sum(c.change is not None for c in self.citations),
        )

    def report(self) -> Report:
        """The JSON report ``rwgate.report/1``."""
        return Report(
            generated=self.generated,
            tool=ToolInfo(version=__version__),
            sources=self.sources,
            project_metadata=self.project_metadata or None,
            policy=self.policy.describe(),
            summary=self.summary(),
            citations=self.citations,
            warnings=[*self.warnings, *(str(p) for p in self.problems)],
            since=self.since,
            exit_code=self.exit_code,
        )
