"""The ``rwgate.verify/1`` report of ``rwgate verify``, and its human form in the layout of
``rwgate check``'s.

Counts follow ``rwgate check``'s: ``flagged`` counts works with a notice in force
(:data:`rwgate.contract.vocab.FLAGGED_STATUSES`), never works that could not be judged (``no_doi``,
``unknown_doi``, ``unverified``). Every string from outside (titles, names, DOIs) goes through
:func:`term_safe`, as in the check report, so a hostile title cannot drive the terminal.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rwgate import __version__
from rwgate.contract.models import Problem, ToolInfo
from rwgate.contract.vocab import FLAGGED_STATUSES, status_label
from rwgate.frontends.verify.models import VERDICTS, VerifyResult
from rwgate.render.report import gate_line, paint
from rwgate.render.safe import term_safe

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


# --- the text report ------------------------------------------------------------------------

_TAGS = {"verified": "ok", "partial_match": "WARN", "not_found": "FAIL", "unverified": "WARN"}
_COLOURS = {"ok": "32", "WARN": "35", "FAIL": "31;1", "FLAG": "33"}


def _tag(result: VerifyResult) -> str:
    tag = _TAGS[result.verdict]
    status = result.integrity.status if result.integrity else None
    if tag == "ok" and status not in (None, "clean"):
        tag = "FLAG"
    if result.integrity is not None and result.integrity.action == "fail":
        tag = "FAIL"
    return tag


def _lines(result: VerifyResult, colour: bool, verbose: bool) -> list[str]:
    tag = _tag(result)
    head = f"  {paint(f'{tag:<4}', _COLOURS[tag], colour)}  {term_safe(result.key or '?')}: "
    head += f"{result.verdict} ({result.confidence:.2f})"
    if result.integrity is not None:
        head += f" - {status_label(result.integrity.status)}"
    lines = [head]
    work = result.matched or result.closest
    if work is not None:
        label = "" if result.matched else "closest (not a match): "
        bits = [term_safe(work.title or "(untitled)")]
        if work.venue or work.year:
            bits.append(term_safe(" ".join(str(b) for b in (work.venue, work.year) if b)))
        if work.doi:
            bits.append(f"doi:{term_safe(work.doi)}")
        lines.append("        " + label + " | ".join(bits))
    if result.location is not None:
        lines.append(f"        at {term_safe(result.location)}")
    lines += [f"        error: {term_safe(e)}" for e in result.errors]
    lines += [f"        warning: {term_safe(w)}" for w in result.warnings]
    lines += [f"        {term_safe(i)}" for i in result.info]
    if verbose and result.bibtex:
        lines += ["        " + term_safe(b) for b in result.bibtex.rstrip().splitlines()]
    return lines


def render_verify_text(report: VerifyReport, colour: bool = False, verbose: bool = False) -> str:
    out = ["rwgate: sources answered: " + (", ".join(report.sources_answered) or "none")]
    for name, reason in report.sources_failed.items():
        out.append(f"rwgate: warning: {name} did not answer: {term_safe(reason)}")
    if report.results:
        out.append("rwgate: verification:")
    for result in report.results:
        out += _lines(result, colour, verbose)
    out += [f"rwgate: {term_safe(p)}" for p in report.problems]
    s = report.summary
    out.append(
        f"rwgate: {s['entries']} entries, {s['verified']} verified, "
        f"{s['partial_match']} partial_match, {s['not_found']} not_found, "
        f"{s['unverified']} unverified; {s['flagged']} flagged"
    )
    out.append(gate_line(report.exit_code, colour))
    return "\n".join(out) + "\n"
