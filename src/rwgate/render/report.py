"""Human and JSON renderings of a check, and the headline every human report starts with.

The human report says what was checked, what is flagged and why, where each entry was written
(file:line), and how fresh the data was. Every string from outside is stripped of control
characters first, so a hostile title cannot move the cursor or recolour the terminal.

A large green "gate passed" above six retracted works reads as "nothing wrong"; the headline says
what happened ("6 works annotated: 3 retracted, ... - the gate passed under the default policy;
--policy strict would fail") in the colour of the gravest finding, red whenever the gate failed.
A pass when no source answered, or with nothing checked, says so.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pydantic import TypeAdapter

from rwgate.contract.evidence import deciding_notice
from rwgate.contract.models import REPORT_JSON, Citation, Report
from rwgate.contract.vocab import (
    FLAGGED_STATUSES,
    SEVERITIES,
    STATUSES,
    Severity,
    capitalised,
    history_note,
    notice_label,
    severity,
    status_label,
    summary_text,
)
from rwgate.render import ReportFormat, View
from rwgate.render.annotate import annotate
from rwgate.render.provenance import describe_source, display_name, unanswered
from rwgate.render.safe import term_safe
from rwgate.verdicts.result import FLAGGED, RECOVERED_FROM_TITLE, CheckResult

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


_COLOURS = {"fail": "31;1", "annotate": "33", "warn": "35", "ignore": "32"}
_SEVERITY_COLOURS = {
    "retracted": "31;1",
    "concern": "33;1",
    "correction": "36",
    "unverified": "35",
    "clean": "32",
    None: "31;1",  # the gate failed
}
_TAGS = {"fail": "FAIL", "annotate": "FLAG", "warn": "WARN", "ignore": "ok"}


def record_label(record_id: str) -> str:
    """A notice's record as a reader finds it: ``RW#4036`` for a Retraction Watch record (digits),
    a preprint server's own id (``arXiv:2104.01234v2``) as it is."""
    return f"RW#{record_id}" if record_id.isdigit() else record_id


def paint(text: str, code: str, colour: bool) -> str:
    """``text`` in an ANSI colour when the output is a terminal (``colour``)."""
    return f"\x1b[{code}m{text}\x1b[0m" if colour else text


def gate_verdict(exit_code: int, unchecked: bool = False) -> str:
    """What an exit code says of the gate, in every report (text, Markdown, HTML); a pass with
    nothing checked (``unchecked``) says so."""
    if exit_code == 0 and unchecked:
        return "passed, but nothing could be checked"
    return {0: "passed", 1: "FAILED"}.get(exit_code, "FAILED: an input could not be read")


def gate_line(exit_code: int, colour: bool, unchecked: bool = False) -> str:
    """The last line of every human report: did the gate pass (and was anything checked)."""
    said = f"rwgate: gate {gate_verdict(exit_code, unchecked)}"
    return paint(said, "31;1" if exit_code else "35" if unchecked else "32", colour)


def headline_line(result: CheckResult, exit_code: int, colour: bool) -> str:
    """The first line of the human report: what happened, in the colour of the gravest finding."""
    said = headline(result, exit_code)
    return paint(f"rwgate: {said.text}", _SEVERITY_COLOURS[said.severity], colour)


def _recovered(c: Citation) -> bool:
    """The DOI was not in the entry: the user should know the verdict rests on a title match."""
    return RECOVERED_FROM_TITLE in (c.reason or "")


def path_text(name: str, root: Path) -> str:
    """``name`` relative to ``root`` when the file lies under it (a page or a job summary read
    beside the repository), else as given."""
    try:
        return Path(name).resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return name


def location_text(c: Citation, root: Path) -> str | None:
    """``file:line``, the file relative to ``root`` (:func:`path_text`)."""
    if c.location is None:
        return None
    name = path_text(c.location.file, root)
    return f"{name}:{c.location.line}" if c.location.line else name


def added_text(c: Citation) -> str | None:
    """When the entry entered the bibliography and what that means, or None when not known."""
    if c.added is None:
        return None
    notice = deciding_notice(c)
    when = c.added.date.isoformat() if c.added.date else "not committed yet"
    commit = f", commit {c.added.commit}" if c.added.commit else ""
    text = f"added to the bibliography {when}{commit}"
    if c.added.after_notice is None or notice is None or notice.date is None:
        return text
    note = history_note(c.status, notice.type, notice.date.isoformat(), c.added.after_notice)
    return f"{text}, {note}"


def summary_line(result: CheckResult) -> str:
    """The counts of every human report, named for what the policy did with each work: the
    annotated ones are the FLAG lines and the notes in the paper; a work with a notice the
    policy ignores (a correction, by default) is counted apart, as no action."""
    pairs = Counter((c.status, c.action) for c in result.citations)  # one pass: 100,000 works
    actions: Counter[str] = Counter()
    for (_, action), n in pairs.items():
        actions[action] += n
    unacted: dict[str, int] = {status: pairs[status, "ignore"] for status in FLAGGED_STATUSES}
    s = result.summary()
    counts = {
        "cited": s.cited,
        "checked": s.checked,
        "failed": actions["fail"],
        "annotated": actions["annotate"],
        "warned": actions["warn"],
        "unverified": s.unverified,
    }
    return summary_text(counts, unacted, result.policy.preset)


def verdict_text(c: Citation, template: str | None = None) -> str:
    """``Retracted 2010; notice doi:...``: the note the paper carries, which the default
    annotation starts with the status's label; else the status in words, then the note."""
    label = status_label(c.status)
    if c.status not in FLAGGED:
        return label
    text = annotate(c, template).text
    return text if text.startswith(capitalised(label)) else f"{label} - {text}"


def _citation_lines(c: Citation, colour: bool, template: str | None) -> list[str]:
    tag = paint(f"{_TAGS[c.action]:<4}", _COLOURS[c.action], colour)
    if c.change:
        tag = paint("NEW ", "31;1", colour) + " " + tag
    head = f"  {tag}  {term_safe(c.key)}: {term_safe(verdict_text(c, template))}"
    if c.allowed:
        head += " [allowed]"
    lines = [head]
    bits = [term_safe(c.title)] if c.title else []
    if c.journal or c.year:
        bits.append(term_safe(" ".join(str(b) for b in (c.journal, c.year and f"({c.year})") if b)))
    if c.doi:
        recovered = " (recovered from title)" if _recovered(c) else ""
        bits.append(f"doi:{term_safe(c.doi)}{recovered}")
    if c.location:
        bits.append(term_safe(c.location))
    if bits:
        lines.append("        " + " | ".join(bits))
    for n in c.notices:
        when = n.date.isoformat() if n.date else "undated"
        rid = f" {term_safe(record_label(n.record_id))}" if n.record_id else ""
        ndoi = f" doi:{term_safe(n.doi)}" if n.doi else ""
        sources = term_safe(", ".join(display_name(s) for s in n.source))
        lines.append(f"        {when} {term_safe(notice_label(n.type))}{ndoi}{rid} [{sources}]")
    if c.reason:
        lines.append(f"        {term_safe(c.reason)}")
    if c.change:
        lines.append(f"        since the lock: {term_safe(c.change)}")
    if (added := added_text(c)) is not None:
        lines.append(f"        {term_safe(added)}")
    return lines


def unlisted_no_doi(c: Citation) -> bool:
    """An entry without a DOI the policy only warns about and no allow-list entry covers: the
    summary line counts it; an allowed one is said on its own line, with its reason."""
    return c.status == "no_doi" and c.action == "warn" and not c.allowed


def no_doi_summary(citations: Sequence[Citation], hint: str = "rwgate check -v") -> str | None:
    """One line for every entry without a DOI the policy only warns about (a bibliography of 256
    entries printed 89 such lines on every build, and users learn to ignore stderr)."""
    keys = [c.key for c in citations if unlisted_no_doi(c)]
    if not keys:
        return None
    named = ", ".join(term_safe(k) for k in keys[:5]) + (
        f", and {len(keys) - 5} more" if len(keys) > 5 else ""
    )
    return (
        f"{len(keys)} entr{'y has' if len(keys) == 1 else 'ies have'} no DOI and could not be "
        f"checked ({named}); `--recover-dois` looks them up by title, `{hint}` lists each"
    )


def render_text(
    result: CheckResult,
    colour: bool = False,
    verbose: bool = False,
    template: str | None = None,
    exit_code: int | None = None,
    limit: int | None = None,
) -> str:
    """The human report. Clean, ignored citations are listed only with ``verbose``; beside a
    machine report, the first ``limit`` of them (the report has every one)."""
    code = result.exit_code if exit_code is None else exit_code
    out = [headline_line(result, code, colour), "rwgate: sources:"]
    out += [f"  {describe_source(s)}" for s in result.sources]
    if result.project_metadata:
        out.append(f"rwgate: project metadata: {term_safe(', '.join(result.project_metadata))}")
    shown = [c for c in result.citations if verbose or c.action != "ignore" or c.allowed]
    unchanged = 0
    if result.since is not None and not verbose:  # against a lock: what changed, nothing else
        unchanged = sum(c.change is None for c in shown)
        shown = [c for c in shown if c.change is not None]
    summary = None if verbose else no_doi_summary(shown)
    if summary is not None:
        shown = [c for c in shown if not unlisted_no_doi(c)]
    if shown:
        out.append("rwgate: citations:")
    for c in shown[:limit]:
        out.extend(_citation_lines(c, colour, template))
    if limit is not None and len(shown) > limit:
        out.append(f"  ... and {len(shown) - limit} more in the report (all with -v)")
    if summary is not None:
        out.append(f"rwgate: warning: {summary}")
    if result.since is not None:
        changed = sum(c.change is not None for c in result.citations)
        out.append(
            f"rwgate: since {term_safe(result.since)}: {changed} changed"
            + (f", {unchanged} unchanged not listed (-v lists them)" if unchanged else "")
        )
    out += [f"rwgate: warning: {term_safe(w)}" for w in result.warnings]
    out += [f"rwgate: {p.severity}: {term_safe(p)}" for p in result.problems]
    recovered = sum(_recovered(c) for c in result.citations)
    if recovered:
        out.append(
            f"rwgate: {recovered} DOI{'s' if recovered != 1 else ''} recovered from title "
            "(verified matches; not in the bibliography)"
        )
    out.append(f"rwgate: {summary_line(result)}")
    out.append(gate_line(code, colour, nothing_checked(result)))
    return "\n".join(out) + "\n"


class TextFormat(ReportFormat):
    """The human report (stdout, or stderr when a machine format takes stdout)."""

    name = "text"
    machine = False

    def render(self, result: CheckResult, view: View) -> str:
        text = render_text(
            result, view.colour, view.verbose, view.template, view.exit_code, view.limit
        )
        return text.rstrip("\n")


_CITATIONS = '\n  "citations": []'
_PIECE = 1_000
"""Citations serialised at a time when a JSON report is written in pieces."""


class JsonFormat(ReportFormat):
    """The JSON report ``rwgate.report/1`` (also what the ``report`` setting writes)."""

    name = "json"

    def _report(self, result: CheckResult, view: View) -> Report:
        report = result.report()
        if view.exit_code is not None:
            report = report.model_copy(update={"exit_code": view.exit_code})
        return report

    def render(self, result: CheckResult, view: View) -> str:
        return self._report(result, view).to_json()

    def write(self, result: CheckResult, view: View, out: BinaryIO) -> None:
        """The same bytes as :meth:`render`, written a thousand citations at a time: the report
        of 100,000 works (66 MB) is never held whole, nor copied to bytes and back."""
        report = self._report(result, view)
        citations = report.citations
        head, tail = report.model_copy(update={"citations": []}).to_json().split(_CITATIONS, 1)
        out.write(head.encode("utf-8"))
        if not citations:
            out.write(_CITATIONS.encode("utf-8"))
        else:
            out.write(_CITATIONS[:-1].encode("utf-8"))
            for start in range(0, len(citations), _PIECE):
                piece = _citation_list().dump_json(citations[start : start + _PIECE], **REPORT_JSON)
                # b'[\n  {...},\n  {...}\n]' -> its items, one level deeper (a newline inside a
                # JSON string is written as an escape, so every raw newline is the layout's).
                items = piece[1:-2].replace(b"\n", b"\n  ")
                out.write(items if start == 0 else b"," + items)
            out.write(b"\n  ]")
        out.write(tail.encode("utf-8") + b"\n")


@functools.cache
def _citation_list() -> TypeAdapter[list[Citation]]:
    """Built on first use: only a report written in pieces needs it."""
    return TypeAdapter(list[Citation])
