"""DOIs Crossref does not hold (issue 14): the DOI resolver's /ra/ endpoint names each one's
registration agency in one request, instead of one /works/{doi} per DOI; a DataCite DOI (arXiv,
Zenodo) is judged by the Retraction Watch snapshot, never "no registry knows this DOI"."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from fakes.crossref import FakeCrossref
from rwgate.contract.models import Reference
from rwgate.core import check
from rwgate.settings.config import load_settings
from rwgate.sources.snapshot.store import import_files

RW = Path(__file__).resolve().parents[1] / "fixtures" / "rw"
ARXIV = "10.48550/arxiv.1706.03762"
UNKNOWN = "10.5555/no-such-work-rwgate"
WAKEFIELD = "10.1016/s0140-6736(97)11096-0"
HOUR, DAY = 3600, 86400
THIRTY_DAYS = 30 * DAY


def _refs(dois: list[str]) -> list[Reference]:
    return [Reference(key=d, doi=d) for d in dois]


@pytest.fixture
def settings(fake_crossref: FakeCrossref, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    monkeypatch.setenv("RWGATE_DOI_URL", fake_crossref.url)
    return load_settings(tmp_path, overrides={"no_cache": True})


def test_left_out_dois_are_asked_of_the_resolver_together(settings, fake_crossref) -> None:  # type: ignore[no-untyped-def]
    dois = [WAKEFIELD, ARXIV] + [f"10.5555/unknown-{i}" for i in range(150)]
    result = check(_refs(dois), settings)
    status = {c.doi: c.status for c in result.citations}
    assert status[WAKEFIELD] == "retracted"
    assert status[ARXIV] == "unverified"  # DataCite's, and no snapshot to judge it
    assert all(status[f"10.5555/unknown-{i}"] == "unknown_doi" for i in range(150))
    by_path = [r.path for r in fake_crossref.requests]
    assert sum(p.startswith("/ra/") for p in by_path) == 2  # 151 left out: two of 100
    assert sum(p.startswith("/works/") for p in by_path) == 0  # none confirmed one by one
    assert len(by_path) <= 5
    arxiv = next(c for c in result.citations if c.doi == ARXIV)
    assert "registered with DataCite, not Crossref" in (arxiv.reason or "")


def test_a_datacite_arxiv_doi_is_not_cleared_by_a_complete_snapshot(  # type: ignore[no-untyped-def]
    settings, tmp_path: Path
) -> None:
    """Issue 49: a preprint is clean only on its server's word; not being in Retraction Watch
    says nothing of an arXiv withdrawal (arXiv cannot be reached here)."""
    snapshot = tmp_path / "s.sqlite3"
    import_files(snapshot, [RW / "rw-extract-2025.csv"], allow_shrink=True)
    with_snapshot = settings.model_copy(update={"snapshot": snapshot})
    (citation,) = check(_refs([ARXIV]), with_snapshot).citations
    assert citation.status == "unverified"
    assert "arXiv not consulted" in (citation.reason or "")
    assert "not listed in the Retraction Watch snapshot" in (citation.reason or "")


def test_an_agency_answer_is_cached_for_30_days_a_crossref_answer_for_one(  # type: ignore[no-untyped-def]
    settings, fake_crossref, tmp_path: Path
) -> None:
    cached = settings.model_copy(update={"no_cache": False, "cache_dir": tmp_path / "cache"})
    check(_refs([WAKEFIELD, ARXIV]), cached)
    asked = len(fake_crossref.requests)
    again = check(_refs([WAKEFIELD, ARXIV]), cached)
    assert len(fake_crossref.requests) == asked  # both answered from the cache
    assert {c.status for c in again.citations} == {"retracted", "unverified"}
    db = sqlite3.connect(tmp_path / "cache" / "json" / "cache.db")
    expiry = dict(db.execute("SELECT key, expire_time FROM Cache").fetchall())
    db.close()
    left = {key.rsplit(":", 1)[-1]: when - time.time() for key, when in expiry.items()}
    assert THIRTY_DAYS - HOUR < left[ARXIV] <= THIRTY_DAYS and DAY - HOUR < left[WAKEFIELD] <= DAY


def test_a_short_doi_is_resolved_and_judged(settings, fake_crossref, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 19: Zotero's shortDOIs were invalid_doi (strict refused clean papers); now the
    resolver's handle API names the DOI (cached), and one it cannot resolve stays unverified."""
    from rwgate.frontends.kit import judge
    from rwgate.readers.bibliographies.bibtex import parse_bib

    bib = "@article{w, doi={10/F8VRCZ}}\n@article{u, doi={https://doi.org/10/zzzz}}\n"
    refs = parse_bib(bib, "z.bib").references
    cached = settings.model_copy(update={"no_cache": False, "cache_dir": tmp_path / "c"})
    w, u = judge(refs, cached).citations
    assert (w.status, w.doi) == ("retracted", WAKEFIELD)
    assert u.status == "unverified" and "shortDOI 'https://doi.org/10/zzzz'" in (u.reason or "")
    offline = cached.model_copy(update={"offline": True})
    again = judge(refs, offline).citations  # the alias was cached: still resolved offline
    assert again[0].doi == WAKEFIELD and again[1].status == "unverified"


def test_the_handle_api_is_asked_as_every_upstream_is(settings, fake_crossref) -> None:  # type: ignore[no-untyped-def]
    """Through the project's one retrying GET: a 503 is retried; an answer that outlasts the
    run's deadline gives an unverified work with its value, within that deadline."""
    from rwgate.frontends.kit import judge
    from rwgate.readers.bibliographies.bibtex import parse_bib

    refs = parse_bib("@article{w, doi={10/f8vrcz}}\n", "z.bib").references
    fake_crossref.fail_next("503")
    assert judge(refs, settings).citations[0].status == "retracted"

    fake_crossref.fail_next("slow", times=5)
    quick = settings.model_copy(update={"max_total_seconds": 1.0, "timeout": 0.5})
    fake_crossref.slow_seconds = 30 * quick.max_total_seconds
    before = len(fake_crossref.requests_to("/api/handles/"))
    (late,) = judge(refs, quick).citations
    assert late.status == "unverified" and "shortDOI '10/f8vrcz'" in (late.reason or "")
    # Not the slow answers waited out one by one: the deadline ended it before the five faults.
    assert 1 <= len(fake_crossref.requests_to("/api/handles/")) - before < 5


def test_dashes_from_pdfs_and_the_old_acm_form_are_the_same_doi() -> None:
    from rwgate.contract.doi import normalize

    assert normalize("10.1016/S0140\u20106736(97)11096\u20130") == WAKEFIELD  # hyphen U+2010
    assert normalize("10.1016/S0140\u22126736(97)11096\u20130") == WAKEFIELD  # minus, en dash
    assert normalize("http://doi.acm.org/10.1145/3287560.3287596") == "10.1145/3287560.3287596"
