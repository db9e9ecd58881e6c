"""DOI normalisation as SQL: :func:`rwgate.contract.doi.normalize`, step for step, for an engine's
columns (a corpus of 10^8 references is normalised where it lies, not row by row in Python).

Every character class is built from the Python module's own definitions and from what Python's
``\\s`` and ``\\d`` match, so the two cannot drift apart silently (``tests/unit/test_screen_sql.py``
checks that both give the same DOI for every DOI of the fixtures). Python loops until nothing
changes; SQL has no loop, so each loop is unrolled (:data:`PEELS`, :data:`DECODES`, :data:`TRIMS`).
A DOI that would need more rounds, or whose percent escapes decode to invalid UTF-8 or mix valid
and invalid ones, fails the final shape test and is ``invalid_doi``: never matched to the wrong
work, never called clean.

Patterns use only what RE2 (DuckDB) and java.util.regex (Spark) read alike: ``\\x{...}`` escapes,
``\\z``, no look-around, no back-references, and no repeated group with alternation (Java
recurses on those and would overflow its stack on a 1 MB value).
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Iterable

from rwgate.contract import doi as pydoi

PEELS = 4
"""Rounds of prefix/bracket peeling (``doi: <https://doi.org/10...>`` takes three)."""
DECODES = 3
"""Rounds of percent-decoding (doubly encoded URLs take two)."""
TRIMS = 4
"""Rounds of trimming end punctuation and unbalanced closing brackets."""


def _ranges(codes: Iterable[int]) -> str:
    """A regex character-class body for a set of code points, as ``\\x{..}`` ranges."""
    out: list[str] = []
    ordered = sorted(set(codes))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        first, last = ordered[i], ordered[j]
        out.append(f"\\x{{{first:x}}}" if first == last else f"\\x{{{first:x}}}-\\x{{{last:x}}}")
        i = j + 1
    return "".join(out)


def _chars(text: str) -> str:
    return _ranges(ord(c) for c in text)


_SPACE_CODES = [c for c in range(sys.maxunicode + 1) if chr(c).isspace()]
WS = _ranges(_SPACE_CODES)
"""What Python's ``\\s`` and ``str.strip()`` take as white space (RE2's ``\\s`` is ASCII only)."""
DIGIT = _ranges(c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Nd")
"""What Python's ``\\d`` matches in a ``str`` pattern: every decimal digit, not only 0-9."""

# Python's invisible characters, found by asking its own pattern (they are all in the BMP).
_INVISIBLE = "[" + _ranges(c for c in range(0x10000) if pydoi._INVISIBLE.fullmatch(chr(c))) + "]"
_DASH_CODES = sorted(pydoi._DASHES)
# The bare fast path: ASCII only (Python tests ``isascii()`` first).
_BARE_STOP = set(_SPACE_CODES) | {ord(c) for c in "%<>()[]{}\"'"}


def _bare(stop: set[int]) -> str:
    """A bare ASCII DOI of none of the characters ``stop``, not ending in punctuation."""
    body = _ranges(c for c in range(128) if c not in stop)
    last = _ranges(c for c in range(128) if c not in stop | {ord(c) for c in ".,;:!?"})
    return f"^10\\.[0-9]{{4,9}}(?:\\.[0-9]+)*/[{body}]*[{last}]\\z"


BARE = _bare(_BARE_STOP)
LOWER = _bare(_BARE_STOP | set(range(ord("A"), ord("Z") + 1)))
"""A bare DOI already in lower case: its own canonical form (ASCII's only capitals are A-Z)."""
SHAPE = f"^10\\.[{DIGIT}]{{4,9}}(?:\\.[{DIGIT}]+)*/[^{WS}]+\\z"
SHORT = f"^(?i:https?://(?:dx\\.|www\\.)?doi\\.org/|doi[{WS}]*:[{WS}]*)?10/(?i:[a-z0-9]{{2,20}})\\z"


def _python_class(pattern: str) -> str:
    """A fragment of a Python pattern with ``\\s``/``\\d`` spelt out (RE2's are ASCII only)."""
    return pattern.replace("\\s", f"[{WS}]").replace("\\d", f"[{DIGIT}]")


PREFIX = "^(?i:" + _python_class(pydoi._PREFIXES.pattern.lstrip("^")) + ")"
LEADING = f"^[{_chars(pydoi._LEADING)}]+"
TRAILING = f"[{_chars(pydoi._TRAILING)}]+\\z"


def lit(text: str) -> str:
    """A SQL string literal (DuckDB reads backslashes literally; SQLGlot re-escapes for Spark)."""
    return "'" + text.replace("'", "''") + "'"


def ident(name: str) -> str:
    """A SQL identifier (a column of the user's table may hold any character)."""
    return '"' + name.replace('"', '""') + '"'


def lit_list(items: Iterable[object]) -> str:
    """A SQL list of string literals (file paths, keys)."""
    return "[" + ", ".join(lit(str(item)) for item in items) + "]"


_STRIP_HEAD = lit("^[" + WS + "]+")
_STRIP_TAIL = lit("[" + WS + "]+\\z")
_TRAILING = lit(TRAILING)
_NOT_BLANK = lit("[^" + WS + "]")


def strip(expr: str) -> str:
    """``str.strip()``: Python's white space off both ends."""
    head = f"regexp_replace({expr}, {_STRIP_HEAD}, '')"
    return f"regexp_replace({head}, {_STRIP_TAIL}, '')"


def _count(expr: str, char: str) -> str:
    return f"length(replace({expr}, {lit(char)}, ''))"


def _peel(t: str) -> str:
    """One round of the prefix loop: leading brackets/quotes, one prefix, white space."""
    no_lead = f"regexp_replace({t}, {lit(LEADING)}, '')"
    return strip(f"regexp_replace({no_lead}, {lit(PREFIX)}, '')")


def _unwrap(t: str) -> str:
    """``<...>`` round the whole DOI goes as a pair (a SICI DOI holds a lone ``<``)."""
    return (
        f"CASE WHEN left({t}, 1) = '<' AND right({t}, 1) = '>'"
        f" THEN {strip(f'substr({t}, 2, length({t}) - 2)')} ELSE {t} END"
    )


def _decode(t: str) -> str:
    """One round of ``unquote``, only where an escape is left; ``+`` stays ``+`` (Spark's decoder
    would make it a space); a lone ``%`` beside a valid escape gives NULL (fail closed)."""
    lone = "%(?:[^0-9A-Fa-f]|[0-9A-Fa-f][^0-9A-Fa-f]|[0-9A-Fa-f]?\\z)"
    return (
        f"CASE WHEN NOT regexp_matches({t}, '%[0-9A-Fa-f]{{2}}') THEN {t}"
        f" WHEN regexp_matches({t}, {lit(lone)}) THEN NULL"
        f" ELSE try(url_decode(replace({t}, '+', '%2B'))) END"
    )


def _drop_closer(t: str) -> str:
    """Drop one closing bracket at the end when the DOI holds more of them than openers."""
    arms = " ".join(
        f"WHEN right({t}, 1) = {lit(close)} AND {_count(t, opener)} > {_count(t, close)}"
        f" THEN left({t}, length({t}) - 1)"
        for close, opener in pydoi._PAIRS.items()
    )
    return f"CASE {arms} ELSE {t} END"


def steps(column: str = "t") -> list[str]:
    """The projections, in order, each an expression of ``column`` giving the next value of it.

    Applied to a DOI column that is NULL where the fast path already answered, the last value is
    the canonical DOI, or NULL when the text is not a DOI.
    """
    t = column
    out = [
        strip(
            f"regexp_replace(regexp_replace({t}, {lit(_INVISIBLE)}, '', 'g'),"
            f" {lit(f'[{_ranges(_DASH_CODES)}]')}, '-', 'g')"
        )
    ]
    for _ in range(PEELS):
        out += [_peel(t), _unwrap(t)]
    out += [_decode(t) for _ in range(DECODES)]
    out.append(strip(t))
    for _ in range(TRIMS):
        out += [f"regexp_replace({t}, {_TRAILING}, '')", _drop_closer(t)]
    out.append(f"regexp_replace({t}, {_TRAILING}, '')")
    out.append(f"CASE WHEN regexp_matches({t}, {lit(SHAPE)}) THEN lower({t}) END")
    return out


FAST = (
    "^(?i:https?://(?:dx\\.|www\\.)?doi\\.org/|(?:dx\\.)?doi\\.org/|doi[ ]*:[ ]*|doi[ ]+)?"
    + BARE.removeprefix("^")
)
"""A DOI with nothing to do but lower case: bare ASCII, or behind one prefix that ``normalize``
peels in one go (a resolver URL, ``doi.org/``, ``doi:`` or ``doi`` and ASCII spaces). No prefix
holds ``10.``, so the DOI starts at the first ``10.``."""


_END = f"[{_chars('.,;:!?')}]+\\z"
TRIMMED = FAST.removesuffix("\\z") + _END
"""A DOI of :data:`FAST` followed by sentence punctuation (a reference string's closing period),
which ``normalize`` trims, with nothing else to do."""


def fast_key(raw: str) -> str:
    """The canonical DOI of ``raw`` when it is on the fast path, else NULL. A bare DOI in lower
    case (most of a corpus: Crossref and OpenCitations write them so) is its own key, with no
    copy (a tenth of the screen's main pass at 10^8 rows); else the :data:`FAST` expression;
    else :data:`TRIMMED`, only for the rows the first two refused."""
    trimmed = f"regexp_replace({raw}, {lit(_END)}, '')"
    return (
        f"CASE WHEN regexp_matches({raw}, {lit(LOWER)}) THEN {raw}"
        f" WHEN regexp_matches({raw}, {lit(FAST)}) THEN {_lowered(raw)}"
        f" WHEN regexp_matches({raw}, {lit(TRIMMED)}) THEN {_lowered(trimmed)} END"
    )


def _lowered(raw: str) -> str:
    """Lower case from the first ``10.`` on (no prefix holds ``10.``); a bare DOI is only
    lower-cased (no search, no copy)."""
    return (
        f"CASE WHEN starts_with({raw}, '10.') THEN lower({raw})"
        f" ELSE lower(substr({raw}, strpos({raw}, '10.'))) END"
    )


def short_doi(raw: str) -> str:
    """Whether ``raw`` is a shortDOI (``10/abcd``): unverified, as ``rwgate check`` says."""
    bare = strip(f"regexp_replace({raw}, {lit(_INVISIBLE)}, '', 'g')")
    return f"regexp_matches({bare}, {lit(SHORT)})"


def blank(raw: str) -> str:
    """Whether ``raw`` is missing or only white space (no DOI written at all)."""
    return f"({raw} IS NULL OR NOT regexp_matches({raw}, {_NOT_BLANK}))"


def stages(source: str, keep: list[str], raw: str, name: str) -> list[tuple[str, str]]:
    """(view name, statement) pairs, in order: :func:`steps` over column ``raw`` of ``source``,
    one projection per view, the last view ``name`` holding ``keep`` and ``doi``.

    One step per view because each step names the previous value several times: an optimizer
    that merges projections (Spark's CollapseProject) would copy every step into the next and
    grow the plan exponentially. An engine materialises each view (Spark) or nests them (DuckDB).
    """
    cols = ", ".join(keep)
    out = [(f"{name}_0", f"SELECT {cols}, {raw} AS t FROM {source}")]
    for i, expr in enumerate(steps("t"), start=1):
        out.append((f"{name}_{i}", f"SELECT {cols}, {expr} AS t FROM {name}_{i - 1}"))
    out.append((name, f"SELECT {cols}, t AS doi FROM {name}_{len(out) - 1}"))
    return out
