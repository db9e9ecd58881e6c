"""The human report of ``rwgate verify``, in the layout of ``rwgate check``'s.

Every string from outside (titles, names, DOIs) goes through :func:`term_safe`, as in the check
report, so a hostile title cannot drive the terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rwgate.contract.vocab import status_label
from rwgate.frontends.verify.models import VerifyResult
from rwgate.render.report import gate_line, paint
from rwgate.render.safe import term_safe

if TYPE_CHECKING:
    from rwgate.frontends.verify.report import VerifyReport

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
