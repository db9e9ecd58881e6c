"""The evidence rules of DESIGN.md for one cited work, given what every source said about it.

Kept apart from :mod:`rwgate.core` (which asks the sources and applies the policy) so that the
rules read as one piece: a DOI's verdict (:func:`judge`), a PubMed id's (:func:`by_pmid`), a
title match's (:func:`by_title`), and whether the identifier names the cited work at all
(:func:`with_identity`). The several readings of one key are folded in :mod:`rwgate.core`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from rwgate.contract.doi import short_doi
from rwgate.contract.evidence import merge_notices, status_from_notices
from rwgate.contract.models import Lookup, Notice, Reference, Status
from rwgate.contract.vocab import FLAGGED_STATUSES, SERIOUS_STATUSES
from rwgate.identify.bytitle import TitleWork
from rwgate.identify.same import mismatch
from rwgate.sources import Answers
from rwgate.sources.interface import IntegritySource
from rwgate.sources.preprint_ids import preprint_server
from rwgate.titles import TitleRow

FLAG_RANK = {status: i for i, status in enumerate(FLAGGED_STATUSES)}  # most severe first
SEVERITY: dict[Status, int] = {
    status: i
    for i, status in enumerate(
        (
            *FLAGGED_STATUSES,
            *("doi_mismatch", "invalid_doi", "unknown_doi", "missing_entry"),
            *("unverified", "no_doi", "clean"),
        )
    )
}
"""Every status, most severe first: of several readings of one cited key whose actions tie, the
first here decides (a work that could not be judged before one judged clean)."""


@dataclass
class Evidence:
    """What the sources said about one reference, before policy."""

    status: Status
    basis: list[str] = field(default_factory=list)
    lookups: list[Lookup] = field(default_factory=list)
    reason: str | None = None
    notices: list[Notice] = field(default_factory=list)
    doi: str | None = None
    mismatch: str | None = None
    """Why the identifier names another work than the entry (:func:`with_identity`), if it does."""


def judge(said: list[tuple[IntegritySource, Lookup]], offline: bool) -> Evidence:
    """DESIGN.md's evidence rules for one DOI, given what each source said.

    Found records decide (their notices merged): those of a source that vouches for "found,
    no notices" (:attr:`IntegritySource.vouches`) or that carry notices. Else a DOI registry
    that does not know the DOI makes it ``unknown_doi``; else a complete registry of notices that
    does not list it makes it ``clean`` as of its date, but only when no other source failed:
    when Crossref was asked and failed, an unlisted work is ``unverified`` (publisher notices
    such as Cochrane withdrawals are not in Retraction Watch at all). ``offline`` (the user's
    choice, not a failure): sources that were not asked do not count as failed.
    """
    found: list[tuple[IntegritySource, Lookup]] = []
    failed: list[tuple[IntegritySource, Lookup]] = []
    foreign: list[str] = []
    unknown = clean = None
    for source, lk in said:  # one pass: this runs once per cited work
        outcome = lk.outcome
        if outcome == "found":
            if source.vouches or lk.notices:  # an unvouched "found" proves nothing alone
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
    skipped = "; ".join(f"{s.title} not consulted ({lk.error})" for s, lk in failed)
    if found:
        notices = merge_notices(n for _, lk in found for n in lk.notices)
        reason = f"{skipped}; {' and '.join(s.title for s, _ in found)} only" if skipped else None
        notice_for = [d for _, lk in found for d in lk.notice_for]
        if not notices and notice_for:
            reason = "this record is itself a notice about " + ", ".join(dict.fromkeys(notice_for))
        basis = [s.name for s, _ in found]
        return Evidence(
            status_from_notices(notices), basis, [lk for _, lk in found], reason, notices
        )
    if unknown is not None:
        return Evidence(
            "unknown_doi", [unknown[0].name], [unknown[1]], "no registry knows this DOI"
        )
    # A DOI another agency holds (DataCite: arXiv, Zenodo) is judged by the registry alone.
    elsewhere = "; ".join(foreign)
    if clean is not None:
        listed = _not_listed(clean[0])
        if skipped:  # asked and failed is not offline by choice: unlisted proves nothing
            return Evidence("unverified", [], [], f"{skipped}; {listed}")
        return Evidence(
            "clean", [clean[0].name], [clean[1]], f"{elsewhere}; {listed}" if elsewhere else listed
        )
    if elsewhere:
        why = f"{elsewhere}: no complete Retraction Watch snapshot to judge it"
        return Evidence("unverified", [], [], why)
    errors = [lk.error for _, lk in said if lk.outcome == "error" and lk.error]
    return Evidence("unverified", [], [], "; ".join(errors) or "no source could be asked")


def _not_listed(source: IntegritySource) -> str:
    """``not listed in the SOURCE of DATE``, interned: one string shared by every unlisted work
    (100,000 copies of it were megabytes of a large check)."""
    as_of = source.info().as_of
    date = as_of.date().isoformat() if as_of else "unknown date"
    return sys.intern(f"not listed in the {source.title} of {date}")


def by_pmid(pmid: str, said: list[tuple[IntegritySource, Lookup]], offline: bool) -> Evidence:
    """A work judged by its PubMed id: listed, its notices; unlisted in a complete registry, clean
    as of its date; else unverified. The Lookup's ``doi`` is the paper's DOI when it has one."""
    ev = judge(said, offline)
    found = next((lk for lk in ev.lookups if lk.outcome == "found"), None)
    if found is not None and found.doi:
        ev.doi = found.doi
    if ev.status == "unknown_doi":  # no PMID registry answers "unknown": never a DOI verdict
        ev = Evidence("unverified", reason="no source knows this PubMed id")
    said_reason = f"PMID {pmid}" + (f": {ev.reason}" if ev.reason else "")
    a_notice = found is not None and found.notice_for and not found.notices
    ev.reason = said_reason if found is None or a_notice else f"matched by PMID {pmid}"
    return ev


def more_severe(a: Evidence, b: Evidence) -> Evidence:
    """Of a work's DOI and PMID verdicts, the one that says more: a flagged status over any
    other, the more severe of two flagged ones, else the DOI's."""
    rank = FLAG_RANK
    if b.status in rank and (a.status not in rank or rank[b.status] < rank[a.status]):
        return b
    return a


def evidence(ref: Reference, answers: Answers, offline: bool) -> Evidence:
    if ref.missing:
        return Evidence("missing_entry", reason="cited key is in no bibliography")
    if ref.doi is None and ref.raw_doi and short_doi(ref.raw_doi):
        why = f"shortDOI {ref.raw_doi!r} could not be resolved to a DOI (offline, or the resolver)"
        return Evidence("unverified", reason=why)
    if ref.doi is None and ref.raw_doi:
        return Evidence("invalid_doi", reason=f"malformed DOI {ref.raw_doi!r}")
    pmid_ev = None
    if ref.pmid:
        pmid_ev = by_pmid(ref.pmid, answers.get(("pmid", ref.pmid), []), offline)
        pmid_ev = with_identity(ref, pmid_ev, "PMID ", ref.pmid)
    if ref.doi:
        ev = with_identity(ref, judge(answers.get(("doi", ref.doi), []), offline), "doi:", ref.doi)
        ev = as_preprint(ref.doi, ev, answers, offline)
        return ev if pmid_ev is None else more_severe(ev, pmid_ev)
    if pmid_ev is not None and pmid_ev.status != "unverified":
        return pmid_ev
    return Evidence(
        "no_doi", reason="entry has no DOI" + (f"; {pmid_ev.reason}" if pmid_ev else "")
    )


def as_preprint(doi: str, ev: Evidence, answers: Answers, offline: bool) -> Evidence:
    """``ev`` for a preprint's DOI: ``clean`` only when a source that states the server's
    withdrawals (:attr:`IntegritySource.servers`) found it (a registry's absence, or Crossref's
    record of posted content, says nothing of a withdrawal); a server that publishes no
    withdrawals (SSRN, Research Square, ...) leaves it ``unverified`` with that reason. The journal
    version the server names is judged too (:func:`_published`)."""
    server = preprint_server(doi)
    if server is None:
        return ev
    said = answers.get(("doi", doi), [])
    stating = [(s, lk) for s, lk in said if server.name in s.servers]
    vouched = [lk for s, lk in stating if lk.outcome == "found" and s.vouches]
    if ev.status == "clean" and not vouched:
        errors = "; ".join(dict.fromkeys(lk.error for _, lk in stating if lk.error))
        why = server.reason or f"{server.name} withdrawals could not be checked" + (
            f" ({errors})" if errors else " (no source states them here)"
        )
        ev = Evidence("unverified", reason=f"{why}; {ev.reason}" if ev.reason else why)
    elif ev.status == "clean" and ev.reason is None:
        ev.reason = f"not withdrawn on {server.name} (judged as a preprint)"
    elif ev.status == "withdrawn" and ev.reason is None:  # the authors' reason, in every report
        labels = [n.label for n in ev.notices if n.type == "withdrawal" and n.label]
        ev.reason = f"withdrawn on {server.name}" + (f": {labels[0]}" if labels else "")
    published = next(
        (lk.published_doi for _, lk in stating if lk.outcome == "found" and lk.published_doi), None
    )
    if published and published != doi:
        return _published(ev, published, answers, offline)
    return ev


def _published(ev: Evidence, doi: str, answers: Answers, offline: bool) -> Evidence:
    """The preprint's verdict and its journal version's, the worse deciding: a flagged journal
    version over a less severe preprint verdict; a journal version that could not be judged
    leaves a clean preprint ``unverified``. The reason says which version it is."""
    journal = judge(answers.get(("doi", doi), []), offline)
    note = f"published as doi:{doi}"
    if more_severe(ev, journal) is journal:
        journal.reason = f"{note}: {journal.reason}" if journal.reason else note
        return journal
    if journal.status == "clean" or ev.status in FLAG_RANK:
        ev.reason = f"{note} ({journal.status}); {ev.reason}" if ev.reason else note
        return ev
    why = f"{note}, which could not be judged ({journal.reason or journal.status})"
    if ev.status == "clean":
        return Evidence("unverified", reason=why)
    ev.reason = f"{why}; {ev.reason}" if ev.reason else why
    return ev


def published_wanted(answers: Answers) -> list[str]:
    """Journal versions the preprint servers name that were not asked yet (asked next)."""
    out = [
        lk.published_doi
        for (kind, _), said in answers.items()
        if kind == "doi"
        for source, lk in said
        if source.servers and lk.outcome == "found" and lk.published_doi
    ]
    return [d for d in dict.fromkeys(out) if ("doi", d) not in answers]


def by_title(works: Sequence[TitleWork], answers: Answers, offline: bool) -> list[Evidence]:
    """One verdict per registry work a DOI-less entry's title fits
    (:mod:`rwgate.identify.bytitle`), by its DOI or PubMed id as every source knows it (Crossref
    too, when online); each reason names the record matched and the identifier to add."""
    out = []
    for work in works:
        if work.doi:
            ev = judge(answers.get(("doi", work.doi), []), offline)
            ev.doi = work.doi
        elif work.pmid:
            ev = by_pmid(work.pmid, answers.get(("pmid", work.pmid), []), offline)
        elif (lookup := work.source.title_lookup(work.rows)) is not None:
            ev = judge([(work.source, lookup)], offline)
        else:
            ev = Evidence("unverified", reason=f"{work.source.title} cannot say more of this work")
        note = title_match_note(work.rows, ev.doi or work.doi)
        ev.reason = f"{note}; {ev.reason}" if ev.reason else note
        ev.basis = [*ev.basis, "title"]  # a verdict reached through a title match
        out.append(ev)
    return out


def title_match_note(rows: Sequence[TitleRow], doi: str | None) -> str:
    """What the report says of an entry judged by its title: the registry record it matched,
    and the identifier to add."""
    ids = sorted({r.record_id for r in rows if r.record_id}, key=lambda x: (len(x), x))
    named = ", ".join(f"RW#{i}" for i in ids) or "a registry record"
    if doi:
        return f"matched by title to {named}, add its DOI ({doi})"
    pmids = sorted({r.pmid for r in rows if r.pmid})
    if pmids:
        return f"matched by title to {named}, add its PMID ({pmids[0]})"
    return f"matched by title to {named} (the registry gives it no DOI)"


def with_identity(ref: Reference, ev: Evidence, kind: str, ident: str) -> Evidence:
    """``ev`` with the identity check applied: when the identifier names another work
    (:func:`rwgate.identify.same.mismatch`), a notice that weakens that work (retracted ... unknown
    notice) keeps its status, anything else becomes ``doi_mismatch``; either way the reason
    says so first, the notices stay, and the policy's action is the more severe of the two
    statuses' (:attr:`Evidence.mismatch`)."""
    if not ref.title or not ev.lookups:  # nothing to compare (most unlisted works)
        return ev
    said = mismatch(ref, ev.lookups, kind + ident)
    if said is None:
        return ev
    ev.mismatch = said
    if ev.status not in SERIOUS_STATUSES:
        ev.status = "doi_mismatch"
    ev.reason = f"{said}; {ev.reason}" if ev.reason else said
    return ev
