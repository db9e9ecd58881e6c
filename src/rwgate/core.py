"""References in, verdicts out: the one entry point every front end calls.

``rwgate check``, ``rw-filter``, the LaTeX hooks and the MCP server all end up in :func:`check`, so
they cannot disagree. The flow is one way: references -> batched look-ups in every source ->
merged evidence -> status -> policy action -> :class:`Citation`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

from rwgate import __version__
from rwgate.config import Settings
from rwgate.evidence import merge_notices, status_from_notices
from rwgate.models import (
    FLAGGED_STATUSES,
    Citation,
    Lookup,
    Notice,
    Problem,
    Reference,
    Report,
    SourceInfo,
    Status,
    Summary,
    ToolInfo,
)
from rwgate.policy import Policy
from rwgate.sources import OpenSources, open_sources
from rwgate.sources.base import Progress

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

    @property
    def exit_code(self) -> int:
        return 1 if any(c.action == "fail" for c in self.citations) else 0

    def summary(self) -> Summary:
        cs = self.citations
        return Summary(
            cited=len(cs),
            checked=sum(c.status in JUDGED for c in cs),
            flagged=sum(c.status in FLAGGED for c in cs),
            failed=sum(c.action == "fail" for c in cs),
            warned=sum(c.action == "warn" for c in cs),
            unverified=sum(c.status == "unverified" for c in cs),
        )

    def report(self) -> Report:
        """The JSON report ``rwgate.report/1``."""
        return Report(
            generated=self.generated,
            tool=ToolInfo(version=__version__),
            sources=self.sources,
            policy=self.policy.describe(),
            summary=self.summary(),
            citations=self.citations,
            warnings=[*self.warnings, *(str(p) for p in self.problems)],
            exit_code=self.exit_code,
        )


@dataclass
class _Evidence:
    """What the sources said about one reference, before policy."""

    status: Status
    lookups: list[Lookup] = field(default_factory=list)
    reason: str | None = None
    notices: list[Notice] = field(default_factory=list)
    doi: str | None = None


def _snapshot_date(info: SourceInfo | None) -> str:
    return info.as_of.date().isoformat() if info and info.as_of else "unknown date"


def _judge(
    crossref: Lookup,
    snap: Lookup | None,
    snap_info: SourceInfo | None,
    registry: bool,
    offline: bool = False,
) -> _Evidence:
    """DESIGN.md's evidence rules for one DOI, given what each source said.

    ``registry``: the snapshot holds Retraction Watch rows, so not being listed there means clean
    as of its date (a snapshot of recorded Crossref bodies alone proves nothing by omission).
    ``offline``: the report already says Crossref was not asked; no need to repeat it per work.
    """
    skipped = "" if offline else f" (Crossref not consulted: {crossref.error})"
    found = [lk for lk in (crossref, snap) if lk is not None and lk.outcome == "found"]
    if found:
        notices = merge_notices(n for lk in found for n in lk.notices)
        reason = None
        if crossref.outcome == "error" and not offline:
            reason = f"Crossref not consulted ({crossref.error}); Retraction Watch snapshot only"
        notice_for = [d for lk in found for d in lk.notice_for]
        if not notices and notice_for:
            reason = "this record is itself a notice about " + ", ".join(dict.fromkeys(notice_for))
        return _Evidence(status_from_notices(notices), found, reason, notices)
    if crossref.outcome == "not_found":
        return _Evidence("unknown_doi", [crossref], "no registry knows this DOI")
    if snap is not None and registry:
        # Offline, or Crossref failed: the Retraction Watch database is the registry of record.
        return _Evidence(
            "clean",
            [snap],
            f"not listed in the Retraction Watch snapshot of {_snapshot_date(snap_info)}{skipped}",
        )
    return _Evidence("unverified", [crossref], crossref.error or "no source could be asked")


def _citation(ref: Reference, ev: _Evidence, policy: Policy, warnings: list[str]) -> Citation:
    doi = ev.doi or ref.doi
    action, allowed, warning = policy.decide(ref.key, doi, ev.status)
    if warning:
        warnings.append(warning)
    meta = next((lk for lk in ev.lookups if lk.outcome == "found" and lk.title), None)
    reason = ev.reason
    if allowed is not None:
        reason = f"allowed: {allowed.reason}" + (f"; {reason}" if reason else "")
    return Citation(
        key=ref.key,
        doi=doi,
        status=ev.status,
        action=action,
        allowed=allowed is not None,
        reason=reason,
        notices=ev.notices,
        title=(meta.title if meta else None) or ref.title,
        journal=(meta.journal if meta else None) or ref.journal,
        year=(meta.year if meta else None) or ref.year,
        location=ref.location,
    )


def _unlooked(ref: Reference) -> _Evidence | None:
    """Verdicts that need no source at all."""
    if ref.missing:
        return _Evidence("missing_entry", reason="cited key is in no bibliography")
    if ref.doi is None and ref.raw_doi:
        return _Evidence("invalid_doi", reason=f"malformed DOI {ref.raw_doi!r}")
    return None


def _recover(
    references: Sequence[Reference], settings: Settings, warnings: list[str]
) -> tuple[list[Reference], dict[int, float]]:
    """With ``recover_dois``, entries without a DOI get the DOI of a verified title match.

    Returns the references (recovered ones with ``doi_origin="title"``) and the match confidence
    by position. Recovery is an extra: whatever goes wrong, the DOIs the user gave are still
    checked, unmatched entries stay ``no_doi``, and a warning says why.
    """
    refs = list(references)
    if not settings.recover_dois or not any(
        r.doi is None and r.raw_doi is None and not r.missing for r in refs
    ):
        return refs, {}
    if settings.offline:
        warnings.append("DOI recovery skipped: offline; entries without a DOI stay no_doi")
        return refs, {}
    # Imported here: verification loads rapidfuzz and the OpenAlex client, which a check
    # without recovery (every pandoc build) must not pay for.
    from rwgate.verify.verify import recover_dois

    try:
        recovery = recover_dois(refs, settings)
    except Exception as exc:  # any failure of the extra must leave the check itself intact
        warnings.append(f"DOI recovery failed ({exc}); entries without a DOI stay no_doi")
        return refs, {}
    warnings.extend(recovery.warnings)
    return recovery.references, recovery.confidence


def _recovered_reason(confidence: float, ev: _Evidence) -> str:
    said = f"{RECOVERED_FROM_TITLE} (verified match, confidence {confidence:.2f})"
    return f"{said}; {ev.reason}" if ev.reason else said


def check(
    references: Sequence[Reference],
    settings: Settings,
    progress: Progress | None = None,
    problems: Sequence[Problem] = (),
    sources: OpenSources | None = None,
) -> CheckResult:
    """Judge every reference with one batched look-up per source."""
    policy = settings.to_policy()
    recovery_warnings: list[str] = []
    references, recovered = _recover(references, settings, recovery_warnings)
    own = sources is None
    srcs = sources or open_sources(settings)
    warnings = [*srcs.warnings, *recovery_warnings]
    try:
        dois = list(dict.fromkeys(r.doi for r in references if r.doi and not r.missing))
        crossref = srcs.crossref.query_all(dois, progress) if dois else {}
        snapshot = srcs.snapshot.query_all(dois) if srcs.snapshot and dois else {}
        pmids = [r.pmid for r in references if r.pmid and not r.doi and not r.missing]
        by_pmid: dict[str, Lookup] = {}
        if pmids and srcs.snapshot is not None and hasattr(srcs.snapshot, "query_pmids"):
            by_pmid = srcs.snapshot.query_pmids(pmids)
        infos = srcs.infos()
        if srcs.cache.warning:  # the cache may also give out mid-check (a failed write)
            warnings.append(srcs.cache.warning)
    finally:
        if own:
            srcs.close()
    snap_info = next((i for i in infos if i.name == "snapshot"), None)
    errors = {lk.error or "error" for lk in crossref.values() if lk.outcome == "error"}
    if errors and not settings.offline:
        warnings.append("Crossref could not be asked for some DOIs: " + "; ".join(sorted(errors)))
    citations = []
    for index, ref in enumerate(references):
        ev = _unlooked(ref)
        if ev is None and ref.doi:
            ev = _judge(
                crossref[ref.doi], snapshot.get(ref.doi), snap_info, srcs.registry, settings.offline
            )
            if index in recovered:
                ev.reason = _recovered_reason(recovered[index], ev)
        elif ev is None and ref.pmid and by_pmid.get(ref.pmid, None) is not None:
            lk = by_pmid[ref.pmid]
            if lk.outcome == "found":
                status = status_from_notices(lk.notices)
                reason = f"matched by PMID {ref.pmid}"
                ev = _Evidence(status, [lk], reason, lk.notices, doi=lk.doi or None)
        if ev is None:
            ev = _Evidence("no_doi", reason="entry has no DOI")
        citations.append(_citation(ref, ev, policy, warnings))
    return CheckResult(
        citations=citations,
        policy=policy,
        sources=infos,
        warnings=list(dict.fromkeys(warnings)),
        problems=list(problems),
    )
