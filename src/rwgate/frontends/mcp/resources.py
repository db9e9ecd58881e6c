"""MCP resources and prompts: what an agent (or its user) can read or start from without a call.

Resources are read-only JSON: ``rwgate://data-status`` (sources, snapshot provenance and age),
``rwgate://policy`` (the preset, overrides, allow-list and the action of every status), and
``rwgate://notice/{+doi}`` (the verdict on one work with every notice, as ``rw_check_doi`` gives
it). Prompts are two conversations the user can start: a pre-submission screening of a
manuscript, and how to word a citation of a retracted work (careful, non-accusatory: a
retraction is a fact about a paper, not a verdict on its authors).
"""

from __future__ import annotations

import json
from typing import Any

from rwgate.contract.vocab import STATUSES
from rwgate.frontends.mcp.tools import Toolbox


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


def add_resources_and_prompts(server: Any, toolbox: Toolbox) -> None:
    """Register the resources and prompts on ``server`` (an MCPServer)."""

    @server.resource(
        "rwgate://data-status",
        title="Data sources and freshness",
        mime_type="application/json",
    )
    def data_status() -> str:
        """Crossref, the Retraction Watch snapshot (provenance, date, age), cache and roots."""
        return _json(toolbox.data_status())

    @server.resource("rwgate://policy", title="Policy in force", mime_type="application/json")
    def policy() -> str:
        """The preset, overrides, allow-list, and what each status does (fail, annotate, ...)."""
        chosen = toolbox.settings.to_policy()
        actions = chosen.actions()
        table = {status: actions[status] for status in STATUSES if status in actions}
        return _json({"policy": chosen.model_dump(mode="json"), "actions": table})

    @server.resource(
        "rwgate://notice/{+doi}",
        title="Notices about a work",
        mime_type="application/json",
    )
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
