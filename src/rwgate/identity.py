"""Is this the work the entry meant? Two pure judgements of identity.

1. **Does the identifier name the cited work?** (:func:`mismatch`) An entry's DOI or PubMed id
   resolves to a record (Crossref's, the snapshot's, the cache's); when that record's title
   clearly differs from the entry's, *and* their years (and first authors, where both give one)
   do too, the identifier names another work: ``doi_mismatch``. The rule, chosen on the
   project's real bibliographies (every fixture entry, 0 false mismatches; see the README):

   - titles are compared by :func:`rwgate.titles.identity_similarity` (after TeX decoding by
     the readers, accents, case, markup, punctuation and the "RETRACTED:" marker folded away);
     a title whose words all appear in the other's (a subtitle left out, "Correction to: X") is
     the same; otherwise the mean of token-set and token-sort ratios. Below
     :data:`TITLE_MISMATCH` (0.6) the titles clearly differ: unrelated titles of one field in
     the fixtures score up to 0.76 (the rule then also needs the year), spelling variants of
     one title 0.85 and more;
   - a year within :data:`YEAR_SLACK` of the record's (online-first against print) keeps it the
     same work: a translated title changes every word but not the year;
   - one record that agrees is enough (Crossref's and the snapshot's titles may differ).

2. **Which registry work is this DOI-less entry?** (:func:`title_agrees`) An entry without a
   DOI is matched against the registry's rows of the same normalised title
   (:func:`rwgate.titles.title_key`), and a row is that work only when the year agrees (within
   one) or the journal does; a title of fewer than :data:`SHORT_TITLE_WORDS` words
   ("Editorial", "Reply to comment") needs both.
"""

from __future__ import annotations

from collections.abc import Sequence

from rwgate.models import Lookup, Reference
from rwgate.titles import TitleRow, identity_similarity, same_family, same_venue

TITLE_MISMATCH = 0.6
YEAR_SLACK = 1
SHORT_TITLE_WORDS = 4


def _years_agree(a: int | None, b: int | None) -> bool | None:
    if a is None or b is None:
        return None
    return abs(a - b) <= YEAR_SLACK


def _differs(ref: Reference, record: Lookup, record_author: str | None) -> bool:
    """The record is clearly another work: title, year and first author all differ (each where
    both sides have it; a title is always there)."""
    if _years_agree(ref.year, record.year):  # first: one comparison, and most entries stop here
        return False
    similarity = identity_similarity(ref.title, record.title)
    if similarity is None or similarity >= TITLE_MISMATCH:
        return False
    first = ref.authors[0] if ref.authors else None
    return not same_family(first, record_author)


def mismatch(
    ref: Reference, lookups: Sequence[Lookup], named: str, authors: Sequence[str | None] = ()
) -> str | None:
    """Why the identifier (``named``: ``doi:10.1038/x``, ``PMID 123``) names another work than
    the entry, in words naming the record's own title and year; None when it names this one or
    nothing can tell (no title on either side). ``authors``: the records' first authors, where
    a source gives them (parallel to ``lookups``)."""
    if not ref.title:
        return None
    record = None
    for i, lk in enumerate(lookups):  # one pass, no list: this runs once per cited work
        if lk.outcome != "found" or not lk.title:
            continue
        if not _differs(ref, lk, authors[i] if i < len(authors) else None):
            return None
        record = record or lk
    if record is None:
        return None
    year = f" ({record.year})" if record.year else ""
    title = " ".join((record.title or "").split())
    return f"{named} names '{title}'{year}, not this entry"


def title_agrees(ref: Reference, row: TitleRow) -> bool:
    """Whether a registry row of the entry's normalised title is the entry's work (module
    docstring): the year (within one) or the journal agrees; both for a short title."""
    year = bool(_years_agree(ref.year, row.year))
    journal = same_venue(ref.journal, row.journal)
    if len(row.key.split()) < SHORT_TITLE_WORDS:
        return year and journal
    return year or journal


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
