"""The drafting tools' work: every text and list bounded where the input schema cannot say it
(each refusal one line naming the argument), then the verify package's own functions with the
settings the server was started with, so an agent, ``rwgate verify`` and the build agree. A URL
is only read for the DOI or arXiv id written in it, never fetched.
"""

from __future__ import annotations

from collections.abc import Sequence

from rwgate.errors import RwgateError
from rwgate.frontends.mcp import safety
from rwgate.frontends.mcp.safety import BadArgument, one_line
from rwgate.frontends.verify import export, search, verify
from rwgate.frontends.verify.models import BibtexResult, SearchResult, VerifyResult
from rwgate.identify.lookup import SOURCES
from rwgate.settings.config import Settings

MAX_TITLE = 1000
MAX_AUTHORS = 100
MAX_AUTHORS_TEXT = 5000
MAX_ARXIV = 100
MAX_URL = 2000
MAX_BIBTEX_DOIS = 100


def _authors(value: Sequence[str] | str | None) -> list[str] | str | None:
    """A list of names or one ``A and B`` / ``A; B`` string (split by the verify package)."""
    if value is None:
        return None
    if isinstance(value, str):
        return safety.short_text(value, "authors", MAX_AUTHORS_TEXT)
    if len(value) > MAX_AUTHORS:
        raise BadArgument(f"authors: {len(value)} names; the limit is {MAX_AUTHORS}")
    names = [safety.short_text(n, f"authors[{i}]", safety.MAX_NAME) for i, n in enumerate(value)]
    return [n for n in names if n]


def verify_citation(
    settings: Settings,
    title: str,
    authors: Sequence[str] | str | None = None,
    year: int | None = None,
    doi: str | None = None,
    arxiv_id: str | None = None,
    url: str | None = None,
    venue: str | None = None,
) -> VerifyResult:
    """Does the reference exist, does the citation describe it, and is the match retracted?"""
    text = safety.short_text(title, "title", MAX_TITLE) or ""
    names = _authors(authors)
    safety.year_text(year, "year")
    doi = safety.short_text(doi, "doi")
    arxiv_id = safety.short_text(arxiv_id, "arxiv_id", MAX_ARXIV)
    url = safety.short_text(url, "url", MAX_URL)
    venue = safety.short_text(venue, "venue")
    if not (text or doi or arxiv_id or url):
        raise BadArgument("title: give a title (or a doi, arxiv_id or url) to verify")
    try:
        return verify.verify_citation(
            text, names, year, doi, arxiv_id, url, venue, settings=settings
        )
    except (ValueError, RwgateError) as exc:
        raise BadArgument(one_line(exc)) from None


def search_references(
    settings: Settings,
    query: str,
    max_results: int = 10,
    year_from: int | None = None,
    year_to: int | None = None,
    sources: Sequence[str] | None = None,
) -> SearchResult:
    """Real works for a query, de-duplicated, each with its integrity status."""
    text = safety.short_text(query, "query")
    if not text:
        raise BadArgument("query: give words of the title, topic or authors to search for")
    safety.year_text(year_from, "year_from")
    safety.year_text(year_to, "year_to")
    if year_from is not None and year_to is not None and year_from > year_to:
        raise BadArgument(f"year_from: {year_from} is after year_to {year_to}")
    if sources is not None and not sources:  # (the schema checks each name)
        raise BadArgument(f"sources: give at least one of {', '.join(SOURCES)}, or leave it out")
    try:
        return search.search_references(text, settings, max_results, year_from, year_to, sources)
    except (ValueError, RwgateError) as exc:
        raise BadArgument(one_line(exc)) from None


def get_bibtex(
    settings: Settings,
    doi: str | None = None,
    dois: Sequence[str] | None = None,
    title: str | None = None,
) -> BibtexResult:
    """BibTeX entries from registry records; retracted works carry their notice in ``note``."""
    one = safety.short_text(doi, "doi")
    many: list[str] = []
    if dois:
        many = [s for i, d in enumerate(dois) if (s := safety.short_text(d, f"dois[{i}]"))]
    text = safety.short_text(title, "title", MAX_TITLE)
    if not (one or many or text):
        raise BadArgument("give a doi, a list of dois or a title")
    try:
        return export.get_bibtex(settings, doi=one, dois=many or None, title=text)
    except (ValueError, RwgateError) as exc:
        raise BadArgument(one_line(exc)) from None
