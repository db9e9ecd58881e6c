"""Does a cited work exist, and does the citation describe it? Plus the integrity of the match.

For each citation: identifiers are read (DOI, arXiv id via its DataCite DOI, a URL's text, never
fetched), every registry is asked at once (the DOI's record and a title search), each candidate is
scored (:mod:`rwgate.identify.same`) and the best one decides the verdict. Only candidates a
registry returned are ever reported; below the partial-match threshold nothing is "matched" (the
closest candidate is shown apart, for a human to judge). The matched DOIs then go to the integrity
core in one batch, so each result carries the status and notices ``rwgate check`` would give.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager

from rwgate.contract.models import Reference
from rwgate.frontends.verify import bibtex_export, integrity
from rwgate.frontends.verify.discrepancy import compare, missing_fields
from rwgate.frontends.verify.models import ScoreParts, VerifyResult
from rwgate.identify.ids import arxiv_id, read_ids
from rwgate.identify.lookup import Answers, Registries, look_up, open_registries, sources_note
from rwgate.identify.lookup import best as best_match
from rwgate.identify.same import PARTIAL, VERIFIED, verdict_for
from rwgate.settings.config import Settings
from rwgate.sources import OpenSources, open_sources

_ENTRY_THREADS = 3


def _identifiers(cited: Reference, result: VerifyResult) -> str | None:
    """The DOI to look up: the entry's identifiers as the check reads them
    (:func:`rwgate.identify.ids.read_ids`), with what a report says of them."""
    if cited.raw_doi:
        result.errors.append(f"doi: {cited.raw_doi!r} is not a DOI")
    if cited.arxiv_id and arxiv_id(cited.arxiv_id) is None:
        result.errors.append(f"arxiv_id: {cited.arxiv_id!r} is not an arXiv identifier")
    read, said = read_ids(cited)
    if said:
        result.info.append(said)
    return read.doi


def _nothing_comparable(parts: ScoreParts) -> bool:
    return all(getattr(parts, k) is None for k in ("title", "authors", "year", "venue"))


def _decide(cited: Reference, doi: str | None, answers: Answers, result: VerifyResult) -> None:
    best = best_match(cited, doi, answers)
    if best is None:
        result.verdict, result.confidence = "not_found", 0.0
        return
    work, parts = best
    if doi and work.doi == doi and _nothing_comparable(parts):
        parts.total = 1.0
        result.warnings.append("only the DOI could be checked: the citation gives no metadata")
    result.score, result.confidence = parts, parts.total
    result.verdict = verdict_for(parts.total)
    if parts.total < PARTIAL:
        if (parts.title or 0.0) >= PARTIAL:  # a look-alike title is worth showing; noise is not
            result.closest = work
        return
    result.matched = work
    result.discrepancies += compare(cited, doi, work)
    if doi and work.doi != doi and result.verdict == "verified":
        # The title is right but the DOI names another work (or none): citing it as given would
        # send readers elsewhere, so it is at best a partial match, whatever the title says.
        result.verdict = "partial_match"
        result.confidence = min(result.confidence, round(VERIFIED - 0.01, 2))
        result.warnings.append(
            f"doi: {doi} is not the DOI of the matched work ({work.doi or 'none'}): partial_match"
        )
    if doi is None and work.doi and parts.total >= VERIFIED:
        result.info.append(f"DOI recovered from title: {work.doi}")


def match_one(regs: Registries, cited: Reference) -> VerifyResult:
    """Verdict, match and discrepancies for one citation (no integrity yet)."""
    result = VerifyResult(
        key=cited.key or None, verdict="not_found", confidence=0.0, location=cited.location
    )
    doi = _identifiers(cited, result)
    result.discrepancies = missing_fields(cited)
    if not cited.title and doi is None:
        result.errors.append("nothing to look up: give a title, a DOI, an arXiv id or a URL")
        return result
    answers = look_up(regs, cited, doi)
    result.sources_answered, result.sources_failed = answers.answered, answers.failed
    if not answers.answered:
        result.verdict = "unverified"
        result.errors.append("no source could be asked: " + "; ".join(answers.failed.values()))
        return result
    if doi and doi not in answers.doi_records:
        asked = ", ".join(answers.answered)
        result.errors.append(f"doi: {doi} is not registered (asked {asked})")
    _decide(cited, doi, answers, result)
    return result


def _finish(result: VerifyResult) -> VerifyResult:
    """Errors and warnings lists from the discrepancies, after integrity was added."""
    for d in result.discrepancies:
        (result.errors if d.severity == "error" else result.warnings).append(d.message)
    if result.sources_failed:
        result.warnings.append(sources_note(result.sources_answered, result.sources_failed))
    return result


def attach_integrity(
    results: Sequence[VerifyResult], settings: Settings, sources: OpenSources
) -> None:
    """One batched integrity check for every matched work; corrected BibTeX with its notice."""
    matched = [r for r in results if r.matched and r.matched.doi]
    pairs = [(r.key or r.matched.doi, r.matched.doi) for r in matched]  # type: ignore[union-attr]
    citations = integrity.judge(pairs, settings, sources)  # type: ignore[arg-type]
    for result, citation in zip(matched, citations, strict=True):
        assert result.matched is not None
        result.integrity = citation
        errors, warnings = integrity.describe(citation, result.matched.is_retracted)
        result.errors += errors
        result.warnings += warnings
    found = [(r, r.matched) for r in results if r.matched]
    keys = bibtex_export.unique_keys(r.key or bibtex_export.make_key(work) for r, work in found)
    for (result, work), key in zip(found, keys, strict=True):
        result.bibtex = bibtex_export.from_work(work, key, result.integrity)


@contextmanager
def opened(
    settings: Settings, names: Sequence[str] | None = None
) -> Iterator[tuple[Registries, OpenSources]]:
    """The run's integrity sources, and the registry searches (``names``: default both) on
    their one look-up cache and one client per API; all closed at the end."""
    with (
        closing(open_sources(settings)) as srcs,
        closing(open_registries(settings, names, srcs)) as regs,
    ):
        yield regs, srcs


def verify_many(
    cited: Sequence[Reference], settings: Settings, sources: Sequence[str] | None = None
) -> list[VerifyResult]:
    """Verify every citation (a few at a time; the clients' limiters keep the registries happy)."""
    with opened(settings, sources) as (regs, srcs):
        with ThreadPoolExecutor(max_workers=_ENTRY_THREADS) as pool:
            results = list(pool.map(lambda c: match_one(regs, c), cited))
        attach_integrity(results, settings, srcs)
    return [_finish(r) for r in results]


_SEPARATORS = re.compile(r"\s*;\s*|\s+and\s+", re.IGNORECASE)


def _authors(authors: list[str] | str | None) -> list[str]:
    """A list, or one string ``A and B`` / ``A; B`` as people type them."""
    items = [authors] if isinstance(authors, str) else authors or []
    names = [n.strip() for item in items for n in _SEPARATORS.split(item) if n.strip()]
    return [n for n in names if n.lower() not in ("others", "et al.", "et al")]


def verify_citation(
    title: str,
    authors: list[str] | str | None = None,
    year: int | None = None,
    doi: str | None = None,
    arxiv_id: str | None = None,
    url: str | None = None,
    venue: str | None = None,
    *,
    settings: Settings,
) -> VerifyResult:
    """One reference given field by field (the MCP tool's arguments): verdict, confidence, matched
    work, field-level discrepancies, corrected BibTeX and the integrity status of the match."""
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
    return verify_many([cited], settings)[0]
