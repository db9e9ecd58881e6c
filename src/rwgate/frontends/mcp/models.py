"""What the MCP tools return: Pydantic models, so every tool has an output schema.

Verdicts are the core's own :class:`~rwgate.contract.models.Citation` objects (status, the policy's
action as a separate field, notices in date order), so an agent sees exactly what ``rwgate check``
and the build see. Search results are evidence, not verdicts: notice records as Crossref holds them.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import BaseModel, Field

from rwgate.contract.models import Citation, SourceInfo, Summary
from rwgate.frontends.door import SnapshotStatus

AUTHOR_CAVEAT = (
    "A name match is not an identity match: these works were found by author name in Crossref "
    "or in the snapshot's Retraction Watch rows, and another researcher may share the name. "
    "Confirm identity (ORCID, affiliation, co-authors) "
    "before attributing any of these works or notices to a particular person."
)


class DoiCheck(BaseModel):
    """The verdict for one DOI."""

    citation: Citation = Field(description="status, policy action, notices, title, journal, year")
    sources: list[SourceInfo] = Field(description="where the evidence came from and how fresh")
    warnings: list[str] = Field(default_factory=list)


class CleanWorks(BaseModel):
    """Works judged clean, by key only (the compact answer: an agent needs to know they were
    checked, not their metadata)."""

    count: int
    keys: list[str]


Citations = Annotated[
    list[Citation],
    Field(description="every citation, or (compact, the default) all but the clean ones"),
]
Clean = Annotated[
    CleanWorks | None, Field(description="compact answers: the works judged clean, by key")
]


class BatchCheck(BaseModel):
    """Verdicts for many works, in input order."""

    citations: Citations
    clean: Clean = None
    summary: Summary
    sources: list[SourceInfo]
    warnings: list[str] = Field(default_factory=list)


class DocumentCheck(BaseModel):
    """What the build (``rwgate check``, ``rw-filter``, ``rw-latexmk``) decides for a document."""

    path: str | None = Field(default=None, description="the file checked; absent for text input")
    gate: str = Field(description="'pass' or 'fail': would the build stop on these citations")
    exit_code: int = Field(description="rwgate check's exit code: 0 pass, 1 fail, 2 unreadable")
    policy: dict[str, object] = Field(description="the policy applied (preset, overrides, allow)")
    config_file: str | None = Field(default=None, description="rwgate.toml/pyproject.toml used")
    citations: Citations
    clean: Clean = None
    summary: Summary
    sources: list[SourceInfo]
    project_metadata: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list, description="input problems and notes")


class Update(BaseModel):
    """One editorial update link: a notice and the work it is about."""

    doi: str | None = Field(default=None, description="the other side of the link")
    type: str
    label: str | None = None
    source: str | None = Field(default=None, description="retraction-watch or publisher")
    date: dt.date | None = None
    record_id: str | None = Field(default=None, description="Retraction Watch record id")


class NoticeRecord(BaseModel):
    """A notice (retraction, correction, expression of concern, ...) as Crossref lists it (or
    the snapshot: its Retraction Watch rows, where a notice may lack a DOI)."""

    notice_doi: str | None
    title: str | None = None
    journal: str | None = None
    date: dt.date | None = Field(default=None, description="the latest date of its updates")
    updates: list[Update] = Field(description="the works this notice is about (update-to)")


class NoticeSearch(BaseModel):
    """Notices matching a search, newest update first."""

    total: int = Field(description="how many notices the source matched in all")
    notices: list[NoticeRecord]
    request: dict[str, str] = Field(description="the Crossref /works parameters used")
    sources: list[SourceInfo] = Field(
        default_factory=list, description="which source answered (crossref or snapshot), as of"
    )


class RecentNotices(NoticeSearch):
    """The most recent notices, with how many of them each journal has."""

    by_journal: dict[str, int] = Field(description="journal -> notices in this list")


class AuthorWork(BaseModel):
    """A work whose author list matches the name, with its verdict."""

    authors: list[str] = Field(default_factory=list)
    citation: Citation


class AuthorCheck(BaseModel):
    """Flagged works of an author name (Crossref author search, plus the local snapshot)."""

    name: str
    caveat: str = AUTHOR_CAVEAT
    searched: int = Field(description="works Crossref and the snapshot returned for the name")
    matched: int = Field(description="works whose author list really contains the name")
    flagged: list[AuthorWork] = Field(description="matched works with a notice (any status)")
    sources: list[SourceInfo]
    warnings: list[str] = Field(default_factory=list)


class Record(BaseModel):
    """A Crossref record trimmed to what matters for integrity and citing (or what the snapshot
    holds of the work: no type, publisher or URL of its own)."""

    found: bool
    doi: str | None = Field(description="None: a Retraction Watch record of a work without one")
    type: str | None = None
    title: str | None = None
    journal: str | None = None
    publisher: str | None = None
    year: int | None = None
    authors: list[str] = Field(default_factory=list)
    url: str | None = None
    updated_by: list[Update] = Field(
        default_factory=list, description="notices about this work (updated-by)"
    )
    update_to: list[Update] = Field(
        default_factory=list, description="works this record is itself a notice for (update-to)"
    )
    sources: list[SourceInfo] = Field(default_factory=list)


class CrossrefStatus(BaseModel):
    url: str
    polite_pool: bool = Field(description="CROSSREF_MAILTO is set (sent as mailto)")


class DataStatus(BaseModel):
    """Where verdicts come from right now, and how fresh each source is."""

    offline: bool
    crossref: CrossrefStatus
    openalex_url: str
    cache_dir: str | None = Field(description="None when the cache is disabled")
    cache_ttl_hours: dict[str, float]
    snapshot: SnapshotStatus
    snapshot_stale: bool | None = Field(description="older than max_snapshot_age_days")
    max_snapshot_age_days: int
    policy: dict[str, object]
    roots: list[str] = Field(description="folders whose files the tools may read")
    limits: dict[str, int]


def compact(answer: BatchCheck | DocumentCheck) -> BatchCheck | DocumentCheck:
    """Clean works as a count and their keys; flagged and unjudged ones in full (200 DOIs with 10
    flagged fit in under 3,000 tokens, against ~25,000 with every work in full)."""
    clean = [c for c in answer.citations if c.status == "clean" and c.action == "ignore"]
    if not clean:
        return answer
    kept = [c for c in answer.citations if not (c.status == "clean" and c.action == "ignore")]
    keys = [c.key for c in clean]
    return answer.model_copy(
        update={"citations": kept, "clean": CleanWorks(count=len(keys), keys=keys)}
    )
