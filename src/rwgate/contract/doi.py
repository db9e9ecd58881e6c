"""DOI canonical form.

Every DOI that enters rwgate passes through :func:`normalize`, so the cache, the snapshot, Crossref
batches and the report all speak of one spelling: lower case, no resolver prefix, no percent
escapes. DOIs are case-insensitive by definition (ISO 26324), so lower case loses nothing.

SICI DOIs such as ``10.1002/(SICI)1097-4636(199812)43:4<431::AID-JBM11>3.0.CO;2-Y`` carry ``<``,
``>``, ``;``, ``#`` and parentheses; they must survive, so the suffix is "any visible character"
and only unbalanced closing brackets and sentence punctuation are trimmed from the end.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from rwgate.errors import UsageError

# Registrant code: "10." + digits, optionally with dotted sub-divisions (10.1000.10/...).
_DOI_SHAPE = re.compile(r"^10\.\d{4,9}(?:\.\d+)*/\S+$")
# Prefixes people paste in front of a DOI; matched case-insensitively and repeatedly.
_PREFIXES = re.compile(
    r"^(?:doi\s*:\s*|doi\s+|info:doi/|urn:doi:|https?://(?:dx\.|www\.)?doi\.org/"
    r"|(?:dx\.)?doi\.org/|https?://hdl\.handle\.net/|https?://doi\.acm\.org/)",
    re.IGNORECASE,
)
# Invisible characters that copy-paste from PDFs and web pages leaves inside DOIs.
_INVISIBLE = re.compile("[\u00ad\u200b-\u200d\u2060\ufeff]")
# Dashes a PDF or a word processor puts where the DOI has a hyphen-minus ("S0140‐6736", an en
# dash, a minus sign): kept, they name no registered DOI, and an offline check would call the work
# clean. DOIs are ASCII in practice (Crossref registers none with these), so they are the hyphen.
_DASHES = str.maketrans(
    dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-")
)
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
# A DOI already bare: nothing to peel, decode or trim (no brackets, no escapes, no end punctuation).
_BARE = re.compile(r"10\.\d{4,9}(?:\.\d+)*/[^\s%<>()\[\]{}\"']*[^\s%<>()\[\]{}\"'.,;:!?]")
# A DOI inside running text or a publisher URL (…/doi/full/10.1002/…) is found from its "/":
# the registrant code must end right before it (looked for in the few characters before, never
# further), and the suffix runs to the next white space, quote or brace, at most 1,000 characters
# (no real DOI is longer). Each character is looked at a bounded number of times: linear, where a
# regular expression tried at every "10." of a note of "10.1234" x 20,000 took 50 s.
_REGISTRANT_BEFORE = re.compile(r"10\.\d{4,9}(?:\.\d+)*\Z")
_LOOK_BACK = 64
_SUFFIX_STOP = re.compile(r"[\s\"'{}]")
_MAX_SUFFIX = 1000
_TRAILING = ".,;:!?\"'“”‘’"
# A DOI begins with "10.", so an opening bracket or quote in front of it is never part of it.
_LEADING = "([{\"'“”‘’"
_PAIRS = {")": "(", "]": "[", "}": "{", ">": "<"}


class InvalidDOI(UsageError):
    """A string that was offered as a DOI but is not one."""


def _trim_tail(doi: str) -> str:
    """Drop sentence punctuation and unbalanced closing brackets from the end (linear time:
    the bracket counts are taken once and kept up to date)."""
    if not doi or (doi[-1] not in _TRAILING and doi[-1] not in _PAIRS):
        return doi  # the common case: nothing to trim
    counts = {c: doi.count(c) for c in "()[]{}<>"}
    end = len(doi)
    while end:
        last = doi[end - 1]
        if last in _TRAILING:
            end -= 1
        elif last in _PAIRS and counts[last] > counts[_PAIRS[last]]:
            counts[last] -= 1
            end -= 1
        else:
            break
    return doi[:end]


def normalize(raw: str) -> str:
    """Return the canonical (lower-case, bare) DOI for ``raw`` or raise :class:`InvalidDOI`."""
    if raw.isascii() and _BARE.fullmatch(raw):
        return raw.lower()  # what the steps below give such a string, ten times faster
    text = _INVISIBLE.sub("", raw).translate(_DASHES).strip()
    # Repeated prefixes and wrappers happen ("doi: <https://doi.org/10....>"), so peel until
    # nothing changes. Angle brackets go only as a pair: SICI DOIs contain a lone "<...>".
    while True:
        peeled = _PREFIXES.sub("", text.lstrip(_LEADING), count=1).strip()
        if peeled.startswith("<") and peeled.endswith(">"):
            peeled = peeled[1:-1].strip()
        if peeled == text:
            break
        text = peeled
    # Decode to a fixed point so the canonical form holds no escape at all (doubly encoded
    # URLs exist), which is what makes normalize idempotent.
    while _ESCAPE.search(text):
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
    text = _trim_tail(text.strip())
    if not _DOI_SHAPE.match(text):
        raise InvalidDOI(f"not a DOI: {raw.strip()!r}")
    return text.lower()


_SHORT = re.compile(
    r"^(?:https?://(?:dx\.|www\.)?doi\.org/|doi\s*:\s*)?10/([a-z0-9]{2,20})$", re.IGNORECASE
)


def short_doi(raw: str | None) -> str | None:
    """``10/abcd`` for a shortDOI (Zotero exports them; doi.org resolves them), else None."""
    if not raw:
        return None
    match = _SHORT.match(_INVISIBLE.sub("", raw).strip())
    return f"10/{match.group(1).lower()}" if match else None


def try_normalize(raw: str | None) -> str | None:
    """Canonical DOI, or None when ``raw`` is empty or malformed."""
    if not raw or not raw.strip():
        return None
    try:
        return normalize(raw)
    except InvalidDOI:
        return None


def find_in_text(text: str | None) -> str | None:
    """The first DOI found inside a URL or a note, canonical, or None.

    Used for .bib ``url``/``eprint``/``note`` fields and CSL ``URL``, where a DOI sits among other
    words. Linear in ``text`` (see :data:`_REGISTRANT_BEFORE`).
    """
    if not text:
        return None
    decoded = unquote(text) if "%" in text else text
    in_url = "://" in text
    stops = _Ahead(decoded, _SUFFIX_STOP)
    tags = _Ahead(decoded, re.compile(re.escape("</")))
    queries = _Ahead(decoded, re.compile(r"\?"))
    slash = decoded.find("/")
    while slash >= 0:
        before = decoded[slash - 1 : slash]
        prefix = (
            _REGISTRANT_BEFORE.search(decoded, max(0, slash - _LOOK_BACK), slash)
            if before.isdigit()
            else None
        )
        if prefix is not None:
            # An HTML closing tag ends a DOI pasted from a web page ("10.1038/x</a>"); in a URL
            # the query string is not part of the DOI.
            end = min(stops.next(slash + 1), slash + 1 + _MAX_SUFFIX, tags.next(slash + 1))
            if in_url:
                end = min(end, queries.next(slash + 1))
            if end > slash + 1:
                found = try_normalize(decoded[prefix.start() : end])
                if found:
                    return found
        slash = decoded.find("/", slash + 1)
    return None


class _Ahead:
    """The next match of ``pattern`` at or after a position that only grows: each character of
    the text is searched once over all calls."""

    def __init__(self, text: str, pattern: re.Pattern[str]) -> None:
        self.text, self.pattern, self.at = text, pattern, -1

    def next(self, start: int) -> int:
        if self.at < start:
            match = self.pattern.search(self.text, start)
            self.at = match.start() if match else len(self.text)
        return self.at


def doi_path(doi: str, safe: str = "/") -> str:
    """``doi`` as URL path segments that stay where they are put (``/works/{doi}``).

    A DOI may contain ``/../`` (``10.1234/../../members`` is well-formed), and HTTP clients
    resolve dot segments, so such a DOI would ask another endpoint of the API (or, behind a
    configured base URL with a path, another service on that host). Dot segments are
    percent-encoded, so the registry sees the DOI as written and nothing else is asked.
    """
    from urllib.parse import quote

    return "/".join(
        "%2E" * len(part) if part in (".", "..") else quote(part, safe=safe.replace("/", ""))
        for part in doi.split("/")
    )


def url(doi: str) -> str:
    """The resolver URL of a canonical DOI, with characters unsafe in a URL escaped."""
    from urllib.parse import quote

    return "https://doi.org/" + quote(doi, safe="/:;()._-")
