"""The shapes citation verification returns (to the CLI, the MCP tools and the JSON report).

A verification result always says which sources answered and carries the integrity verdict of the
matched work as the same :class:`~rwgate.contract.models.Citation` object ``rwgate check``
produces, so an agent that verifies a reference also learns whether it was retracted, in the words
the build uses.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, computed_field

from rwgate.contract.models import Citation, Location
from rwgate.identify.works import Author, ScoreParts, Verdict, Work

__all__ = ["Author", "ScoreParts", "Verdict", "Work"]

VERDICTS: tuple[Verdict, ...] = ("verified", "partial_match", "not_found", "unverified")
Severity = Literal["error", "warning"]


class Discrepancy(BaseModel):
    """One field where the citation and the matched work disagree."""

    field: str
    cited: str | None = None
    found: str | None = None
    severity: Severity
    message: str


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

    # mcp-refchecker's field names, so agents built for it read rwgate's answer unchanged.
    @computed_field(description="mcp-refchecker: true only for verdict `verified`")  # type: ignore[prop-decorator]
    @property
    def verified(self) -> bool:
        return self.verdict == "verified"

    @computed_field(description="mcp-refchecker: the matched work (= `matched`)")  # type: ignore[prop-decorator]
    @property
    def matched_paper(self) -> Work | None:
        return self.matched if self.verdict == "verified" else None

    @computed_field(description="mcp-refchecker: a likely work that did not verify")  # type: ignore[prop-decorator]
    @property
    def possible_match(self) -> Work | None:
        return self.matched if self.verdict == "partial_match" else self.closest


class SearchHit(BaseModel):
    work: Work
    integrity: Citation | None = None


class SearchResult(BaseModel):
    query: str
    complete: bool = Field(
        default=True,
        description="false when a registry could not be asked: a work missing from `results` "
        "may still exist (unverified, not absent)",
    )
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
    not_found: list[str] = Field(
        default_factory=list, description="inputs every registry answered it does not know"
    )
    unverified: list[str] = Field(
        default_factory=list,
        description="inputs no entry was made for because a registry could not be asked: "
        "unknown, not absent (ask again later)",
    )
    sources_answered: list[str] = Field(default_factory=list)
    sources_failed: dict[str, str] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)

    @property
    def text(self) -> str:
        """All entries as one .bib text."""
        return "\n".join(e.bibtex for e in self.entries)
