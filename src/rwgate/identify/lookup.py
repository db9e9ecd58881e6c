"""Asking Crossref and OpenAlex at once, and keeping going when one of them cannot answer.

These search services answer "which works could this entry be?" (verification, ``get_bibtex``,
``search_references``, DOI recovery); they are not integrity sources. Every question goes to both
registries in parallel; a source's failure is recorded by name ("sources answered: crossref"),
the other's answer still counts, and only when no source answered does verification say
``unverified`` instead of ``not_found`` (a registry that could not be asked proves nothing).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial

from rwgate.contract.models import Reference
from rwgate.identify.crossref_search import CrossrefQuery, SourceUnavailable
from rwgate.identify.openalex import OpenAlexSource
from rwgate.identify.same import PARTIAL, score
from rwgate.identify.works import ScoreParts, Work, merge, work_from_crossref, work_from_openalex
from rwgate.settings.config import Settings
from rwgate.sources import OpenSources
from rwgate.sources.cache import Cache
from rwgate.sources.crossref import CrossrefSource
from rwgate.titles import normalize_title

SOURCES = ("crossref", "openalex")
CROSSREF_SELECT = (
    "DOI,title,author,container-title,issued,published,type,volume,issue,page,publisher"
)
_MAX_THREADS = 6
CANDIDATES = 5


@dataclass
class Registries:
    """The query clients one verification run shares (one cache, one rate limiter each)."""

    cache: Cache
    crossref: CrossrefQuery | None = None
    openalex: OpenAlexSource | None = None
    own_cache: bool = True
    """False: the cache is the run's (its integrity sources'), closed by them."""

    def close(self) -> None:
        if self.crossref is not None:
            self.crossref.close()
        if self.openalex is not None:
            self.openalex.close()
        if self.own_cache:
            self.cache.close()


def sources_note(answered: Sequence[str], failed: dict[str, str]) -> str:
    """The warning when a source did not answer: which did, and why the others did not."""
    return f"sources answered: {', '.join(answered) or 'none'} ({'; '.join(failed.values())})"


def open_registries(
    settings: Settings, names: Sequence[str] | None = None, sources: OpenSources | None = None
) -> Registries:
    """Clients for the named sources (default: both); unknown names raise ``ValueError``.
    ``sources``: the run's integrity sources, whose one look-up cache and one Crossref client
    the searches share (closed by their owner); None: a cache and clients of their own."""

    chosen = tuple(dict.fromkeys(n.strip().lower() for n in (names or SOURCES)))
    unknown = [n for n in chosen if n not in SOURCES]
    if unknown or not chosen:
        raise ValueError(f"unknown source {unknown[0] if unknown else ''!r}; choose from {SOURCES}")
    cache = Cache(settings.lookup_cache) if sources is None else sources.cache
    regs = Registries(cache, own_cache=sources is None)
    if "crossref" in chosen:
        run = None if sources is None else partial(sources.live, CrossrefSource)
        regs.crossref = CrossrefQuery(settings, cache, run)
    if "openalex" in chosen:
        regs.openalex = OpenAlexSource(settings, cache)
    return regs


@dataclass
class Answers:
    """Candidate works from every source (merged by DOI, best-ranked first) and who answered."""

    works: list[Work] = field(default_factory=list)
    answered: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    doi_records: dict[str, Work] = field(default_factory=dict)


Task = tuple[str, Callable[[], list[Work]]]


def doi_tasks(regs: Registries, doi: str) -> list[Task]:
    """Look up one DOI's record in every source."""
    tasks: list[Task] = []
    if regs.crossref is not None:
        cr = regs.crossref
        tasks.append(("crossref", lambda: [work_from_crossref(i) for i in [cr.work(doi)] if i]))
    if regs.openalex is not None:
        oa = regs.openalex
        tasks.append(("openalex", lambda: [work_from_openalex(i) for i in [oa.work(doi)] if i]))
    return tasks


def search_tasks(
    regs: Registries,
    text: str,
    rows: int,
    year_from: int | None = None,
    year_to: int | None = None,
    crossref_extra: str = "",
) -> list[Task]:
    """Free-text search in every source (Crossref ``query.bibliographic``, OpenAlex ``search``).

    ``crossref_extra`` (authors, year) goes to Crossref only: its bibliographic query is made for
    whole references, while OpenAlex's ``search`` would look for the names in titles and texts.
    """
    tasks: list[Task] = []
    if regs.crossref is not None:
        cr = regs.crossref
        query = f"{text} {crossref_extra}".strip()
        params = {"query.bibliographic": query, "rows": str(rows), "select": CROSSREF_SELECT}
        dates = [f"from-pub-date:{year_from}"] if year_from is not None else []
        dates += [f"until-pub-date:{year_to}-12-31"] if year_to is not None else []
        if dates:
            params["filter"] = ",".join(dates)
        tasks.append(("crossref", lambda: [work_from_crossref(i) for i in cr.works(params).items]))
    if regs.openalex is not None:
        oa = regs.openalex
        filters = {}
        if year_from is not None or year_to is not None:
            low, high = ("" if y is None else str(y) for y in (year_from, year_to))
            filters["publication_year"] = f"{low}-{high}" if low != high else low
        tasks.append(
            ("openalex", lambda: [work_from_openalex(i) for i in oa.search(text, rows, filters)])
        )
    return tasks


def ask(tasks: Sequence[Task], doi_tasks_count: int = 0) -> Answers:
    """Run every task at once; the first ``doi_tasks_count`` tasks are DOI look-ups."""
    out = Answers()
    if not tasks:
        return out
    with ThreadPoolExecutor(max_workers=min(len(tasks), _MAX_THREADS)) as pool:
        # Each task in a copy of this context: a cancelled MCP call reaches every source it asks.
        futures = [(name, pool.submit(contextvars.copy_context().run, run)) for name, run in tasks]
        results: list[tuple[str, list[Work] | None, int]] = []
        for index, (name, future) in enumerate(futures):
            try:
                results.append((name, future.result(), index))
            except SourceUnavailable as exc:
                out.failed.setdefault(name, str(exc) or name)
                results.append((name, None, index))
    answered = {name for name, works, _ in results if works is not None}
    out.answered = [n for n in SOURCES if n in answered]
    out.failed = {n: r for n, r in out.failed.items() if n not in answered}
    # Crossref's answers first for each task, so that its metadata wins a merge (it is the
    # registry of record for Crossref DOIs); OpenAlex fills gaps.
    ranked = sorted(results, key=lambda r: (SOURCES.index(r[0]), r[2]))
    by_key: dict[str, Work] = {}
    for _, works, index in ranked:
        for work in works or []:
            key = work.doi or f"title:{work.title}:{work.year}"
            by_key[key] = merge(by_key[key], work) if key in by_key else work
            if index < doi_tasks_count and work.doi:
                out.doi_records[work.doi] = by_key[key]
    for doi in out.doi_records:
        out.doi_records[doi] = by_key[doi]
    out.works = list(by_key.values())
    return out


def look_up(regs: Registries, cited: Reference, doi: str | None) -> Answers:
    """Every registry asked at once about one entry: ``doi``'s record, and a search for its
    title (with up to three authors and the year, for Crossref)."""
    tasks = doi_tasks(regs, doi) if doi else []
    n_doi = len(tasks)
    if cited.title:
        extra = " ".join([*cited.authors[:3], str(cited.year or "")]).strip()
        tasks += search_tasks(regs, cited.title, CANDIDATES, crossref_extra=extra)
    return ask(tasks, n_doi)


def score_work(cited: Reference, work: Work) -> ScoreParts:
    """The one rule's score (:func:`rwgate.identify.same.score`); a candidate without a title
    (Crossref holds untitled components and reviews) cannot confirm a cited title, so authors,
    year and venue alone never make it ``verified`` (nor lend the citation a recovered DOI)."""
    parts = score(
        cited.title,
        work.title,
        cited.authors,
        [a.family for a in work.authors],
        cited.year,
        work.year,
        cited.journal,
        work.venue,
    )
    if normalize_title(cited.title) and not normalize_title(work.title):
        parts.total = min(parts.total, PARTIAL)
    return parts


def best(cited: Reference, doi: str | None, answers: Answers) -> tuple[Work, ScoreParts] | None:
    """The highest-scoring candidate; on a tie, the one the cited DOI names."""
    scored = ((w, score_work(cited, w)) for w in answers.works)
    named = doi is not None
    return max(scored, key=lambda ws: (ws[1].total, named and ws[0].doi == doi), default=None)
