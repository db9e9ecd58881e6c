"""Titles as readers compare them: one normalisation for the check, the registry and ``verify``.

Pure functions at the bottom of the layers, so the integrity core (does this DOI name the cited
work? which registry row is this DOI-less entry?), the snapshot's title index and citation
verification (:mod:`rwgate.identify.same`) fold a title the same way and can never disagree about
whether two titles are "the same words".

``rapidfuzz`` is imported on the first fuzzy comparison only: a check whose titles all agree
exactly (most) never loads it, and neither does a start of ``rwgate`` that judges nothing.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

# Markup never separates words: ``Ca<sup>2+</sup>`` (Crossref), ``Ca$^{2+}$`` (TeX) and ``Ca²⁺``
# (Retraction Watch) are one word, as a reader sees them.
_TAG = re.compile(r"<[^<>]{1,80}>")
_CONTROL_WORD = re.compile(r"\\([a-zA-Z]+)(\s*)(?=(\{)?)")
# Macros that wrap words without being one (``$\\mathrm{CO}_2$``, ``\\emph{in vivo}``): dropped
# from a key. Any other control word left in a title (one the decoder did not know) keeps its
# name as a word: a title that loses a word could be another title's key.
_MARKUP = frozenset(
    {
        "mathrm", "mathbf", "mathit", "mathsf", "mathtt", "mathcal", "mathbb", "mathfrak",
        "mathscr", "mathnormal", "boldsymbol", "bm", "pmb", "text", "textrm", "textit", "textbf",
        "textsc", "textsf", "texttt", "textup", "textsl", "textmd", "textnormal", "emph", "mbox",
        "hbox", "operatorname", "ensuremath", "textsuperscript", "textsubscript", "rm", "it", "bf",
        "sf", "tt", "sc", "sl", "em", "left", "right", "big", "Big", "bigl", "bigr", "relax",
        "protect",
    }
)  # fmt: skip
_SCRIPT = str.maketrans("", "", "^_$")
_GREEK_NAMES = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi",
    "psi", "omega",
]  # fmt: skip


def _greek(name: str) -> str:
    spelled = "lamda" if name.lower() == "lambda" else name.lower()
    case = "CAPITAL" if name[0].isupper() else "SMALL"
    return unicodedata.lookup(f"GREEK {case} LETTER {spelled.upper()}")


TEX_GREEK: dict[str, str] = {
    **{name: _greek(name) for name in _GREEK_NAMES},
    **{name.capitalize(): _greek(name.capitalize()) for name in _GREEK_NAMES},
    **{
        f"var{name}": _greek(name)
        for name in ["epsilon", "theta", "kappa", "pi", "rho", "sigma", "phi"]
    },
}
"""TeX's Greek letters (``\\alpha``, ``\\Gamma``, ``\\varepsilon``; textgreek's ``\\textalpha`` and
upgreek's ``\\upalpha`` too) as the Unicode letter the registry writes: ``TNF-$\\alpha$`` is
``TNF-α``. A variant form is its plain letter (``\\varepsilon`` and ``\\epsilon`` are ε)."""
_GREEK_SPELLED = {ord(_greek(name)): name for name in _GREEK_NAMES}
"""A Greek letter (small, as :func:`fold` leaves it) as its name in a title key: ``TNF-α`` and
``TNF-alpha``, ``NF-κB`` and ``NF-kappaB`` are one title (the registry spells both ways)."""
TEX_GREEK_WORD = re.compile(r"\\(?:text|up|)(" + "|".join(TEX_GREEK) + r")(?![A-Za-z])\s*")


def tex_greek(text: str) -> str:
    """``text`` with each TeX Greek letter macro replaced by its Unicode letter."""
    return TEX_GREEK_WORD.sub(lambda m: TEX_GREEK[m.group(1)], text) if "\\" in text else text


# The marker publishers put on a retracted work's own title; "Retraction: ..." titles a notice.
_RETRACTED = re.compile(r"^\s*(?:retracted|withdrawn)(?: article)?\s*[:\-–—]\s*", re.IGNORECASE)
# What a notice's record puts before the title of the work it is about ("Correction to: X",
# "Erratum: X", "Retraction Note to: X", "Expression of Concern: X"): the notice names that work.
_NOTICE_OF = re.compile(
    r"^\s*(?:notice of |editorial )?(?:correction|erratum|errata|corrigendum|addendum|retraction"
    r"|retraction note|expression of concern|withdrawal|clarification)"
    r"(?: (?:note|notice))?(?: (?:to|for|of|on))?(?: the article)?\s*[:\-–—]?\s*",
    re.IGNORECASE,
)
_NON_WORD = re.compile(r"[^\w]+")
_VENUE_STOP = frozenset({"the", "of", "and", "for", "in", "on", "a", "an", "de", "la", "und"})


class TitleRow(NamedTuple):
    """A registry row whose normalised title is ``key``: the work it is about and how the row
    describes it (``row`` tells apart the rows of one work)."""

    key: str
    doi: str | None
    pmid: str | None
    record_id: str | None
    title: str | None
    journal: str | None
    year: int | None
    row: int


def fold(text: str) -> str:
    """Lower case, accents removed, ``ß``/``æ``/``ø`` spelled out: what readers treat as equal."""
    if text.isascii():  # most titles: nothing to decompose (a check folds one per cited work)
        return text.lower()
    text = text.replace("ß", "ss").replace("æ", "ae").replace("Æ", "ae")
    text = text.replace("ø", "o").replace("Ø", "o").replace("ł", "l").replace("Ł", "l")
    text = text.replace("ς", "σ")  # final sigma: one letter to a reader (and to casefold)
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def normalize_title(title: str | None) -> str:
    """Title words only: ``{RETRACTED}: {DNA} <i>in vivo</i>`` -> ``dna in vivo``; markup and
    sub/superscripts join what they split (``Ca<sup>2+</sup>``, ``Ca$^{2+}$`` -> ``ca2``), TeX's
    Greek macros and letters are their names (``TNF-$\\alpha$``, ``TNF-α`` -> ``tnf alpha``), a
    control word left is its name (unless it only wraps words: ``\\mathrm``, ``\\emph``)."""
    if not title:
        return ""
    text = title
    if "\\" in text:
        text = _CONTROL_WORD.sub(_control_word, tex_greek(text))
    text = text.replace("{", "").replace("}", "")
    if "<" in text:
        text = _TAG.sub("", text)
    text = _RETRACTED.sub("", text.translate(_SCRIPT))
    folded = fold(text)
    if not folded.isascii():
        folded = folded.translate(_GREEK_SPELLED)
    return " ".join(_NON_WORD.sub(" ", folded).replace("_", " ").split())


def _control_word(match: re.Match[str]) -> str:
    """A control word as a key reads it: markup nothing (``a\\mathrm{b}`` prints ``ab``), any
    other its name as a word, apart from an argument (``\\foo{x}``: ``foo x``) as the decoder
    keeps an unknown macro (``{\\TeX}book`` stays ``texbook``)."""
    name, space, argument = match.groups()
    if name in _MARKUP:
        return space
    return f" {name}{' ' if argument else space}"


def title_key(title: str | None) -> str:
    """The key two titles of one work share (:func:`normalize_title`): the snapshot's title
    index and the check's look-ups both use it."""
    return normalize_title(title)


def title_similarity(a: str | None, b: str | None) -> float | None:
    """The mean of token-set and token-sort ratios of the normalised titles (``verify``'s
    score: a fragment is not the whole); None when either side has no title words."""
    return _ratio(normalize_title(a), normalize_title(b))


def _ratio(na: str, nb: str) -> float | None:
    """:func:`title_similarity` of two titles already normalised."""
    if not na or not nb:
        return None
    if na == nb:
        return 1.0
    from rapidfuzz import fuzz

    return (fuzz.token_set_ratio(na, nb) + fuzz.token_sort_ratio(na, nb)) / 200.0


def _without_notice_prefix(text: str) -> str:
    stripped = _NOTICE_OF.sub("", text, count=1)
    return stripped if stripped.strip() else text


def identity_similarity(entry: str | None, record: str | None) -> float | None:
    """How much a record's title could be the cited title, for the identity check: 1.0 when one
    title's words all appear in the other (a subtitle left out, a notice's "Correction to: X"),
    else :func:`title_similarity`. Generous where a title is cut short: only a title that
    shares little with the record's can make a mismatch. None: a side without title words."""
    if entry and record and entry.casefold() == record.casefold():
        return 1.0  # the common case, without folding either
    ne = normalize_title(entry)
    nr = normalize_title(_without_notice_prefix(record or ""))
    if not ne or not nr:
        return None
    if ne == nr:
        return 1.0
    we, wr = set(ne.split()), set(nr.split())
    if we <= wr or wr <= we:
        return 1.0
    return _ratio(ne, nr)


def same_family(a: str | None, b: str | None) -> bool | None:
    """Whether two family names are the same person's, folded (``Müller`` = ``Muller``); None
    when either is missing."""
    fa = "".join(c for c in fold(a or "") if c.isalnum())
    fb = "".join(c for c in fold(b or "") if c.isalnum())
    return fa == fb if fa and fb else None


def venue_words(venue: str) -> list[str]:
    words = _NON_WORD.sub(" ", fold(venue.replace("&", " and "))).split()
    return [w for w in words if w not in _VENUE_STOP]


def _shortens(short: str, full: str) -> bool:
    """``natl`` shortens ``national``: same first letter, the rest in order (ISO 4 style)."""
    if not short or short[0] != full[0] or len(short) > len(full):
        return False
    rest = iter(full[1:])
    return all(c in rest for c in short[1:])


def abbreviates(short: list[str], full: list[str]) -> bool:
    """Word by word, ``short`` shortens ``full`` (same number of significant words)."""
    return len(short) == len(full) and short != full and all(map(_shortens, short, full))


def same_venue(a: str | None, b: str | None) -> bool:
    """Whether two journal names name one journal: the same significant words, or one the
    word-by-word abbreviation of the other (``Proc. Natl. Acad. Sci.``)."""
    wa, wb = venue_words(a or ""), venue_words(b or "")
    if not wa or not wb:
        return False
    return wa == wb or abbreviates(wa, wb) or abbreviates(wb, wa)
