"""The contract's vocabularies (statuses, actions) as plain Python.

Kept apart from :mod:`rwgate.contract.models` so that building the command line, which every
``rwgate`` start does (latexmk starts ``rwgate bibtex`` several times per build), needs no Pydantic.
"""

from __future__ import annotations

from typing import Literal, get_args

Status = Literal[
    "retracted",
    "withdrawn",
    "removed",
    "partially_retracted",
    "replaced",
    "expression_of_concern",
    "unknown_notice",
    "corrected",
    "amended",
    "reinstated",
    "clean",
    "unknown_doi",
    "invalid_doi",
    "no_doi",
    "missing_entry",
    "unverified",
    "doi_mismatch",
]
STATUSES: tuple[Status, ...] = get_args(Status)
# Statuses that say something about the work itself (a notice is in force), in severity order.
FLAGGED_STATUSES: tuple[Status, ...] = STATUSES[: STATUSES.index("clean")]
# Flagged statuses whose notice weakens the work itself (not a mere correction): these travel
# with an exported BibTeX entry and make a verified match "retracted".
SERIOUS_STATUSES: tuple[Status, ...] = STATUSES[: STATUSES.index("corrected")]
RETRACTED_LIKE: tuple[Status, ...] = STATUSES[: STATUSES.index("expression_of_concern")]
# Statuses of works that could not be judged (no source said anything about the work).
UNJUDGED_STATUSES: tuple[Status, ...] = STATUSES[STATUSES.index("clean") + 1 :]
Action = Literal["fail", "annotate", "warn", "ignore"]


# --- what a person reads -------------------------------------------------------------------------
# Every human sentence (terminal, HTML, Markdown, JUnit, SARIF text, rw-filter, the LaTeX hooks,
# MCP warnings) names statuses and notice types through these: machine fields (JSON, SARIF rule
# ids, data-status attributes) keep the snake_case names above, and no sentence shows them.

# A status's words are its name with spaces (``partially_retracted``), except these.
STATUS_LABELS: dict[str, str] = {
    "replaced": "retracted and replaced",
    "unknown_notice": "notice of unrecognised type",
    "unknown_doi": "unknown DOI",
    "invalid_doi": "invalid DOI",
    "no_doi": "no DOI",
    "doi_mismatch": "DOI mismatch",
}
NOTICE_LABELS: dict[str, str] = {
    "retraction": "retraction",
    "partial_retraction": "partial retraction",
    "withdrawal": "withdrawal",
    "removal": "removal",
    "retract_and_replace": "retraction and replacement",
    "expression_of_concern": "expression of concern",
    "correction": "correction",
    "erratum": "erratum",
    "corrigendum": "corrigendum",
    "addendum": "addendum",
    "clarification": "clarification",
    "new_version": "new version",
    "new_edition": "new edition",
    "reinstatement": "reinstatement",
}
# "N <phrase>" in a summary, for works with a notice the policy takes no action on.
_COUNTED: dict[str, str] = {
    "expression_of_concern": "with an expression of concern",
    "unknown_notice": "with a notice of unrecognised type",
    "corrected": "with a correction",
    "amended": "with an amendment",
}
# What a flagged entry's history means, by the severity of its status: (added after the
# notice, added before it). A correction or an amendment is no fault of the citing author.
_HISTORY: dict[str, tuple[str | None, str | None]] = {
    "retracted": ("likely cited in error", "needs an update"),
    "withdrawn": ("likely cited in error", "needs an update"),
    "removed": ("likely cited in error", "needs an update"),
    "partially_retracted": ("check that the cited part still stands",) * 2,
    "replaced": ("cite the replacement",) * 2,
    "expression_of_concern": ("check that the claim still stands",) * 2,
    "unknown_notice": ("read the notice to see what it changes",) * 2,
}


# How grave a status is, for colours (badges, headlines) and the headline's order: a work that
# is gone, a work under a notice, a work corrected, a work nobody could judge, a clean work. The
# word is always shown beside the colour (a page printed in greyscale still says it).
Severity = Literal["retracted", "concern", "correction", "unverified", "clean"]
SEVERITIES: tuple[Severity, ...] = get_args(Severity)


def severity(status: str) -> Severity:
    """The severity class of ``status`` (``replaced`` is retracted; ``no_doi`` unverified)."""
    if status in RETRACTED_LIKE:
        return "retracted"
    if status in ("expression_of_concern", "unknown_notice"):
        return "concern"
    if status in FLAGGED_STATUSES:
        return "correction"
    return "clean" if status == "clean" else "unverified"


def status_label(status: str) -> str:
    """A status as a person reads it (``expression_of_concern`` -> ``expression of concern``)."""
    return STATUS_LABELS.get(status) or status.replace("_", " ")


def notice_label(notice_type: str) -> str:
    """A notice type as a person reads it (``retract_and_replace`` -> ``retraction and
    replacement``); a type rwgate does not know is shown with spaces for underscores."""
    return NOTICE_LABELS.get(notice_type) or notice_type.replace("_", " ")


def capitalised(text: str) -> str:
    """The first letter upper-cased, the rest kept (``unknown DOI`` -> ``Unknown DOI``)."""
    return text[:1].upper() + text[1:]


def counted(status: str) -> str:
    """``N <this>``: works of ``status`` counted in a summary."""
    return _COUNTED.get(status) or status_label(status)


def history_note(status: str, notice_type: str, date: str, after: bool) -> str:
    """What the moment an entry entered the bibliography says, in words fitting the status:
    after a retraction the citation is likely the error; after an expression of concern it asks
    for a look; after a correction it is only a fact."""
    said = f"{'after' if after else 'before'} the {notice_label(notice_type)} of {date}"
    advice = _HISTORY.get(status, (None, None))[0 if after else 1]
    return f"{said}: {advice}" if advice else said


def summary_text(counts: dict[str, int], unacted: dict[str, int], policy: str) -> str:
    """The summary line of every human report, named for what the policy did: ``10 cited,
    10 checked: 0 failed, 6 annotated, 0 warned, 0 unverified, 1 with a correction (no action
    under this policy); policy default``. ``counts`` holds cited, checked, failed, annotated,
    warned and unverified; ``unacted`` the works with a notice the policy ignores, by status."""
    c = counts
    text = (
        f"{c['cited']} cited, {c['checked']} checked: {c['failed']} failed, "
        f"{c['annotated']} annotated, {c['warned']} warned, {c['unverified']} unverified"
    )
    quiet = [f"{n} {counted(s)}" for s, n in unacted.items() if n]
    if quiet:
        text += f", {', '.join(quiet)} (no action under this policy)"
    return f"{text}; policy {policy}"
