"""``verify_citation`` as an agent calls it over MCP: a reference given field by field.

Does this reference exist and does its metadata match; with the integrity status of the match.
The other drafting tools take their arguments as they are: :func:`rwgate.verify.search.
search_references` and :func:`rwgate.verify.export.get_bibtex`. Settings default to those of the
working directory, as ``rwgate check`` would load them.
"""

from __future__ import annotations

import re

from rwgate.config import Settings, load_settings
from rwgate.models import Reference
from rwgate.verify import verify
from rwgate.verify.models import VerifyResult

_SEPARATORS = re.compile(r"\s*;\s*|\s+and\s+", re.IGNORECASE)


def _authors(authors: list[str] | str | None) -> list[str]:
    """A list, or one string ``A and B`` / ``A; B`` as people type them."""
    if authors is None:
        return []
    items = [authors] if isinstance(authors, str) else list(authors)
    names: list[str] = []
    for item in items:
        names += [n.strip() for n in _SEPARATORS.split(item) if n.strip()]
    return [n for n in names if n.lower() not in ("others", "et al.", "et al")]


def verify_citation(
    title: str,
    authors: list[str] | str | None = None,
    year: int | None = None,
    doi: str | None = None,
    arxiv_id: str | None = None,
    url: str | None = None,
    venue: str | None = None,
    settings: Settings | None = None,
) -> VerifyResult:
    """Verdict (verified / partial_match / not_found / unverified), confidence, matched work,
    field-level discrepancies, corrected BibTeX and the integrity status of the match."""
    cited = Reference.as_written(
        "",
        doi,
        title=title.strip() or None if title else None,
        authors=_authors(authors),
        year=year,
        arxiv_id=arxiv_id or None,
        url=url or None,
        journal=venue or None,
    )
    return verify.verify_citation(cited, settings or load_settings())
