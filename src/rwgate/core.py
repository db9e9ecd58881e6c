"""References in, verdicts out: the one entry point every front end calls.

``rwgate check``, ``rw-filter``, the LaTeX hooks and the MCP server all end up in :func:`check`
(through :mod:`rwgate.kit`), so they cannot disagree. The flow is one way: references -> one
batched look-up per source -> merged evidence -> status -> policy action -> :class:`Citation`.

The core never names a source. It asks every open source (:mod:`rwgate.sources`) for the
identifiers that source answers, and merges what they said by what each declares about itself
(``absence``: what "not listed" from it means). A new source changes nothing here.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from rwgate import __version__
from rwgate.config import Settings
from rwgate.doi import short_doi
from rwgate.evidence import merge_notices, status_from_notices
from rwgate.models import (
    FLAGGED_STATUSES,
    Action,
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
from rwgate.sources import Answers, OpenSources, open_sources
from rwgate.sources.interface import IdKind, IntegritySource, Progress
from rwgate.trusted import gc_paused, trusted

FLAGGED: frozenset[Status] = frozenset(FLAGGED_STATUSES)
JUDGED: frozenset[Status] = FLAGGED | {"clean"}
RECOVERED_FROM_TITLE = "DOI recovered from title"
_FLAG_RANK = {status: i for i, status in enumerate(FLAGGED_STATUSES)}  # most severe first


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
    """The lockfile this result was compared with (:mod:`rwgate.lock`), if any."""

    @property
    def exit_code(self) -> int:
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
            policy=self.policy.describe(),
            summary=self.summary(),
            citations=self.citations,
            warnings=[*self.warnings, *(str(p) for p in self.problems)],
            since=self.since,
            exit_code=self.exit_code,
        )


@dataclass
class _Evidence:
    """What the sources said about one reference, before policy."""

    status: Status
    basis: list[str] = field(default_factory=list)
    lookups: list[Lookup] = field(default_factory=list)
    reason: str | None = None
    notices: list[Notice] = field(default_factory=list)
    doi: str | None = None


def _as_of(info: SourceInfo) -> str:
    return info.as_of.date().isoformat() if info.as_of else "unknown date"


def _judge(said: list[tuple[IntegritySource, Lookup]], offline: bool) -> _Evidence:
    """DESIGN.md's evidence rules for one DOI, given what each source said.

    Found records decide (their notices merged); else a DOI registry that does not know the DOI
    makes it ``unknown_doi``; else a complete registry of notices that does not list it makes it
    ``clean`` as of its date, but only when no other source failed: when Crossref was asked and
    failed, an unlisted work is ``unverified`` (publisher notices such as Cochrane withdrawals are
    not in Retraction Watch at all). ``offline`` (the user's choice, not a failure): sources that
    were not asked do not count as failed.
    """
    found: list[tuple[IntegritySource, Lookup]] = []
    failed: list[tuple[IntegritySource, Lookup]] = []
    foreign: list[str] = []
    unknown = clean = None
    for source, lk in said:  # one pass: this runs once per cited work
        outcome = lk.outcome
        if outcome == "found":
            found.append((source, lk))
        elif outcome == "error":
            if not offline:
                failed.append((source, lk))
        elif outcome == "foreign":
            foreign.append(lk.error or "")
        elif outcome == "not_found":
            absence = source.absence
            if absence == "unknown" and unknown is None:
                unknown = (source, lk)
            elif absence == "clean" and clean is None:
                clean = (source, lk)
    skipped = (
        "; ".join(f"{s.title} not consulted ({lk.error})" for s, lk in failed) if failed else ""
    )
    if found:
        notices = merge_notices(n for _, lk in found for n in lk.notices)
        reason = f"{skipped}; {' and '.join(s.title for s, _ in found)} only" if skipped else None
        notice_for = [d for _, lk in found for d in lk.notice_for]
        if not notices and notice_for:
            reason = "this record is itself a notice about " + ", ".join(dict.fromkeys(notice_for))
        basis = [s.name for s, _ in found]
        return _Evidence(
            status_from_notices(notices), basis, [lk for _, lk in found], reason, notices
        )
    if unknown is not None:
        return _Evidence(
            "unknown_doi", [unknown[0].name], [unknown[1]], "no registry knows this DOI"
        )
    # A DOI another agency holds (DataCite: arXiv, Zenodo) is judged by the registry alone.
    elsewhere = "; ".join(foreign)
    if clean is not None:
        listed = _not_listed(clean[0])
        if skipped:  # asked and failed is not offline by choice: unlisted proves nothing
            return _Evidence("unverified", [], [], f"{skipped}; {listed}")
        return _Evidence(
            "clean", [clean[0].name], [clean[1]], f"{elsewhere}; {listed}" if elsewhere else listed
        )
    if elsewhere:
        why = f"{elsewhere}: no complete Retraction Watch snapshot to judge it"
        return _Evidence("unverified", [], [], why)
    errors = [lk.error for _, lk in said if lk.outcome == "error" and lk.error]
    return _Evidence("unverified", [], [], "; ".join(errors) or "no source could be asked")


_NOT_LISTED: dict[tuple[str, str], str] = {}


def _not_listed(source: IntegritySource) -> str:
    """``not listed in the SOURCE of DATE``: one string shared by every unlisted work (100,000
    copies of it were megabytes of a large check)."""
    said = (source.title, _as_of(source.info()))
    if said not in _NOT_LISTED:
        _NOT_LISTED[said] = f"not listed in the {said[0]} of {said[1]}"
    return _NOT_LISTED[said]


def _by_pmid(pmid: str, said: list[tuple[IntegritySource, Lookup]], offline: bool) -> _Evidence:
    """A work judged by its PubMed id: listed, its notices; unlisted in a complete registry, clean
    as of its date; else unverified. The Lookup's ``doi`` is the paper's DOI when it has one."""
    ev = _judge(said, offline)
    found = next((lk for lk in ev.lookups if lk.outcome == "found"), None)
    if found is not None and found.doi:
        ev.doi = found.doi
    if ev.status == "unknown_doi":  # no PMID registry answers "unknown": never a DOI verdict
        ev = _Evidence("unverified", reason="no source knows this PubMed id")
    said_reason = f"PMID {pmid}" + (f": {ev.reason}" if ev.reason else "")
    a_notice = found is not None and found.notice_for and not found.notices
    ev.reason = said_reason if found is None or a_notice else f"matched by PMID {pmid}"
    return ev


def _more_severe(a: _Evidence, b: _Evidence) -> _Evidence:
    """Of a work's DOI and PMID verdicts, the one that says more: a flagged status over any
    other, the more severe of two flagged ones, else the DOI's."""
    rank = _FLAG_RANK
    if b.status in rank and (a.status not in rank or rank[b.status] < rank[a.status]):
        return b
    return a


def _citation(
    ref: Reference,
    ev: _Evidence,
    policy: Policy,
    warnings: list[str],
    actions: dict[Status, Action],
) -> Citation:
    doi = ev.doi or ref.doi
    if policy.allow:
        action, allowed, warning = policy.decide(ref.key, doi, ev.status, actions=actions)
        if warning:
            warnings.append(warning)
    else:  # what decide() says without an allow list, without its call (100,000 works)
        action, allowed = actions[ev.status], None
    meta = None
    for lk in ev.lookups:
        if lk.outcome == "found" and lk.title:
            meta = lk
            break
    reason = ev.reason
    if ref.doi_origin == "title" and ref.doi_confidence is not None:
        said = f"{RECOVERED_FROM_TITLE} (verified match, confidence {ref.doi_confidence:.2f})"
        reason = f"{said}; {reason}" if reason else said
    if allowed is not None:
        reason = f"allowed: {allowed.reason}" + (f"; {reason}" if reason else "")
    # Every value here is rwgate's own, already typed: built without validating again.
    return trusted(
        Citation,
        {
            "key": ref.key,
            "doi": doi,
            "status": ev.status,
            "action": action,
            "allowed": allowed is not None,
            "reason": reason,
            "basis": ev.basis,
            "notices": ev.notices,
            "title": (meta.title if meta else None) or ref.title,
            "journal": (meta.journal if meta else None) or ref.journal,
            "year": (meta.year if meta else None) or ref.year,
            "location": ref.location,
            "change": None,
            "added": None,
        },
    )


def _readings(ref: Reference, answers: Answers, offline: bool) -> _Evidence:
    """An entry BibTeX and pandoc read differently: each reading is judged, and a flagged one
    decides (the more severe), since either may be the work the output prints; else the entry
    is ``unverified``, with the reason."""
    own = _evidence(ref.model_copy(update={"conflict": None}), answers, offline)
    other = ref.model_copy(
        update={"conflict": None, "doi": ref.other_doi, "pmid": ref.other_pmid, "raw_doi": None}
    )
    theirs = _evidence(other, answers, offline)
    worse = _more_severe(own, theirs)
    if worse is theirs and worse.doi is None:
        worse.doi = ref.other_doi  # the citation names the DOI of the reading that decided
    why = f"{ref.location or ref.key}: {ref.conflict}"
    if worse.status in _FLAG_RANK:
        worse.reason = f"{why}; the more severe reading is judged" + (
            f"; {worse.reason}" if worse.reason else ""
        )
        return worse
    return _Evidence("unverified", reason=why)


def _evidence(ref: Reference, answers: Answers, offline: bool) -> _Evidence:
    if ref.missing:
        return _Evidence("missing_entry", reason="cited key is in no bibliography")
    if ref.conflict:  # BibTeX and pandoc print different works: both readings are judged
        return _readings(ref, answers, offline)
    if ref.doi is None and ref.raw_doi and short_doi(ref.raw_doi):
        why = f"shortDOI {ref.raw_doi!r} could not be resolved to a DOI (offline, or the resolver)"
        return _Evidence("unverified", reason=why)
    if ref.doi is None and ref.raw_doi:
        return _Evidence("invalid_doi", reason=f"malformed DOI {ref.raw_doi!r}")
    by_pmid = _by_pmid(ref.pmid, answers.get(("pmid", ref.pmid), []), offline) if ref.pmid else None
    if ref.doi:
        ev = _judge(answers.get(("doi", ref.doi), []), offline)
        return ev if by_pmid is None else _more_severe(ev, by_pmid)
    if by_pmid is not None and by_pmid.status != "unverified":
        return by_pmid
    return _Evidence(
        "no_doi", reason="entry has no DOI" + (f"; {by_pmid.reason}" if by_pmid else "")
    )


def _source_errors(answers: Answers, offline: bool, errors: dict[str, set[str]]) -> None:
    """Add to ``errors`` each source that could not answer some identifiers, with the reasons."""
    if offline:
        return
    for (kind, _), said in answers.items():
        for source, lk in said:
            if lk.outcome == "error":
                errors.setdefault(
                    f"{source.title} could not be asked for some {kind.upper()}s", set()
                ).add(lk.error or "error")


CHUNK = 10_000
"""References asked and judged at a time (one batched look-up per source per chunk)."""


def _wanted(references: Sequence[Reference]) -> dict[IdKind, list[str]]:
    """The distinct DOIs and PubMed ids the sources are asked for."""
    live = [r for r in references if not r.missing]
    return {
        "doi": list(dict.fromkeys(d for r in live for d in (r.doi, r.other_doi) if d)),
        "pmid": list(dict.fromkeys(p for r in live for p in (r.pmid, r.other_pmid) if p)),
    }


def _offset(progress: Progress | None, start: int, total: int) -> Progress | None:
    """``progress`` for one chunk, counted over the whole check."""
    if progress is None:
        return None
    return lambda done, _of: progress(min(start + done, total), total)


def check(
    references: Sequence[Reference],
    settings: Settings,
    progress: Progress | None = None,
    problems: Sequence[Problem] = (),
    sources: OpenSources | None = None,
    warnings: Sequence[str] = (),
) -> CheckResult:
    """Judge every reference with one batched look-up per source and identifier kind.

    References are asked and judged :data:`CHUNK` at a time (one batched look-up per source and
    chunk): each chunk's answers are let go once its verdicts are built, so a check of 100,000
    works holds its verdicts, not every source's answers beside them.
    """
    policy = settings.to_policy()
    own = sources is None
    srcs = sources or open_sources(settings)
    notes = [*srcs.warnings, *warnings]
    actions = policy.actions()
    citations: list[Citation] = []
    errors: dict[str, set[str]] = {}  # one line per source that could not answer, all chunks
    said: list[str] = []  # what the policy says about single citations
    total = len(references)
    try:  # judged while the sources are open: a reason may quote a source's date
        with gc_paused():
            for start in range(0, total, CHUNK):
                chunk = references[start : start + CHUNK]
                answers = srcs.ask(_wanted(chunk), _offset(progress, start, total))
                _source_errors(answers, settings.offline, errors)
                citations += [
                    _citation(ref, _evidence(ref, answers, settings.offline), policy, said, actions)
                    for ref in chunk
                ]
                del answers
            infos = srcs.infos()
            if srcs.cache.warning:  # the cache may also give out mid-check (a failed write)
                notes.append(srcs.cache.warning)
            notes += [f"{head}: " + "; ".join(sorted(why)) for head, why in errors.items()]
            notes += said
    finally:
        if own:
            srcs.close()
    return CheckResult(
        citations=citations,
        policy=policy,
        sources=infos,
        warnings=list(dict.fromkeys(notes)),
        problems=list(problems),
    )
