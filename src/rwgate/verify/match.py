"""How alike a cited reference and a registry record are: one documented, symmetric score.

Components, each in [0, 1], compared only where both sides have the field:

- **title** (weight 0.45): the mean of rapidfuzz's token-set and token-sort ratios of the
  normalised titles (accents folded, case, LaTeX braces, markup, punctuation and a leading
  "RETRACTED:" marker removed). Token-set alone calls a fragment identical to any title that
  contains it ("Nature" vs every Nature paper); the token-sort half keeps such fragments partial.
- **authors** (0.25): family names matched one-to-one (equal after folding, or a typo apart:
  ratio >= 0.85), divided by the shorter list, so "Wakefield, Murch, Anthony" cited for a
  12-author paper still overlaps fully and author order does not matter.
- **year** (0.20): 1.0 equal, 0.8 one year apart (online-first vs print), else 0.
- **venue** (0.10): token-set ratio of normalised venue names, or 1.0 when one is a word-by-word
  abbreviation of the other ("Proc. Natl. Acad. Sci." for "Proceedings of the National ...").

The total is the weighted mean over the components present (weights renormalised), so a citation
without a venue is not punished for it (verification warns instead). A title below
:data:`TITLE_GATE` caps the total at the title similarity: the same authors in the same year wrote
other papers (for the same reason, verification caps a candidate without a title at
:data:`PARTIAL` when the citation gives one). Verdicts: ``verified`` >= 0.85, ``partial_match``
>= 0.50, else ``not_found``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rapidfuzz import fuzz

from rwgate.titles import abbreviates, fold, normalize_title, title_similarity, venue_words
from rwgate.verify.models import ScoreParts, Verdict
from rwgate.verify.records import family_of

__all__ = [
    "PARTIAL",
    "VERIFIED",
    "author_overlap",
    "combine",
    "fold",
    "normalize_family",
    "normalize_title",
    "score",
    "title_similarity",
    "venue_similarity",
    "verdict_for",
    "year_similarity",
]

WEIGHTS = {"title": 0.45, "authors": 0.25, "year": 0.20, "venue": 0.10}
VERIFIED, PARTIAL = 0.85, 0.50
TITLE_GATE = 0.60
NAME_TYPO = 0.85
YEAR_NEIGHBOUR = 0.8

_NON_WORD = re.compile(r"[^\w]+")


def normalize_family(name: str) -> str:
    """The comparable core of an author's family name, from a full name or a family name alone:
    folded letters of its last word (``Jan van der Berg``, ``Berg`` -> ``berg``; ``Wakefield,
    A. J.`` -> ``wakefield``; ``García-Márquez`` -> ``garciamarquez``)."""
    words = fold(family_of(name)).split()
    if not words:
        return ""
    return "".join(c for c in words[-1] if c.isalnum())


def _name_similarity(a: str, b: str) -> float:
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
    matched = 0
    for _, _, _, i, j in pairs:
        if i not in used_a and j not in used_b:
            used_a.add(i)
            used_b.add(j)
            matched += 1
    return matched / min(len(na), len(nb))


def year_similarity(a: int | None, b: int | None) -> float | None:
    if a is None or b is None:
        return None
    gap = abs(a - b)
    return 1.0 if gap == 0 else YEAR_NEIGHBOUR if gap == 1 else 0.0


def venue_similarity(a: str | None, b: str | None) -> float | None:
    if not a or not b:
        return None
    wa, wb = venue_words(a), venue_words(b)
    if not wa or not wb:
        return None
    if wa == wb or abbreviates(wa, wb) or abbreviates(wb, wa):
        return 1.0
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
