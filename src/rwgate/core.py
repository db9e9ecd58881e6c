"""References in, verdicts out: the one entry point every front end calls.

``rwgate check``, ``rw-filter``, the LaTeX hooks and the MCP server all end up in :func:`check`
(through :mod:`rwgate.frontends.kit`), so they cannot disagree. The flow is one way: references ->
the works they name (:mod:`rwgate.identify`) -> one batched look-up per source -> merged evidence
-> status -> policy action -> :class:`Citation`, each entry judged over its candidates.

The core never names a source. It asks every open source (:mod:`rwgate.sources`) for the
identifiers that source answers, and merges what they said by what each declares about itself
(``absence``: what "not listed" from it means). A new source changes nothing here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rwgate.contract.models import Action, Citation, Problem, Reference, Status
from rwgate.contract.trusted import gc_paused, trusted
from rwgate.identify import Identified, Identifier
from rwgate.settings import recorded
from rwgate.settings.config import Settings
from rwgate.settings.policy import Policy
from rwgate.sources import Answers, OpenSources, open_sources
from rwgate.sources.interface import Progress
from rwgate.sources.net.http import NO_NETWORK
from rwgate.verdicts.judge import (
    FLAG_RANK,
    SEVERITY,
    Evidence,
    by_title,
    evidence,
    published_wanted,
)
from rwgate.verdicts.result import RECOVERED_FROM_TITLE, CheckResult

_ACTION_RANK: dict[Action, int] = {"fail": 0, "annotate": 1, "warn": 2, "ignore": 3}


def _citation(
    ref: Reference,
    ev: Evidence,
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
    if ev.mismatch is not None:  # another work's record: the entry's own title, the worse action
        mismatch = policy.decide(ref.key, doi, "doi_mismatch", actions=actions)[0]
        action = min(action, mismatch, key=_ACTION_RANK.__getitem__)
    else:
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


def _error_line(head: str, why: set[str], srcs: OpenSources) -> str:
    """One line per source that could not answer; when it cannot be reached at all (no network),
    the line says what to do instead of leaving each build to find out again."""
    line = f"{head}: " + "; ".join(sorted(why))
    if not any(NO_NETWORK in reason for reason in why):
        return line
    line += ". Without a network, run with --offline (or RWGATE_OFFLINE=1) to judge from the cache"
    if any(getattr(source, "is_registry", False) for source in srcs.sources):
        return line + " and the Retraction Watch snapshot"
    return line + "; `rwgate data update`, once online, downloads the full Retraction Watch export"


CHUNK = 10_000
"""References asked and judged at a time (one batched look-up per source per chunk)."""


def _units(chunk: Sequence[Reference]) -> Sequence[Reference]:
    """Every reading to judge: each reference, followed by its other readings (DESIGN.md rule 1:
    another definition of the key, another tool's reading). Most chunks have none."""
    if not any(ref.readings for ref in chunk):
        return chunk
    return [unit for ref in chunk for unit in (ref, *ref.readings)]


def _judged(found: Identified, answers: Answers, offline: bool) -> list[list[Evidence]]:
    """Each entry's verdicts: its own identifiers' one; or, when they leave it ``no_doi``, one
    per registry work its title fits (:func:`rwgate.verdicts.judge.by_title`)."""
    out = []
    for i, ref in enumerate(found.refs):
        ev = evidence(ref, answers, offline)
        works = found.by_title.get(i) if ev.status == "no_doi" else None
        out.append(by_title(works, answers, offline) if works else [ev])
    return out


def _decide(
    chunk: Sequence[Reference],
    units: Sequence[Reference],
    judged: Sequence[Sequence[Evidence]],
    verdict: Callable[[Reference, Evidence], Citation],
) -> list[Citation]:
    """One citation per reference of ``chunk``, the one place where several verdicts of one
    cited key fold: the registry works a title fits, and a reference's several readings. Every
    one is judged and the worst decides, by the policy's action, then by :data:`SEVERITY` (a
    tie: the reading the toolchain prints, listed first). An entry the tools read apart
    (``conflict``) whose worst reading is not flagged is ``unverified``: which work prints is
    not known, and neither reading may vouch for the other."""
    out: list[Citation] = []
    at = 0
    for ref in chunk:
        n = 1 + len(ref.readings)
        options = [
            verdict(u, ev)
            for u, evs in zip(units[at : at + n], judged[at : at + n], strict=True)
            for ev in evs
        ]
        at += n
        worst = options[0] if len(options) == 1 else min(options, key=_rank)
        if n == 1:
            out.append(worst)
            continue
        where = ", ".join(dict.fromkeys(str(u.location or u.key) for u in (ref, *ref.readings)))
        why = ref.conflict or f"{n} readings of key {ref.key!r} ({where})"
        if ref.conflict and worst.status not in FLAG_RANK:
            out.append(verdict(ref, Evidence("unverified", reason=f"{where}: {why}")))
            continue
        reason = worst.reason
        if ref.conflict or len({c.status for c in options}) > 1:
            said = f"{why}; every reading is judged, the more severe reading decides"
            reason = f"{said}; {reason}" if reason else said
        out.append(worst.model_copy(update={"key": ref.key, "reason": reason}))
    return out


def _rank(citation: Citation) -> tuple[int, int]:
    return _ACTION_RANK[citation.action], SEVERITY[citation.status]


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
    """Judge every reference, :data:`CHUNK` at a time: each chunk's answers are let go once its
    verdicts are built, so a check of 100,000 works holds its verdicts, not every source's
    answers beside them."""
    policy = settings.to_policy()
    own = sources is None
    srcs = sources or open_sources(settings)
    notes = [*srcs.warnings, *warnings]
    identify = Identifier(settings, srcs, notes)
    actions = policy.actions()
    citations: list[Citation] = []
    errors: dict[str, set[str]] = {}  # one line per source that could not answer, all chunks
    said: list[str] = []  # what the policy says about single citations
    total = len(references)
    try:  # judged while the sources are open: a reason may quote a source's date
        with gc_paused():
            for start in range(0, total, CHUNK):
                chunk = references[start : start + CHUNK]
                found = identify.chunk(_units(chunk))
                answers = srcs.ask(found.wanted(), _offset(progress, start, total))
                if journals := published_wanted(answers):  # the preprints' journal versions
                    answers.update(srcs.ask({"doi": journals}))
                if srcs.first_end != float("inf"):  # the run's record: no replay past a TTL
                    recorded.note_expiry(srcs.first_end)
                _source_errors(answers, settings.offline, errors)
                judged = _judged(found, answers, settings.offline)
                del answers
                citations += _decide(
                    chunk, found.refs, judged, lambda r, e: _citation(r, e, policy, said, actions)
                )
            infos, complete = srcs.infos(), not srcs.failed
            if srcs.cache.warning:  # the cache may also give out mid-check (a failed write)
                notes.append(srcs.cache.warning)
            notes += [_error_line(head, why, srcs) for head, why in errors.items()]
            notes += said
    finally:
        identify.close()
        if own:
            srcs.close()
    policy.allow_ends()  # noted in the run's record, with the look-ups' ends: the one expiry
    return CheckResult(
        citations=citations,
        policy=policy,
        sources=infos,
        warnings=list(dict.fromkeys(notes)),
        problems=list(problems),
        complete=complete,
    )
