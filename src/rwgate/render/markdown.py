"""Markdown rendering of a check: the GitHub Actions job summary (``$GITHUB_STEP_SUMMARY``).

The verdict, a table of the citations the policy flags (what changed since the lock first), and
the sources with their dates. Every outside string goes through :func:`rwgate.render.safe.md_safe`.
"""

from __future__ import annotations

from pathlib import Path

from rwgate.contract.models import Citation
from rwgate.contract.vocab import notice_label, status_label
from rwgate.render import ReportFormat, View, report
from rwgate.render.safe import md_safe, one_line
from rwgate.render.sarif import reported
from rwgate.verdicts.result import CheckResult

_ICONS = {"fail": ":x:", "annotate": ":warning:", "warn": ":grey_question:"}
# The headline's mark, by the gravest finding (None: the gate failed); the words say it too.
_HEAD_ICONS = {
    None: ":x:",
    "retracted": ":red_circle:",
    "concern": ":orange_circle:",
    "correction": ":large_blue_circle:",
    "unverified": ":white_circle:",
    "clean": ":white_check_mark:",
}
_MAX_ROWS = 200
"""GitHub caps a step summary at 1 MiB; past this many rows the table says how many are left."""


def _notice(c: Citation) -> str:
    parts = []
    for n in c.notices:
        when = n.date.isoformat() if n.date else "undated"
        link = f" [doi:{md_safe(n.doi)}](https://doi.org/{md_safe(n.doi)})" if n.doi else ""
        parts.append(f"{md_safe(notice_label(n.type))} {when}{link}")
    return "<br>".join(parts) or "-"


def _code(text: str) -> str:
    """A key as a code span; one with a backtick or a ``|`` (which no code span can hold inside a
    table) as escaped text. Backslash escapes do not work inside code spans, so md_safe's would
    show."""
    plain = one_line(text)
    return md_safe(plain) if set(plain) & set("`|") else f"`{plain.replace('<', '&lt;')}`"


def _identity(c: Citation) -> str | None:
    """The reason a reviewer must read to act: the DOI names another work, or the entry was
    matched by title (add its DOI)."""
    if c.status == "doi_mismatch" or "title" in c.basis:
        return c.reason
    return None


def _row(c: Citation, root: Path) -> str:
    loc = report.location_text(c, root)
    where = md_safe(loc) if loc else "-"
    doi = f"[{md_safe(c.doi)}](https://doi.org/{md_safe(c.doi)})" if c.doi else "-"
    notes = [md_safe(one_line(x)) for x in (_identity(c), c.change and f"new: {c.change}") if x]
    notes += [md_safe(x) for x in (report.added_text(c),) if x]
    label = md_safe(status_label(c.status))
    status = f"{_ICONS[c.action]} {label}" + (" (allowed)" if c.allowed else "")
    cells = [status, _code(c.key), doi, _notice(c), where, "<br>".join(notes) or "-"]
    return "| " + " | ".join(cells) + " |"


def render_markdown(
    result: CheckResult, exit_code: int | None = None, root: Path | None = None
) -> str:
    """The job summary; file locations are relative to ``root`` (default: the working folder)."""
    code = result.exit_code if exit_code is None else exit_code
    base = (root or Path.cwd()).resolve()
    said = report.headline(result, code)
    s = result.summary()
    out = [f"## {_HEAD_ICONS[said.severity]} rwgate: {md_safe(said.text)}", ""]
    verdict = report.gate_verdict(code, report.nothing_checked(result))
    out.append(f"{md_safe(report.summary_line(result))}; gate {verdict}")
    if result.since is not None:
        out += ["", f"Compared with the lockfile `{md_safe(result.since)}`: {s.changed} changed."]
    rows = sorted(reported(result), key=lambda c: (c.change is None, c.action != "fail"))
    if rows:
        out += [
            "",
            "| Status | Key | DOI | Notices | Entry | Notes |",
            "| --- | --- | --- | --- | --- | --- |",
            *(_row(c, base) for c in rows[:_MAX_ROWS]),
        ]
        if len(rows) > _MAX_ROWS:
            out.append(f"\n{len(rows) - _MAX_ROWS} more in the SARIF and JSON reports.")
    out += ["", "Sources:", *(f"- {md_safe(report.describe_source(i))}" for i in result.sources)]
    if result.project_metadata:
        named = ", ".join(_code(report.path_text(f, base)) for f in result.project_metadata)
        out += ["", f"Project metadata: {named}"]
    out += [f"- warning: {md_safe(w)}" for w in result.warnings[:20]]
    return "\n".join(out)


class MarkdownFormat(ReportFormat):
    """GitHub-flavoured Markdown (the Action's job summary)."""

    name = "markdown"

    def render(self, result: CheckResult, view: View) -> str:
        return render_markdown(result, view.exit_code, view.root)
