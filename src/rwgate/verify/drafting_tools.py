"""The drafting tools an agent calls over MCP: plain functions returning Pydantic models.

``verify_citation`` (does this reference exist and does its metadata match; with the integrity
status of the match), ``search_references`` (real works only, each with its integrity status) and
``get_bibtex`` (entries for DOIs or a verified title). The MCP server exposes them as they are;
settings default to those of the working directory, as ``rwgate check`` would load them.
"""

from __future__ import annotations

import re

from rwgate.config import Settings, load_settings
from rwgate.models import Reference
from rwgate.verify import export, search, verify
from rwgate.verify.models import BibtexResult, SearchResult, VerifyResult

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


def search_references(
    query: str,
    max_results: int = 10,
    year_from: int | None = None,
    year_to: int | None = None,
    sources: list[str] | None = None,
    settings: Settings | None = None,
) -> SearchResult:
    """Real works for ``query`` (at most 30), de-duplicated, each with its integrity status."""
    return search.search_references(
        query, settings or load_settings(), max_results, year_from, year_to, sources
    )


def get_bibtex(
    doi: str | None = None,
    dois: list[str] | None = None,
    title: str | None = None,
    settings: Settings | None = None,
) -> BibtexResult:
    """BibTeX by DOI, DOIs or title; retracted works carry their notice in ``note``."""
    return export.get_bibtex(settings or load_settings(), doi=doi, dois=dois, title=title)
