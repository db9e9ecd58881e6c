"""Are these one work? The one rule set, for every question rwgate asks about identity.

Three questions, answered from the same comparisons (a title, family names, a year within
:data:`YEAR_SLACK` -- online-first against print --, a venue, its abbreviation included):

1. **Does the identifier name the cited work?** (:func:`mismatch`, ``rwgate check``) Only when the
   record's title clearly differs (:func:`rwgate.titles.identity_similarity` below
   :data:`TITLE_MISMATCH`: unrelated titles of one field score up to 0.76), *and* its year, *and*
   its first author where both give one (a translated title changes every word, not the year):
   ``doi_mismatch``. Chosen on the project's real bibliographies (0 false mismatches; README).
2. **Which registry work is this DOI-less entry?** (:func:`title_agrees`, the offline title match)
   A row of its normalised title whose year or venue agrees; both for a title of fewer than
   :data:`SHORT_TITLE_WORDS` words ("Editorial", "Reply to comment").
3. **How alike are a citation and a registry record?** (:func:`score`, ``rwgate verify`` and
   ``--recover-dois``) A symmetric mean, weighted by :data:`WEIGHTS`, of the components both sides
   have: the title (token-set and token-sort ratios: token-set alone calls "Nature" identical to
   every Nature paper), the authors (family names matched one-to-one, a typo apart at
   :data:`NAME_TYPO`, over the shorter list), the year (:data:`YEAR_NEIGHBOUR` one apart) and the
   venue. A title below :data:`TITLE_GATE` caps the total (the same authors in the same year
   wrote other papers); :func:`verdict_for` reads it.

rapidfuzz is imported only where a score is computed (not by every pandoc build).
"""

from __future__ import annotations

from collections.abc import Sequence

from rwgate.contract.models import Lookup, Reference
from rwgate.identify.works import ScoreParts, Verdict, family_of
from rwgate.titles import (
    TitleRow,
    fold,
    identity_similarity,
    same_family,
    same_venue,
    title_similarity,
    venue_words,
)
from rwgate.titles import (  # re-exported: verification takes it from the rule set
    normalize_title as normalize_title,
)

TITLE_MISMATCH = 0.6
YEAR_SLACK = 1
SHORT_TITLE_WORDS = 4

WEIGHTS = {"title": 0.45, "authors": 0.25, "year": 0.20, "venue": 0.10}
VERIFIED, PARTIAL = 0.85, 0.50
TITLE_GATE = 0.60
NAME_TYPO = 0.85
YEAR_NEIGHBOUR = 0.8


def normalize_family(name: str) -> str:
    """The comparable core of an author's family name, from a full name or a family name alone:
    folded letters of its last word (``Jan van der Berg``, ``Berg`` -> ``berg``; ``Wakefield,
    A. J.`` -> ``wakefield``; ``García-Márquez`` -> ``garciamarquez``)."""
    words = fold(family_of(name)).split()
    if not words:
        return ""
    return "".join(c for c in words[-1] if c.isalnum())


def _name_similarity(a: str, b: str) -> float:
    from rapidfuzz import fuzz

    return 1.0 if a == b else fuzz.ratio(a, b) / 100.0


def author_overlap(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Matched family names / the shorter list; order-free, one-to-one, symmetric."""
    na = [n for n in (normalize_family(x) for x in a) if n]
    nb = [n for n in (normalize_family(x) for x in b) if n]
    if not na or not nb:
        return None
    pairs = []
    for i, x in enumerate(na):
        for j, y in enumerate(nb):
            sim = _name_similarity(x, y)
            if sim >= NAME_TYPO:
                pairs.append((sim, x, y, i, j))
    # Greedy by similarity; the tie-break uses the names only, never the side they came from,
    # so that swapping the lists gives the same pairing (symmetry).
    pairs.sort(key=lambda p: (-p[0], min(p[1], p[2]), max(p[1], p[2])))
    used_a: set[int] = set()
    used_b: set[int] = set()
    for _, _, _, i, j in pairs:
        if i not in used_a and j not in used_b:
            used_a.add(i)
            used_b.add(j)
    return len(used_a) / min(len(na), len(nb))


def year_similarity(a: int | None, b: int | None) -> float | None:
    if a is None or b is None:
        return None
    gap = abs(a - b)
    return 1.0 if gap == 0 else YEAR_NEIGHBOUR if gap <= YEAR_SLACK else 0.0


def venue_similarity(a: str | None, b: str | None) -> float | None:
    if not a or not b:
        return None
    wa, wb = venue_words(a), venue_words(b)
    if not wa or not wb:
        return None
    if same_venue(a, b):
        return 1.0
    from rapidfuzz import fuzz

    return fuzz.token_set_ratio(" ".join(wa), " ".join(wb)) / 100.0


def combine(parts: ScoreParts) -> float:
    """Weighted mean of the components present, capped by a poor title (see module docstring)."""
    present = {k: getattr(parts, k) for k in WEIGHTS if getattr(parts, k) is not None}
    if not present:
        return 0.0
    weight = sum(WEIGHTS[k] for k in present)
    total = sum(WEIGHTS[k] * v for k, v in present.items()) / weight
    if parts.title is not None and parts.title < TITLE_GATE:
        total = min(total, parts.title)
    return round(min(max(total, 0.0), 1.0), 4)


def score(
    title_a: str | None,
    title_b: str | None,
    authors_a: Sequence[str] = (),
    authors_b: Sequence[str] = (),
    year_a: int | None = None,
    year_b: int | None = None,
    venue_a: str | None = None,
    venue_b: str | None = None,
) -> ScoreParts:
    """The components and the total for one pair; swapping the sides gives the same answer."""
    parts = ScoreParts(
        title=_rounded(title_similarity(title_a, title_b)),
        authors=_rounded(author_overlap(authors_a, authors_b)),
        year=year_similarity(year_a, year_b),
        venue=_rounded(venue_similarity(venue_a, venue_b)),
    )
    parts.total = combine(parts)
    return parts


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def verdict_for(total: float) -> Verdict:
    if total >= VERIFIED:
        return "verified"
    if total >= PARTIAL:
        return "partial_match"
    return "not_found"


def _years_agree(a: int | None, b: int | None) -> bool | None:
    """Within :data:`YEAR_SLACK` (online-first against print): the year part of the score
    above nothing; None when a side has no year."""
    similarity = year_similarity(a, b)
    return None if similarity is None else similarity > 0


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
