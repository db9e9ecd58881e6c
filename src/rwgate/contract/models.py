"""Pydantic models of the contract in DESIGN.md.

These are the only shapes that cross a boundary: readers produce :class:`Reference`, integrity
sources produce :class:`Lookup`, the core produces :class:`Citation` and :class:`Report`, and every
front end (CLI, pandoc filter, LaTeX hooks, MCP) renders those. Keeping them in one small module
is what lets the four front ends agree field for field.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rwgate.contract.vocab import Action, Status

REPORT_SCHEMA = "rwgate.report/1"


class Location(BaseModel):
    """Where a reference was written: the user's own file and line, for error messages."""

    file: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


class Reference(BaseModel):
    """One cited work as a citation source (or a person, or an agent) describes it, before any
    look-up. The one model of a cited work: the check judges it, verification matches it."""

    key: str
    doi: str | None = None
    raw_doi: str | None = Field(default=None, description="the DOI as written, when malformed")
    pmid: str | None = None
    title: str | None = None
    journal: str | None = None
    year: int | None = None
    location: Location | None = None
    missing: bool = Field(default=False, description="cited key found in no bibliography")
    doi_origin: str | None = Field(default=None, description="field the DOI was found in")
    authors: list[str] = Field(default_factory=list, description="family names, in order")
    doi_confidence: float | None = Field(
        default=None, description="match confidence of a DOI recovered from the title"
    )
    arxiv_id: str | None = Field(default=None, description="as written (eprint, arXiv URL)")
    url: str | None = None
    conflict: str | None = Field(
        default=None, description="why the tools that print it read it differently"
    )
    readings: list[Reference] = Field(
        default_factory=list,
        description="the other works the toolchain could print for this key (another definition"
        " of it, another tool's reading): each is judged, the most severe decides",
    )

    @classmethod
    def as_written(cls, key: str, doi: str | None = None, **fields: Any) -> Reference:
        """A reference whose DOI is as a person or an agent typed it: canonical when it is a DOI,
        else kept in ``raw_doi`` (``invalid_doi``), never dropped."""
        from rwgate.contract.doi import try_normalize

        written = (doi or "").strip() or None
        canonical = try_normalize(written) if written else None
        return cls(key=key, doi=canonical, raw_doi=None if canonical else written, **fields)


class Notice(BaseModel):
    """An editorial notice (retraction, correction, ...) attached to a work."""

    model_config = ConfigDict(populate_by_name=True)

    type: str
    doi: str | None = None
    date: dt.date | None = None
    source: list[str] = Field(default_factory=list)
    label: str | None = None
    record_id: str | None = None
    reasons: list[str] = Field(default_factory=list)


Outcome = Literal["found", "not_found", "error", "foreign"]
"""``foreign``: the DOI exists but another registration agency (DataCite, mEDRA, ...) holds it,
so this source has no record to judge (``error`` then names the agency)."""


class Lookup(BaseModel):
    """What one integrity source said about one DOI.

    ``error`` is never cached and never becomes ``clean``; ``not_found`` means the source answered
    and does not know the DOI.
    """

    doi: str
    outcome: Outcome
    source: str
    notices: list[Notice] = Field(default_factory=list)
    title: str | None = None
    journal: str | None = None
    year: int | None = None
    notice_for: list[str] = Field(
        default_factory=list, description="works this record is itself a notice for (update-to)"
    )
    error: str | None = None
    as_of: dt.datetime | None = None
    published_doi: str | None = Field(
        default=None,
        description="the journal version of a preprint, as the preprint server states it",
    )


class SourceInfo(BaseModel):
    """An integrity source named in a report, with how fresh its data was."""

    name: str
    url: str | None = None
    path: str | None = None
    as_of: dt.datetime | None = None
    note: str | None = None
    state: Literal["answered", "cache", "not_reached", "not_asked"] | None = Field(
        default=None,
        description="what happened to the source in this run: asked and answered, answered "
        "from the cache, asked but not reached (no usable answer), or not asked (offline, or "
        "nothing to look up); None: not said",
    )
    why: str | None = Field(
        default=None, description="why it was not reached or not asked, or what it left out"
    )


class Added(BaseModel):
    """When a flagged entry was added to the bibliography, from git: after its notice, the citation
    is the likely error; before it, the manuscript needs an update."""

    date: dt.date | None = Field(default=None, description="None: not committed yet")
    commit: str | None = None
    after_notice: bool | None = Field(
        default=None, description="added after the deciding notice's date (None: undated notice)"
    )


class Citation(BaseModel):
    """The verdict for one cited work: the object every front end shows and MCP returns."""

    key: str
    doi: str | None = None
    status: Status
    action: Action
    allowed: bool = False
    reason: str | None = None
    basis: list[str] = Field(
        default_factory=list, description="the sources whose answers the status rests on"
    )
    notices: list[Notice] = Field(default_factory=list)
    title: str | None = None
    journal: str | None = None
    year: int | None = None
    location: Location | None = None
    change: str | None = Field(
        default=None, description="what changed since the lockfile (--since), if anything"
    )
    added: Added | None = Field(
        default=None, description="when the entry entered the bibliography (git), if known"
    )


class Summary(BaseModel):
    cited: int = 0
    checked: int = 0
    flagged: int = 0
    failed: int = 0
    warned: int = 0
    unverified: int = 0
    changed: int | None = Field(default=None, description="citations changed since the lock")


class ToolInfo(BaseModel):
    name: str = "rwgate"
    version: str


REPORT_JSON: dict[str, Any] = {"by_alias": True, "indent": 2, "exclude_none": True}
"""How the JSON report is serialised, whole (:meth:`Report.to_json`) or in pieces."""


class Report(BaseModel):
    """The JSON report ``rwgate.report/1``."""

    model_config = ConfigDict(populate_by_name=True)

    schema_: str = Field(default=REPORT_SCHEMA, alias="schema")
    generated: dt.datetime
    tool: ToolInfo
    sources: list[SourceInfo]
    project_metadata: list[str] | None = Field(
        default=None, description="project files whose metadata was merged into the manuscript's"
    )
    policy: dict[str, object]
    summary: Summary
    citations: list[Citation]
    warnings: list[str] = Field(default_factory=list)
    since: str | None = Field(default=None, description="the lockfile changes are measured from")
    exit_code: int

    def to_json(self) -> str:
        return self.model_dump_json(**REPORT_JSON)


class Problem(BaseModel):
    """Something wrong with the user's input, reported with its place; the rest still runs."""

    message: str
    location: Location | None = None
    severity: Literal["error", "warning"] = "warning"
    unreadable: bool = Field(
        default=False, description="a whole input could not be read (exit code 2), not one entry"
    )
    unseen: bool = Field(
        default=False,
        description="part of the document rwgate cannot see (code that prints citations, an "
        "include or child document it cannot read): cannot judge (exit 2) under --policy strict, "
        "a warning otherwise",
    )

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class BibResult(BaseModel):
    """What a bibliography reader found: the entries it could read and the problems it met."""

    references: list[Reference] = Field(default_factory=list)
    problems: list[Problem] = Field(default_factory=list)


class CitedDocument(BaseModel):
    """A manuscript reduced to what rwgate needs: which keys it cites and where its entries are."""

    path: str
    keys: list[str] = Field(default_factory=list, description="cited keys, first-citation order")
    cite_all: bool = Field(default=False, description="nocite @* or \\nocite{*}")
    bibliographies: list[str] = Field(default_factory=list, description="resolved file paths")
    inline_references: list[dict[str, Any]] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict, description="the rwgate: block, if any")
    project_metadata: list[str] = Field(
        default_factory=list,
        description="project files (_quarto.yml, index.Rmd, ...) whose metadata was merged in",
    )
    key_locations: dict[str, Location] = Field(
        default_factory=dict, description="where each key is first cited, when known"
    )
    problems: list[Problem] = Field(default_factory=list)
    bibtex_keys: bool = Field(
        default=False,
        description="keys are matched as BibTeX matches them: case-insensitively (biber and "
        "pandoc match exactly)",
    )
    parts: list[CitedDocument] = Field(
        default_factory=list,
        description="the document's other bibliographies (multibib, bibunits, chapterbib), each "
        "with its own keys and files: every work any of them prints is judged",
    )
