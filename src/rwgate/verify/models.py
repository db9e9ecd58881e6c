"""The shapes citation verification returns (to the CLI, the MCP tools and the JSON report).

A verification result always says which sources answered and carries the integrity verdict of the
matched work as the same :class:`~rwgate.models.Citation` object ``rwgate check`` produces, so an
agent that verifies a reference also learns whether it was retracted, in the words the build uses.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rwgate.models import Citation, Location

Verdict = Literal["verified", "partial_match", "not_found", "unverified"]
VERDICTS: tuple[Verdict, ...] = ("verified", "partial_match", "not_found", "unverified")
Severity = Literal["error", "warning"]


class Author(BaseModel):
    """One author as a registry gives it; ``family`` is what matching compares."""

    family: str
    given: str | None = None

    def bibtex(self) -> str:
        return f"{self.family}, {self.given}" if self.given else self.family


class Work(BaseModel):
    """A real work as Crossref and/or OpenAlex describe it (never filled in by guessing)."""

    doi: str | None = None
    title: str | None = None
    authors: list[Author] = Field(default_factory=list)
    year: int | None = None
    venue: str | None = None
    type: str | None = Field(default=None, description="Crossref work type, e.g. journal-article")
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    publisher: str | None = None
    arxiv_id: str | None = None
    openalex_id: str | None = None
    is_retracted: bool | None = Field(default=None, description="OpenAlex's flag, when asked")
    sources: list[str] = Field(default_factory=list)


class Discrepancy(BaseModel):
    """One field where the citation and the matched work disagree."""

    field: str
    cited: str | None = None
    found: str | None = None
    severity: Severity
    message: str


class ScoreParts(BaseModel):
    """Each component in [0, 1] (None when one side lacks the field) and the weighted total."""

    title: float | None = None
    authors: float | None = None
    year: float | None = None
    venue: float | None = None
    total: float = 0.0


class VerifyResult(BaseModel):
    """The answer to "does this reference exist, and does its metadata match?"."""

    key: str | None = None
    verdict: Verdict
    confidence: float
    matched: Work | None = None
    closest: Work | None = Field(
        default=None, description="best candidate when not_found (not a match; for the reader)"
    )
    score: ScoreParts | None = None
    discrepancies: list[Discrepancy] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    info: list[str] = Field(default_factory=list)
    bibtex: str | None = Field(default=None, description="corrected BibTeX of the matched work")
    integrity: Citation | None = None
    sources_answered: list[str] = Field(default_factory=list)
    sources_failed: dict[str, str] = Field(default_factory=dict)
    location: Location | None = None


class SearchHit(BaseModel):
    work: Work
    integrity: Citation | None = None


class SearchResult(BaseModel):
    query: str
    results: list[SearchHit] = Field(default_factory=list)
    sources_answered: list[str] = Field(default_factory=list)
    sources_failed: dict[str, str] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)


class BibtexEntry(BaseModel):
    doi: str | None = None
    key: str
    bibtex: str
    origin: Literal["content_negotiation", "metadata"]
    integrity: Citation | None = None


class BibtexResult(BaseModel):
    entries: list[BibtexEntry] = Field(default_factory=list)
    not_found: list[str] = Field(default_factory=list)
    sources_answered: list[str] = Field(default_factory=list)
    sources_failed: dict[str, str] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)

    @property
    def text(self) -> str:
        """All entries as one .bib text."""
        return "\n".join(e.bibtex for e in self.entries)
