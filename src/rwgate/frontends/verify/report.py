"""The ``rwgate.verify/1`` report: what ``rwgate verify`` and agents get back for a
bibliography.

Counts follow ``rwgate check``'s: ``flagged`` counts works with a notice in force
(:data:`rwgate.contract.vocab.FLAGGED_STATUSES`), never works that could not be judged (``no_doi``,
``unknown_doi``, ``unverified``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rwgate import __version__
from rwgate.contract.models import Problem, ToolInfo
from rwgate.contract.vocab import FLAGGED_STATUSES
from rwgate.frontends.verify.models import VERDICTS, VerifyResult

VERIFY_SCHEMA = "rwgate.verify/1"


class VerifyReport(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    schema_: str = Field(default=VERIFY_SCHEMA, alias="schema")
    generated: dt.datetime
    tool: ToolInfo
    sources_answered: list[str]
    sources_failed: dict[str, str]
    summary: dict[str, int]
    results: list[VerifyResult]
    problems: list[str] = Field(default_factory=list)
    exit_code: int

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, indent=2, exclude_none=True)


def fails(result: VerifyResult, policy: Any, fail_on_partial: bool) -> bool:
    if result.verdict == "not_found":
        return True
    if result.verdict == "unverified":
        return bool(policy.action("unverified") == "fail")
    if result.integrity is not None and result.integrity.action == "fail":
        return True
    return result.verdict == "partial_match" and fail_on_partial


def build_report(
    results: list[VerifyResult], problems: list[Problem], code: int, failed: int
) -> VerifyReport:
    answered: list[str] = []
    failed_sources: dict[str, str] = {}
    for r in results:
        answered += [s for s in r.sources_answered if s not in answered]
        for name, reason in r.sources_failed.items():
            failed_sources.setdefault(name, reason)
    summary: dict[str, int] = {v: sum(r.verdict == v for r in results) for v in VERDICTS}
    summary["entries"] = len(results)
    summary["flagged"] = sum(
        r.integrity is not None and r.integrity.status in FLAGGED_STATUSES for r in results
    )
    summary["failed"] = failed
    return VerifyReport(
        generated=dt.datetime.now(dt.UTC),
        tool=ToolInfo(version=__version__),
        sources_answered=answered,
        sources_failed={k: v for k, v in failed_sources.items() if k not in answered},
        summary=summary,
        results=results,
        problems=[str(p) for p in problems],
        exit_code=code,
    )
