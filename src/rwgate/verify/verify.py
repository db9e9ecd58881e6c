"""Does a cited work exist, and does the citation describe it? Plus the integrity of the match.

For each citation: identifiers are read (DOI, arXiv id via its DataCite DOI, a URL's text, never
fetched), every registry is asked at once (the DOI's record and a title search), each candidate is
scored (:mod:`rwgate.verify.match`) and the best one decides the verdict. Only candidates a
registry returned are ever reported; below the partial-match threshold nothing is "matched" (the
closest candidate is shown apart, for a human to judge). The matched DOIs then go to the integrity
core in one batch, so each result carries the status and notices ``rwgate check`` would give.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from rwgate.config import Settings, load_settings
from rwgate.models import Reference
from rwgate.verify import bibtex_export, integrity
from rwgate.verify.discrepancy import compare, missing_fields
from rwgate.verify.lookup import (
    Answers,
    Registries,
    ask,
    doi_tasks,
    open_registries,
    search_tasks,
    sources_note,
)
from rwgate.verify.match import PARTIAL, VERIFIED, normalize_title, score, verdict_for
from rwgate.verify.models import ScoreParts, VerifyResult, Work
from rwgate.verify.records import arxiv_doi, arxiv_id, identifiers_in_url

CANDIDATES = 5
_ENTRY_THREADS = 3


def _identifiers(cited: Reference, result: VerifyResult) -> str | None:
    """The DOI to look up, from the DOI, arXiv id or URL fields (in that order of trust)."""
    doi = cited.doi
    if cited.raw_doi:
        result.errors.append(f"doi: {cited.raw_doi!r} is not a DOI")
    arxiv = arxiv_id(cited.arxiv_id)
    if cited.arxiv_id and arxiv is None:
        result.errors.append(f"arxiv_id: {cited.arxiv_id!r} is not an arXiv identifier")
    url_doi, url_arxiv = identifiers_in_url(cited.url)
    if doi is None and url_doi:
        doi = url_doi
        result.info.append(f"DOI {url_doi} read from the URL (not fetched)")
    arxiv = arxiv or url_arxiv
    if doi is None and arxiv:
        doi = arxiv_doi(arxiv)
        result.info.append(f"arXiv {arxiv} looked up as its DataCite DOI {doi}")
    return doi


def _score(cited: Reference, work: Work) -> ScoreParts:
    """The scorer's parts; a candidate without a title (Crossref holds untitled components and
    reviews) cannot confirm a cited title, so authors, year and venue alone never make it
    ``verified`` (nor lend the citation a recovered DOI)."""
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


def _best(cited: Reference, doi: str | None, answers: Answers) -> tuple[Work, ScoreParts] | None:
    """The highest-scoring candidate; on a tie, the one the cited DOI names."""
    scored = [(w, _score(cited, w)) for w in answers.works]
    if not scored:
        return None
    return max(scored, key=lambda ws: (ws[1].total, ws[0].doi == doi and doi is not None))


def _nothing_comparable(parts: ScoreParts) -> bool:
    return all(getattr(parts, k) is None for k in ("title", "authors", "year", "venue"))


def _decide(cited: Reference, doi: str | None, answers: Answers, result: VerifyResult) -> None:
    best = _best(cited, doi, answers)
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
    tasks = doi_tasks(regs, doi) if doi else []
    n_doi = len(tasks)
    if cited.title:
        extra = " ".join([*cited.authors[:3], str(cited.year or "")]).strip()
        tasks += search_tasks(regs, cited.title, CANDIDATES, crossref_extra=extra)
    answers = ask(tasks, n_doi)
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


def attach_integrity(results: Sequence[VerifyResult], settings: Settings) -> None:
    """One batched integrity check for every matched work; corrected BibTeX with its notice."""
    matched = [(i, r) for i, r in enumerate(results) if r.matched and r.matched.doi]
    pairs = [(r.key or r.matched.doi, r.matched.doi) for _, r in matched]  # type: ignore[union-attr]
    citations = integrity.judge(pairs, settings)  # type: ignore[arg-type]
    for (_, result), citation in zip(matched, citations, strict=True):
        assert result.matched is not None
        result.integrity = citation
        errors, warnings = integrity.describe(citation, result.matched.is_retracted)
        result.errors += errors
        result.warnings += warnings
    keys = bibtex_export.unique_keys(
        r.key or bibtex_export.make_key(r.matched) for r in results if r.matched
    )
    for result, key in zip([r for r in results if r.matched], keys, strict=True):
        assert result.matched is not None
        result.bibtex = bibtex_export.from_work(result.matched, key, result.integrity)


def verify_many(
    cited: Sequence[Reference],
    settings: Settings,
    sources: Sequence[str] | None = None,
    regs: Registries | None = None,
) -> list[VerifyResult]:
    """Verify every citation (a few at a time; the clients' limiters keep the registries happy)."""
    own = regs is None
    regs = regs or open_registries(settings, sources)
    try:
        with ThreadPoolExecutor(max_workers=_ENTRY_THREADS) as pool:
            results = list(pool.map(lambda c: match_one(regs, c), cited))
    finally:
        if own:
            regs.close()
    attach_integrity(results, settings)
    return [_finish(r) for r in results]


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
    """One reference given field by field (the MCP tool's arguments; ``settings`` default to the
    working directory's, as ``rwgate check`` loads them): verdict, confidence, matched work,
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
    return verify_many([cited], settings or load_settings())[0]


@dataclass
class Recovery:
    """What DOI recovery found: the references (recovered ones with ``doi_origin="title"``), the
    match confidence of each recovery by position, and why some could not be tried."""

    references: list[Reference]
    confidence: dict[int, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _recoverable(ref: Reference) -> bool:
    """Only entries with a title and at least a year or a journal are tried: a title alone
    ("Editorial retraction") names too many works to stake a retraction verdict on."""
    return (
        ref.doi is None
        and ref.raw_doi is None
        and not ref.missing
        and bool(ref.title)
        and bool(ref.year or ref.journal)
    )


def recover_dois(references: Sequence[Reference], settings: Settings) -> Recovery:
    """References without a DOI get the DOI of a ``verified`` match; the input is not modified.

    A source that cannot be asked costs only the entries it leaves unmatched: they keep no DOI
    (``no_doi`` in the check) and a warning names the sources and why.
    """
    out = Recovery(list(references))
    wanted = [i for i, r in enumerate(references) if _recoverable(r)]
    if not wanted:
        return out
    cited = [references[i].model_copy(update={"doi": None, "raw_doi": None}) for i in wanted]
    regs = open_registries(settings)
    try:
        with ThreadPoolExecutor(max_workers=_ENTRY_THREADS) as pool:
            results = list(pool.map(lambda c: match_one(regs, c), cited))
    finally:
        regs.close()
    failed: dict[str, str] = {}
    for i, result in zip(wanted, results, strict=True):
        failed.update(result.sources_failed)
        if result.verdict == "verified" and result.matched and result.matched.doi:
            update = {
                "doi": result.matched.doi,
                "doi_origin": "title",
                "doi_confidence": result.confidence,
            }
            out.references[i] = out.references[i].model_copy(update=update)
            out.confidence[i] = result.confidence
    out.warnings += _recovery_warnings(results, failed)
    return out


def _recovery_warnings(results: Sequence[VerifyResult], failed: dict[str, str]) -> list[str]:
    if not failed:
        return []
    why = "; ".join(f"{name}: {reason}" for name, reason in sorted(failed.items()))
    lost = sum(r.verdict == "unverified" for r in results)
    if lost:
        entries = f"{lost} entr{'y' if lost == 1 else 'ies'}"
        return [
            f"DOI recovery: no source could be asked for {entries} ({why}); they stay unchecked"
        ]
    return [f"DOI recovery: some sources could not be asked ({why}); the others answered"]
