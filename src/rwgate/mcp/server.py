"""``rwgate mcp``: the integrity checks as MCP tools for an agent that drafts a manuscript.

Nine ``rw_*`` tools give verdicts on works (as the build gives them) and three drafting tools
(``verify_citation``, ``search_references``, ``get_bibtex``) check that a reference exists and
export it, each result carrying the integrity status of the work. The tools are thin: each one
validates its arguments, runs the matching :class:`Toolbox` method (or :mod:`rwgate.mcp.drafting`
function) in a worker thread (the core blocks on HTTP and SQLite; the event loop must keep serving
other requests) and returns a Pydantic model, so every tool advertises an output schema. A refused
argument becomes an MCP tool error whose text is one line, never a traceback.
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
from rwgate.mcp import drafting
from rwgate.mcp.calls import RwServer, run_tool
from rwgate.mcp.models import (
    AuthorCheck,
    BatchCheck,
    DataStatus,
    DocumentCheck,
    DoiCheck,
    NoticeSearch,
    RecentNotices,
    Record,
)
from rwgate.mcp.resources import add_resources_and_prompts
from rwgate.mcp.safety import MAX_BATCH, MAX_LIMIT, MAX_NAME, MAX_PATH, MAX_QUERY
from rwgate.mcp.tools import Toolbox
from rwgate.verify.models import BibtexResult, SearchResult, VerifyResult

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=True)
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

Detail = Annotated[
    bool, Field(description="true: every work in full; false (default): clean works by key only")
]
Doi = Annotated[
    str,
    Field(
        description="a DOI in any spelling: 10.1038/nature12373, doi:..., https://doi.org/...",
        max_length=1000,
    ),
]
OptionalDoi = Annotated[
    str | None,
    Field(
        description="a DOI in any spelling: 10.1038/nature12373, doi:..., https://doi.org/...",
        max_length=1000,
    ),
]
Title = Annotated[
    str,
    Field(
        description=f"the cited title as written (max {drafting.MAX_TITLE} characters)",
        max_length=drafting.MAX_TITLE,
    ),
]
Authors = Annotated[
    list[str] | str | None,
    Field(
        description="cited authors, a list ['LaCour, Michael J.', 'Green, D. P.'] or one string "
        "'LaCour, M. J. and Green, D. P.'; family names are compared"
    ),
]
ArxivId = Annotated[
    str | None,
    Field(description="arXiv id: 1706.03762 or arXiv:1706.03762v5", max_length=drafting.MAX_ARXIV),
]
Url = Annotated[
    str | None,
    Field(
        description="a URL of the work: READ for a DOI or arXiv id, never fetched",
        max_length=drafting.MAX_URL,
    ),
]
Limit = Annotated[int, Field(description=f"how many results, 1..{MAX_LIMIT}", ge=1, le=MAX_LIMIT)]
Year = Annotated[
    int | None, Field(description="publication year bound (inclusive)", ge=1000, le=2999)
]
UpdateTypes = Annotated[
    list[str] | None,
    Field(
        description="Crossref update types to include, e.g. ['retraction', "
        "'expression_of_concern', 'withdrawal', 'correction']",
        max_length=20,
    ),
]


def build_server(toolbox: Toolbox) -> RwServer:
    """The MCP server with the nine ``rw_*`` tools and the three drafting tools."""
    server = RwServer("rwgate", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    _add_verdict_tools(server, toolbox)
    _add_search_tools(server, toolbox)
    _add_document_tools(server, toolbox)
    _add_verify_tool(server, toolbox)
    _add_finding_tools(server, toolbox)
    add_resources_and_prompts(server, toolbox)
    server.close_schemas()
    return server


def _add_verdict_tools(server: RwServer, toolbox: Toolbox) -> None:
    """Verdicts on works named by DOI or author."""
    tool = functools.partial(server.tool, annotations=READ_ONLY)

    @tool(title="Check one work before citing it")
    async def rw_check_doi(doi: Doi) -> DoiCheck:
        """Check ONE work before citing it: is it retracted, withdrawn, under an expression of
        concern, corrected? Returns the verdict the build would give: `status` (evidence),
        `action` (the project's policy: fail/annotate/warn/ignore), every notice in date order
        (type, notice DOI, date, sources, label, Retraction Watch record id), title, journal,
        year. Status `unverified` means the sources could not be asked: it is NOT clean."""
        return await run_tool(toolbox.check_doi, doi)

    @tool(title="Check many works at once")
    async def rw_check_dois(
        dois: Annotated[
            list[Annotated[str, Field(max_length=1000)]],
            Field(description=f"up to {MAX_BATCH} DOIs, any spelling", max_length=MAX_BATCH),
        ],
        ctx: Context,
        detail: Detail = False,
    ) -> BatchCheck:
        """Check MANY works at once (up to 1,000 DOIs per call, one batched look-up). Verdicts
        come back in input order with a summary count: flagged and unjudged works in full, clean
        ones as `clean.keys` (detail=true: every work in full). Prefer this over repeated
        rw_check_doi calls when vetting a reference list."""
        return await run_tool(toolbox.check_dois, dois, detail=detail, ctx=ctx)

    @tool(title="Flagged works of an author name")
    async def rw_check_author(
        name: Annotated[
            str,
            Field(
                description="author name: 'A. J. Wakefield' or 'Wakefield, A'", max_length=MAX_NAME
            ),
        ],
        limit: Annotated[int, Field(description="works to search, 1..1000", ge=1, le=1000)] = 200,
        year_min: Year = None,
        year_max: Year = None,
    ) -> AuthorCheck:
        """List works of an author NAME that carry retractions or other notices (Crossref author
        search, then the same verdicts as rw_check_doi, including the Retraction Watch
        snapshot). A name match is not an identity match: read the `caveat` and confirm
        identity before saying anything about a person."""
        return await run_tool(toolbox.check_author, name, limit, year_min, year_max)


def _add_search_tools(server: RwServer, toolbox: Toolbox) -> None:
    """Evidence: notices, records and where the data come from."""
    tool = functools.partial(server.tool, annotations=READ_ONLY)

    @tool(title="Search editorial notices")
    async def rw_search(
        query: Annotated[
            str | None, Field(description="words of the notice or work", max_length=MAX_QUERY)
        ] = None,
        journal: Annotated[
            str | None, Field(description="exact journal title", max_length=MAX_QUERY)
        ] = None,
        year_min: Year = None,
        year_max: Year = None,
        update_types: UpdateTypes = None,
        posted_since: Annotated[
            str | None,
            Field(
                description="notices updated on or after YYYY[-MM[-DD]]",
                pattern=r"^\d{4}(-\d{2}(-\d{2})?)?$",
            ),
        ] = None,
        limit: Limit = 20,
    ) -> NoticeSearch:
        """Search editorial NOTICES (retractions, corrections, expressions of concern, ...) by
        words, journal, publication years, update type and date, newest first. Each result is
        a notice with the works it updates (`updates[].doi`). Use it to explore a topic or a
        journal; to judge a specific work use rw_check_doi."""
        return await run_tool(
            toolbox.search, query, journal, year_min, year_max, update_types, posted_since, limit
        )

    @tool(title="Most recent notices")
    async def rw_recent_retractions(
        limit: Limit = 20, update_types: UpdateTypes = None
    ) -> RecentNotices:
        """The most recent notices (default: retractions), newest first, with a count per
        journal. Useful to see what changed lately in a field before finalising a draft."""
        return await run_tool(toolbox.recent, limit, update_types)

    @tool(title="A work's or notice's Crossref record")
    async def rw_get_record(doi: Doi) -> Record:
        """The Crossref record of a work or of a notice, trimmed to what matters: title,
        authors, journal, year, type, `updated_by` (notices about this work) and `update_to`
        (works this record is a notice for). `found` is false when Crossref does not know it."""
        return await run_tool(toolbox.get_record, doi)

    @tool(title="Where verdicts come from")
    async def rw_data_status() -> DataStatus:
        """Where verdicts come from: Crossref URL and polite-pool use, offline mode, cache
        folder, the Retraction Watch snapshot (provenance, date, age, staleness), the policy in
        force and the folders this server may read."""
        return await run_tool(toolbox.data_status)


def _add_document_tools(server: RwServer, toolbox: Toolbox) -> None:
    """Verdicts on a bibliography or manuscript, as its build gives them."""
    tool = functools.partial(server.tool, annotations=READ_ONLY)

    @tool(title="Check a bibliography")
    async def rw_check_bibliography(
        ctx: Context,
        path: Annotated[
            str | None,
            Field(description=".bib, CSL JSON/YAML or DOI-list file", max_length=MAX_PATH),
        ] = None,
        text: Annotated[
            str | list[Any] | dict[str, Any] | None,
            Field(
                description="the bibliography itself (max 2 MB): BibTeX, CSL YAML, a DOI list, "
                "or CSL JSON (as text or as JSON)"
            ),
        ] = None,
        detail: Detail = False,
    ) -> DocumentCheck:
        """Check EVERY entry of a bibliography (BibTeX, CSL JSON, CSL YAML, or one DOI per line),
        given as a file under the server's roots or as text. Returns a verdict per entry (key,
        DOI, status, action, notices, file:line) and whether the gate would pass; clean works
        as `clean.keys` unless detail=true. Limits: 1,000 works, 2 MB of text, a 20 MB file."""
        if text is not None and not isinstance(text, str):  # CSL JSON given (or parsed) as JSON
            text = json.dumps(text, ensure_ascii=False)
        return await run_tool(toolbox.check_bibliography, path, text, detail=detail, ctx=ctx)

    @tool(title="Check a manuscript as its build will")
    async def rw_check_manuscript(
        path: Annotated[
            str,
            Field(
                description=".md/.qmd/.tex manuscript under the server roots", max_length=MAX_PATH
            ),
        ],
        ctx: Context,
        detail: Detail = False,
    ) -> DocumentCheck:
        """Check a manuscript exactly as its build will: the cited keys, its bibliographies,
        its `rwgate:` metadata and the rwgate.toml/pyproject.toml policy and allow-list found
        above it. Returns every cited work's verdict and `gate` ('pass'/'fail'), identical to
        `rwgate check`, `rw-filter` and `rw-latexmk` on the same file (clean works as
        `clean.keys` unless detail=true). Limits: 1,000 cited works, a 5 MB manuscript, 30 s
        and 1 GB for pandoc; split a larger document by chapter."""
        return await run_tool(toolbox.check_manuscript, path, detail=detail, ctx=ctx)


def _add_verify_tool(server: RwServer, toolbox: Toolbox) -> None:
    """Citation verification while drafting, with the settings the server was started with."""
    tool = functools.partial(server.tool, annotations=READ_ONLY)
    settings = toolbox.settings

    @tool(title="Does this reference exist?")
    async def verify_citation(
        title: Title,
        authors: Authors = None,
        year: Annotated[
            int | None, Field(description="cited publication year", ge=1000, le=2999)
        ] = None,
        doi: OptionalDoi = None,
        arxiv_id: ArxivId = None,
        url: Url = None,
        venue: Annotated[
            str | None, Field(description="cited journal or proceedings", max_length=MAX_QUERY)
        ] = None,
    ) -> VerifyResult:
        """Check that a reference EXISTS and that its metadata match, before citing it
        (references written from memory are often invented or wrong). Crossref and OpenAlex
        are searched; `verdict` is `verified` (confidence >= 0.85), `partial_match` (0.50-0.85:
        read `errors`/`discrepancies`, e.g. "year: cited 2018, found 2017"), `not_found` (do
        NOT cite it; `closest` is only a hint) or `unverified` (no source answered: unknown,
        not wrong). `matched` is the real work, `bibtex` its corrected entry, `integrity` its
        retraction status (as rw_check_doi gives it), `sources_answered` who answered."""
        return await run_tool(
            drafting.verify_citation, settings, title, authors, year, doi, arxiv_id, url, venue
        )


def _add_finding_tools(server: RwServer, toolbox: Toolbox) -> None:
    """Real works to cite, and their entries, each with its integrity status."""
    tool = functools.partial(server.tool, annotations=READ_ONLY)
    settings = toolbox.settings

    @tool(title="Find real works to cite")
    async def search_references(
        query: Annotated[
            str, Field(description="title words, topic or authors", max_length=MAX_QUERY)
        ],
        max_results: Annotated[
            int,
            Field(
                description=f"how many works, 1..{drafting.MAX_RESULTS}",
                ge=1,
                le=drafting.MAX_RESULTS,
            ),
        ] = 10,
        year_from: Year = None,
        year_to: Year = None,
        sources: Annotated[
            list[Annotated[str, Field(pattern=r"(?i)^\s*(crossref|openalex)\s*$")]] | None,
            Field(description="'crossref' and/or 'openalex' (default both)", max_length=2),
        ] = None,
    ) -> SearchResult:
        """Find REAL works to cite (Crossref and OpenAlex; nothing is ever made up), de-duplicated
        by DOI and title, each with its `integrity` status: never cite a `retracted` one without
        saying so. `sources_answered` says which registries answered this time."""
        return await run_tool(
            drafting.search_references, settings, query, max_results, year_from, year_to, sources
        )

    @tool(title="BibTeX from registry records")
    async def get_bibtex(
        doi: OptionalDoi = None,
        dois: Annotated[
            list[str] | None,
            Field(
                description=f"up to {drafting.MAX_BIBTEX_DOIS} DOIs or arXiv ids",
                max_length=drafting.MAX_BIBTEX_DOIS,
            ),
        ] = None,
        title: Annotated[
            str | None,
            Field(description="a title (exported if it verifies)", max_length=drafting.MAX_TITLE),
        ] = None,
    ) -> BibtexResult:
        """BibTeX entries from the registries' records (Crossref's own rendering when it has
        one), keyed {lastname}{year}{word}, no field guessed. Give a doi, a list of dois, or a
        title (exported only when it matches one work). Retracted works carry the notice in
        `note`; each entry has its `integrity`. Unresolvable inputs are listed in `not_found`."""
        return await run_tool(drafting.get_bibtex, settings, doi, dois, title)


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
    from rwgate.mcp.http import security_settings, serve_http
    from rwgate.sources.http import remember_failures, share_connections

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
