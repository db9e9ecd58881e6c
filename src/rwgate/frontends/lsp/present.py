"""What a hover says about a key: the verdict, its history (the notices), its sources and their
age. Markdown, every outside string escaped (a title or a notice label from upstream data must
not open a link or a tag in the editor's hover)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from rwgate.contract.vocab import capitalised, notice_label, status_label
from rwgate.render.safe import md_safe

if TYPE_CHECKING:
    from rwgate.contract.models import Citation, Notice, SourceInfo

_WHAT_THE_BUILD_DOES = {
    "fail": "the build fails",
    "annotate": "the build annotates it",
    "warn": "the build warns",
    "ignore": "the build takes no action",
}


def age(when: dt.datetime | None, now: dt.datetime | None = None) -> str:
    """``as of 2025-06-01 (12 days ago)``; ``age unknown`` without a date."""
    if when is None:
        return "age unknown"
    stamp = when if when.tzinfo else when.replace(tzinfo=dt.UTC)
    days = ((now or dt.datetime.now(dt.UTC)) - stamp).days
    ago = "today" if days <= 0 else "1 day ago" if days == 1 else f"{days} days ago"
    return f"as of {stamp.date().isoformat()} ({ago})"


def _notice_line(notice: Notice) -> str:
    when = notice.date.isoformat() if notice.date else "undated"
    line = f"- {when}: {md_safe(notice_label(notice.type))}"
    if notice.doi:
        line += f", notice doi:{md_safe(notice.doi)}"
    if notice.source:
        line += f" ({md_safe(', '.join(notice.source))})"
    return line


def hover_text(citation: Citation, message: str, sources: list[SourceInfo]) -> str:
    """The hover of one key, as Markdown."""
    said = capitalised(status_label(citation.status))
    lines = [f"**{md_safe(citation.key)}**: {md_safe(message)}", ""]
    verdict = f"Verdict: {md_safe(said)}; {_WHAT_THE_BUILD_DOES.get(citation.action, '')}"
    if citation.allowed:
        verdict += " (allowed by the allow-list)"
    lines.append(verdict)
    if citation.title:
        year = f" ({citation.year})" if citation.year else ""
        lines.append(f"Work: {md_safe(citation.title)}{year}")
    if citation.doi:
        lines.append(f"DOI: {md_safe(citation.doi)}")
    if citation.reason:
        lines.append(f"Why: {md_safe(citation.reason)}")
    if citation.notices:
        lines += ["", "History:"] + [_notice_line(n) for n in citation.notices]
    basis = set(citation.basis)
    shown = [s for s in sources if not basis or s.name in basis] or sources
    if shown:
        lines += ["", "Sources:"]
        lines += [f"- {md_safe(s.name)}, {age(s.as_of)}" for s in shown]
    return "\n".join(lines)


def replacement_doi(citation: Citation) -> str | None:
    """The DOI of the version that replaces a retracted-and-replaced work, when a notice names
    one: Crossref's ``new_version`` update points from the work to its replacement. None when no
    notice names it (the retract-and-replace notice itself is not the replacement)."""
    if citation.status != "replaced":
        return None
    for notice in reversed(citation.notices):
        if notice.type == "new_version" and notice.doi and notice.doi != citation.doi:
            return notice.doi
    return None
