"""Field-level differences between a citation and the work it matched, as errors or warnings.

An error is metadata that is wrong (a title that is not the work's, a year two apart, authors who
did not write it, a DOI that names another work); a warning is metadata that is close but not the
same (one year apart, a typo'd title, another author order, a venue spelled differently) or absent.
"""

from __future__ import annotations

from rwgate.contract.models import Reference
from rwgate.frontends.verify.models import Discrepancy, Severity, Work
from rwgate.identify.same import (
    NAME_TYPO,
    VERIFIED,
    author_overlap,
    normalize_family,
    normalize_title,
    title_similarity,
    venue_similarity,
)

_VENUE_OK = 0.8


def _d(field: str, cited: object, found: object, severity: Severity, text: str) -> Discrepancy:
    return Discrepancy(
        field=field,
        cited=None if cited is None else str(cited),
        found=None if found is None else str(found),
        severity=severity,
        message=f"{field}: {text}",
    )


def missing_fields(cited: Reference) -> list[Discrepancy]:
    """Fields the citation does not give: they cannot be checked, which is worth a warning."""
    given = dict(title=cited.title, authors=cited.authors, year=cited.year, venue=cited.journal)
    text = "not given in the citation; not checked"
    return [_d(name, None, None, "warning", text) for name, value in given.items() if not value]


def _title(cited: Reference, work: Work) -> list[Discrepancy]:
    sim = title_similarity(cited.title, work.title)
    if sim is None or normalize_title(cited.title) == normalize_title(work.title):
        return []
    severity: Severity = "warning" if sim >= VERIFIED else "error"
    text = f"cited '{cited.title}', found '{work.title}'"
    return [_d("title", cited.title, work.title, severity, text)]


def _authors(cited: Reference, work: Work) -> list[Discrepancy]:
    found = [a.family for a in work.authors]
    overlap = author_overlap(cited.authors, found)
    if overlap is None:
        return []
    shown = ", ".join(found[:6]) + (", ..." if len(found) > 6 else "")
    if overlap < 1.0:
        keys = [normalize_family(f) for f in found]
        strangers = [
            name
            for name in cited.authors
            if not any(_close(normalize_family(name), k) for k in keys)
        ]
        severity: Severity = "error" if overlap < 0.5 else "warning"
        text = f"cited {', '.join(strangers)} not among the work's authors ({shown})"
        return [_d("authors", "; ".join(cited.authors), shown, severity, text)]
    first_cited, first_found = normalize_family(cited.authors[0]), normalize_family(found[0])
    if not _close(first_cited, first_found):
        text = f"order differs: cited first author {cited.authors[0]}, found {found[0]}"
        return [_d("authors", "; ".join(cited.authors), shown, "warning", text)]
    return []


def _close(a: str, b: str) -> bool:
    from rapidfuzz import fuzz

    return a == b or fuzz.ratio(a, b) / 100.0 >= NAME_TYPO


def _year(cited: Reference, work: Work) -> list[Discrepancy]:
    if cited.year is None or work.year is None or cited.year == work.year:
        return []
    severity: Severity = "warning" if abs(cited.year - work.year) == 1 else "error"
    return [_d("year", cited.year, work.year, severity, f"cited {cited.year}, found {work.year}")]


def _venue(cited: Reference, work: Work) -> list[Discrepancy]:
    sim = venue_similarity(cited.journal, work.venue)
    if sim is None or sim >= _VENUE_OK:
        return []
    text = f"cited '{cited.journal}', found '{work.venue}'"
    return [_d("venue", cited.journal, work.venue, "warning", text)]


def _doi(cited_doi: str | None, work: Work) -> list[Discrepancy]:
    if cited_doi is None or work.doi is None or cited_doi == work.doi:
        return []
    text = f"cited {cited_doi}, found {work.doi}"
    return [_d("doi", cited_doi, work.doi, "error", text)]


def compare(cited: Reference, cited_doi: str | None, work: Work) -> list[Discrepancy]:
    """Every difference between the citation and the matched work, in field order."""
    return [
        *_title(cited, work),
        *_authors(cited, work),
        *_year(cited, work),
        *_venue(cited, work),
        *_doi(cited_doi, work),
    ]
