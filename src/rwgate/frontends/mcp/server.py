"""``rwgate mcp``: the integrity checks as MCP tools for an agent that drafts a manuscript.

Nine ``rw_*`` tools give verdicts on works as the build gives them; three drafting tools check
that a reference exists and export it. Each returns a Pydantic model (so it advertises an output
schema) through :func:`~rwgate.frontends.mcp.calls.run_tool`. Resources are read-only JSON
(data status, policy, one work's notices); the two prompts start a pre-submission screening and
the careful wording of a retracted citation (a retraction is a fact about a paper, not a verdict
on its authors).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp_types import ToolAnnotations
from pydantic import Field

from rwgate import __version__
from rwgate.contract.vocab import STATUSES
from rwgate.frontends.mcp import drafting, models
from rwgate.frontends.mcp.calls import RwServer, run_tool
from rwgate.frontends.mcp.safety import MAX_BATCH, MAX_LIMIT, MAX_NAME, MAX_PATH, MAX_QUERY
from rwgate.frontends.mcp.schemas import shrink_tools
from rwgate.frontends.mcp.tools import Toolbox
from rwgate.frontends.verify.models import BibtexResult, SearchResult, VerifyResult
from rwgate.frontends.verify.search import MAX_RESULTS

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=True)  # (never destructive)
INSTRUCTIONS = (
    "rwgate checks cited works for retractions, withdrawals, expressions of concern and "
    "corrections (Retraction Watch data via Crossref, plus a local snapshot). Before citing a "
    "work, call rw_check_doi (or rw_check_dois for many). Before finishing a manuscript, call "
    "rw_check_manuscript: it gives exactly the verdicts the build (rwgate check, rw-filter, "
    "rw-latexmk) will give. Each verdict has a status (the evidence) and an action (what the "
    "project's policy does with it: fail, annotate, warn, ignore); judge the notices yourself. "
    "A cited retraction NOTICE is not a retracted work. While drafting, call verify_citation on "
    "each reference you did not take from a registry (language models invent references: never "
    "cite one whose verdict is not_found), search_references to find real works, and get_bibtex "
    "to export entries instead of writing BibTeX yourself."
)

Detail = Annotated[bool, Field(description="true: clean works in full too")]
Doi = Annotated[
    str, Field(description="a DOI (10.x/y, doi:, doi.org URL) or arXiv id", max_length=1000)
]
OptionalDoi = Annotated[str | None, Field(description="a DOI, any spelling", max_length=1000)]
Title = Annotated[str, Field(description="as cited", max_length=drafting.MAX_TITLE)]
Authors = Annotated[
    list[str] | str | None, Field(description="a list, or one string 'A. Smith and B. Doe'")
]
ArxivId = Annotated[
    str | None,
    Field(description="e.g. 1706.03762 or arXiv:1706.03762v5", max_length=drafting.MAX_ARXIV),
]
Url = Annotated[
    str | None,
    Field(description="read for a DOI or arXiv id, never fetched", max_length=drafting.MAX_URL),
]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT)]
Year = Annotated[int | None, Field(ge=1000, le=2999)]  # a bound, inclusive (the name says which)
UpdateTypes = Annotated[
    list[str] | None, Field(description="e.g. retraction, withdrawal, expression_of_concern")
]


def build_server(toolbox: Toolbox) -> RwServer:
    """The MCP server with the nine ``rw_*`` tools and the three drafting tools."""
    server = RwServer("rwgate", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    _add_rw_tools(server, toolbox)
    _add_drafting_tools(server, toolbox)
    _add_resources_and_prompts(server, toolbox)
    shrink_tools(server._tool_manager.list_tools())  # what an agent reads at every start
    return server


def _add_rw_tools(server: RwServer, toolbox: Toolbox) -> None:
    """Verdicts on works (by DOI, author, bibliography or manuscript) and the evidence: notices,
    records and where the data come from."""
    tool = functools.partial(server.tool, annotations=READ_ONLY)

    @tool(title="Check a work")
    async def rw_check_doi(doi: Doi) -> models.DoiCheck:
        """Use before citing ONE work: retracted, withdrawn, under concern, corrected? The
        build's verdict: status, action (the policy's), notices. unverified (no source
        answered) is NOT clean."""
        return await run_tool(toolbox.check_doi, doi)

    @tool(title="Check many works")
    async def rw_check_dois(
        dois: Annotated[
            list[Annotated[str, Field(max_length=1000)]],
            Field(description="DOIs or arXiv ids, any spelling", max_length=MAX_BATCH),
        ],
        ctx: Context,
        detail: Detail = False,
    ) -> models.BatchCheck:
        """Use to vet a reference list (up to 1,000 works): verdicts in input order, clean
        works as clean.keys."""
        return await run_tool(toolbox.check_dois, dois, detail=detail, ctx=ctx)

    @tool(title="Flagged works of an author")
    async def rw_check_author(
        name: Annotated[
            str,
            Field(description="'A. J. Wakefield' or 'Wakefield, A'", max_length=MAX_NAME),
        ],
        limit: Limit = 200,
        year_min: Year = None,
        year_max: Year = None,
    ) -> models.AuthorCheck:
        """Use to find works with notices by an author NAME. A name is not an identity:
        read caveat before naming a person."""
        return await run_tool(toolbox.check_author, name, limit, year_min, year_max)

    @tool(title="Search notices")
    async def rw_search(
        query: Annotated[str | None, Field(max_length=MAX_QUERY)] = None,
        journal: Annotated[
            str | None, Field(description="exact journal title", max_length=MAX_QUERY)
        ] = None,
        year_min: Year = None,
        year_max: Year = None,
        update_types: UpdateTypes = None,
        posted_since: Annotated[
            str | None,
            Field(
                description="updated since YYYY[-MM[-DD]]",
                pattern=r"^\d{4}(-\d{2}(-\d{2})?)?$",
            ),
        ] = None,
        limit: Limit = 20,
    ) -> models.NoticeSearch:
        """Use to explore notices by words, journal, years, type or date, each with the
        works it updates. To judge a work: rw_check_doi."""
        return await run_tool(
            toolbox.search, query, journal, year_min, year_max, update_types, posted_since, limit
        )

    @tool(title="Recent notices")
    async def rw_recent_retractions(
        limit: Limit = 20, update_types: UpdateTypes = None
    ) -> models.RecentNotices:
        """Use to see the latest notices (default: retractions) with a count per journal."""
        return await run_tool(toolbox.recent, limit, update_types)

    @tool(title="Record")
    async def rw_get_record(
        doi: OptionalDoi = None,
        record_id: Annotated[str | None, Field(description="or Retraction Watch record id")] = None,
    ) -> models.Record:
        """Use to read a work's or notice's record: updated_by (its notices), update_to (works
        it is a notice for)."""
        return await run_tool(toolbox.get_record, doi, record_id)

    @tool(title="Data sources")
    async def rw_data_status() -> models.DataStatus:
        """Use when verdicts are unverified or look stale: sources, offline, cache, snapshot
        age, policy, readable folders."""
        return await run_tool(toolbox.data_status)

    @tool(title="Check a bibliography")
    async def rw_check_bibliography(
        ctx: Context,
        path: Annotated[
            str | None,
            Field(description=".bib, CSL JSON/YAML or DOI-list file", max_length=MAX_PATH),
        ] = None,
        text: Annotated[
            str | list[Any] | dict[str, Any] | None,
            Field(description="or the bibliography's text"),
        ] = None,
        detail: Detail = False,
    ) -> models.DocumentCheck:
        """Use to check every entry of a .bib/CSL/DOI-list file (or text): verdicts,
        file:line, the gate."""
        if text is not None and not isinstance(text, str):  # CSL JSON given (or parsed) as JSON
            text = json.dumps(text, ensure_ascii=False)
        return await run_tool(toolbox.check_bibliography, path, text, detail=detail, ctx=ctx)

    @tool(title="Check a manuscript")
    async def rw_check_manuscript(
        path: Annotated[
            str,
            Field(description=".md/.qmd/.tex file under the server roots", max_length=MAX_PATH),
        ],
        ctx: Context,
        detail: Detail = False,
    ) -> models.DocumentCheck:
        """Use before handing over a manuscript: each cited work's verdict and the gate
        (pass/fail), as its build gives them."""
        return await run_tool(toolbox.check_manuscript, path, detail=detail, ctx=ctx)


def _add_drafting_tools(server: RwServer, toolbox: Toolbox) -> None:
    """Verify a reference, find real works to cite and export their entries, each with its
    integrity status, with the settings the server was started with."""
    tool = functools.partial(server.tool, annotations=READ_ONLY)
    settings = toolbox.settings

    @tool(title="Verify a reference")
    async def verify_citation(
        title: Title,
        authors: Authors = None,
        year: Year = None,
        doi: OptionalDoi = None,
        arxiv_id: ArxivId = None,
        url: Url = None,
        venue: Annotated[
            str | None, Field(description="journal or proceedings", max_length=MAX_QUERY)
        ] = None,
    ) -> VerifyResult:
        """Use on each reference not taken from a registry: does it EXIST and match? verdict
        verified, partial_match (read errors), not_found (do NOT cite), unverified (no source
        answered); integrity: retraction status."""
        return await run_tool(
            drafting.verify_citation, settings, title, authors, year, doi, arxiv_id, url, venue
        )

    @tool(title="Find real works to cite")
    async def search_references(
        query: Annotated[
            str, Field(description="title words, topic or authors", max_length=MAX_QUERY)
        ],
        max_results: Annotated[int, Field(ge=1, le=MAX_RESULTS)] = 10,
        year_from: Year = None,
        year_to: Year = None,
        sources: Annotated[
            list[Annotated[str, Field(pattern=r"(?i)^\s*(crossref|openalex)\s*$")]] | None,
            Field(description="crossref and/or openalex (default both)", max_length=2),
        ] = None,
    ) -> SearchResult:
        """Use to find REAL works to cite, each with its integrity status (never cite a
        retracted one silently)."""
        return await run_tool(
            drafting.search_references, settings, query, max_results, year_from, year_to, sources
        )

    @tool(title="BibTeX of real works")
    async def get_bibtex(
        doi: OptionalDoi = None,
        dois: Annotated[
            list[str] | None,
            Field(description="DOIs or arXiv ids", max_length=drafting.MAX_BIBTEX_DOIS),
        ] = None,
        title: Annotated[
            str | None,
            Field(description="a title (exported if it verifies)", max_length=drafting.MAX_TITLE),
        ] = None,
    ) -> BibtexResult:
        """Use instead of writing BibTeX: registry entries for a doi, dois or a title, each
        with its integrity (a retracted work's notice is in note)."""
        return await run_tool(drafting.get_bibtex, settings, doi, dois, title)


def _json(model: Any) -> str:
    data = model.model_dump(mode="json") if hasattr(model, "model_dump") else model
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


SCREENING = """Screen the manuscript {path} before submission, with rwgate.

1. Call rw_check_manuscript with path "{path}". It gives the verdicts the build will give.
2. For every citation whose action is fail or annotate, report: the key, the status, each
   notice (type, date, notice DOI) and where the entry is (file:line).
3. For each `unverified` or `missing_entry` citation, say why it could not be judged; it is
   NOT clean. Suggest how to fix it (a DOI, the bibliography entry, running again online).
4. Do not change the manuscript. Propose, for each flagged citation, one of: remove it, replace
   it with a work that supports the claim, or keep it and say in the text that it was retracted
   (as when the retraction itself is the subject).
5. End with the gate result (pass or fail) and the counts from `summary`.
"""

WORDING = """Help me word a citation of the work with DOI {doi}, which may be retracted or under
an expression of concern.

1. Call rw_check_doi with doi "{doi}" and read every notice (type, date, notice DOI).
2. If the work is retracted or withdrawn, write one sentence that cites it together with its
   notice, e.g. "Smith et al. (2019), retracted in 2021 (doi:10.xxxx/notice)", and only where
   the retracted work itself is discussed; otherwise suggest citing other evidence.
3. Be factual and neutral: state what the notice says happened to the paper. Do not speculate
   about misconduct or about the authors; a retraction can follow honest error.
4. For an expression of concern, say that concerns were raised and when, not that the work is
   wrong. For a correction, cite the corrected version.
"""


def _add_resources_and_prompts(server: RwServer, toolbox: Toolbox) -> None:
    """What an agent (or its user) can read or start from without a call."""
    resource = functools.partial(server.resource, mime_type="application/json")

    @resource("rwgate://data-status", title="Data sources and freshness")
    def data_status() -> str:
        """Crossref, the Retraction Watch snapshot (provenance, date, age), cache and roots."""
        return _json(toolbox.data_status())

    @resource("rwgate://policy", title="Policy in force")
    def policy() -> str:
        """The preset, overrides, allow-list, and what each status does (fail, annotate, ...)."""
        chosen = toolbox.settings.to_policy()
        actions = chosen.actions()
        table = {status: actions[status] for status in STATUSES if status in actions}
        return _json({"policy": chosen.model_dump(mode="json"), "actions": table})

    @resource("rwgate://notice/{+doi}", title="Notices about a work")
    def notice(doi: str) -> str:
        """The verdict on the work with this DOI and every notice about it (as rw_check_doi)."""
        return _json(toolbox.check_doi(doi))

    @server.prompt(title="Pre-submission screening")
    def pre_submission_screening(path: str) -> str:
        """Check every citation of a manuscript before submission and report what to fix."""
        return SCREENING.format(path=path)

    @server.prompt(title="Wording a retracted citation")
    def retracted_citation_wording(doi: str) -> str:
        """How to cite a work that was retracted or is under concern, carefully and neutrally."""
        return WORDING.format(doi=doi)


FAILURE_MEMORY = 30.0
"""Seconds a server that could not be reached is not asked again (it answers "not asked")."""


def serve(
    roots: Sequence[Path],
    overrides: dict[str, Any],
    transport: str = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    allowed_hosts: Sequence[str] = (),
) -> None:
    """Run the server until the client disconnects (stdio) or the process is stopped (HTTP)."""
    from rwgate.frontends.door import remember_failures, share_connections
    from rwgate.frontends.mcp.http import security_settings, serve_http

    if transport != "stdio":
        security_settings(host, token, allowed_hosts)  # refuse an unsafe bind before anything
    remember_failures(FAILURE_MEMORY)
    share_connections()
    toolbox = Toolbox(roots, overrides)
    server = build_server(toolbox)
    try:
        if transport == "stdio":
            server.run("stdio")
        else:
            serve_http(server, host, port, token, allowed_hosts)
    finally:
        toolbox.close()
