"""``search_references``: real works for a query, each with its integrity status.

Results are what the registries returned, nothing else: Crossref's ranking first (it is the
registry of record for Crossref DOIs), then what only OpenAlex found. Duplicates are removed by
DOI and by normalised title plus year, so one work found by both registries is listed once with
both sources named.
"""

from __future__ import annotations

from collections.abc import Sequence

from rwgate.frontends.verify import integrity
from rwgate.frontends.verify.models import SearchHit, SearchResult, Work
from rwgate.frontends.verify.verify import opened
from rwgate.identify.lookup import ask, search_tasks, sources_note
from rwgate.identify.same import normalize_title
from rwgate.identify.works import merge
from rwgate.settings.config import Settings

MAX_RESULTS = 30


def _dedupe(works: Sequence[Work]) -> list[Work]:
    kept: list[Work] = []
    index: dict[str, int] = {}
    for work in works:
        keys = [f"doi:{work.doi}"] if work.doi else []
        title = normalize_title(work.title)
        if title:
            keys.append(f"title:{title}:{work.year}")
        seen = next((index[k] for k in keys if k in index), None)
        if seen is None:
            seen = len(kept)
            kept.append(work)
        else:
            kept[seen] = merge(kept[seen], work)
        for k in keys:
            index.setdefault(k, seen)
    return kept


def search_references(
    query: str,
    settings: Settings,
    max_results: int = 10,
    year_from: int | None = None,
    year_to: int | None = None,
    sources: Sequence[str] | None = None,
) -> SearchResult:
    """Up to ``max_results`` (at most 30) real works matching ``query`` (a query of words and
    years in order: :func:`rwgate.frontends.mcp.drafting.search_references` refuses others)."""
    text = " ".join(query.split())
    if not 1 <= max_results <= MAX_RESULTS:
        raise ValueError(f"search_references: max_results must be 1..{MAX_RESULTS}")
    with opened(settings, sources) as (regs, srcs):
        answers = ask(search_tasks(regs, text, max_results, year_from, year_to))
        works = _dedupe(answers.works)[:max_results]
        pairs = [(w.doi, w.doi) for w in works if w.doi]
        judged = iter(integrity.judge(pairs, settings, srcs))
    return SearchResult(
        query=text,
        complete=not answers.failed,
        results=[SearchHit(work=w, integrity=next(judged) if w.doi else None) for w in works],
        sources_answered=answers.answered,
        sources_failed=answers.failed,
        warnings=[sources_note(answers.answered, answers.failed)] if answers.failed else [],
    )
