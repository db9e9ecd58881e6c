"""Snapshot rows as rwgate's models: the key a DOI is stored under, a notice from its row, and
the Lookup a work's rows make; one reading for the DOI, PubMed id and title look-ups alike.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Sequence
from typing import Any

from rwgate.contract.doi import try_normalize
from rwgate.contract.evidence import merge_notices
from rwgate.contract.models import Lookup, Notice
from rwgate.contract.trusted import trusted
from rwgate.sources.snapshot.rwcsv import SOURCE_NAME as _CSV

NOTICE_COLUMNS = (
    "n.type, n.notice_doi, n.date, n.source, n.label, n.record_id, n.reasons,"
    " n.title, n.journal, n.year"
)
"""What :func:`notice` and :func:`lookup` read of a notice row, in this order."""
_NOT_FOUND: dict[str, Any] = {"outcome": "not_found", "title": None, "journal": None}
_NOT_FOUND.update(year=None, error=None)


def iso_date(text: str | None) -> dt.date | None:
    """A date column's value (ISO text, or NULL)."""
    return dt.date.fromisoformat(text) if text else None


# A DOI already in canonical form (what the core passes) skips the full normaliser, which costs
# a tenth of a second per 100,000 DOIs. Only ASCII qualifies: the normaliser also lower-cases
# non-ASCII capitals and strips invisible characters (soft hyphen, zero-width space), and a DOI
# that kept them would miss its rows and be called clean.
_CANONICAL = re.compile(r"10\.\d{4,9}(?:\.\d+)*/[^\sA-Z%]*[^\sA-Z%.,;:!?\"')\]}>]")


def export_spelling(doi: str) -> str:
    """How the Retraction Watch export spells a DOI: SICI DOIs without their ``<`` and ``>``."""
    return doi.replace("<", "").replace(">", "") if "<" in doi or ">" in doi else doi


def doi_key(doi: str) -> str:
    """The form the snapshot stores a DOI under (canonical), found fast for one already so."""
    if doi.isascii() and _CANONICAL.fullmatch(doi):
        return doi
    return try_normalize(doi) or doi.strip().lower()


_WORDS: dict[str, str] = {}
"""The export's vocabulary (notice types, labels, sources, reasons), one string object per word."""
_DATES: dict[str, dt.date] = {}


def notice(row: Sequence[Any]) -> Notice:
    """A notice from its row. Repeated words and dates are shared: SQLite returns a new string
    per row, and 70,000 notices held a copy of "Retraction" each."""
    if len(_WORDS) > 10_000 or len(_DATES) > 100_000:  # a vocabulary, not a copy of the data
        _WORDS.clear()
        _DATES.clear()
    word = _WORDS.setdefault
    when = row[2]
    date = (
        (_DATES.get(when) or _DATES.setdefault(when, dt.date.fromisoformat(when))) if when else None
    )
    return trusted(
        Notice,
        {
            "type": word(row[0], row[0]),
            "doi": row[1],
            "date": date,
            "source": [word(s, s) for s in row[3].split(";")],
            "label": word(row[4], row[4]) if row[4] else row[4],
            "record_id": row[5],
            "reasons": [word(r, r) for r in row[6].split(";")] if row[6] else [],
        },
    )


def lookup(
    doi: str,
    rows: list[Any] | None,
    work: Sequence[Any] | None,
    notice_for: list[str] | None,
    source: str,
    as_of: dt.datetime | None,
) -> Lookup:
    """The answer for one work: its notice rows, its Crossref record (``works`` row) and the
    works it is itself a notice for; ``not_found`` when there is none of the three."""
    if not rows and work is None and not notice_for:
        return trusted(Lookup, {**_NOT_FOUND, "doi": doi, "notices": [], "notice_for": [],
                              "source": source, "as_of": as_of})  # fmt: skip
    rows = rows or []
    # Retraction Watch metadata first (it describes the original paper), then Crossref's.
    first = next((r for r in rows if r[3] == _CSV), rows[0]) if rows else None
    title, journal, year = first[7:10] if first else (None, None, None)
    targets = list(notice_for or [])
    if work:
        title, journal, year = title or work[0], journal or work[1], year or work[2]
        targets += [t for t in json.loads(work[3]) if t not in targets]
    notices = [notice(r) for r in rows]
    # Rows come in date order and CSV rows are unique by Record ID: only notices that another
    # source (Crossref) asserts too need merging.
    if len(notices) > 1 and any(r[3] != _CSV for r in rows):
        notices = merge_notices(notices)
    values = {
        "doi": doi,
        "outcome": "found",
        "source": source,
        "notices": notices,
        "title": title,
        "journal": journal,
        "year": year,
        "notice_for": targets,
        "error": None,
        "as_of": as_of,
    }
    return trusted(Lookup, values)
