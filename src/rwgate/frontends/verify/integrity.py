"""The integrity verdict of matched works, from the one core every front end uses.

Verification never decides retraction status itself: it hands the matched DOIs to
:func:`rwgate.core.check` in one batch, so ``rwgate verify``, ``rwgate check`` and the build agree.
Two things only verification knows are added as reasons: an arXiv DOI is registered with DataCite,
which Crossref's Retraction Watch data does not cover (so "no registry knows it" would be wrong),
and OpenAlex's ``is_retracted`` flag when it disagrees with the core.
"""

from __future__ import annotations

from collections.abc import Sequence

from rwgate.contract.models import Citation, Location, Reference
from rwgate.contract.vocab import RETRACTED_LIKE, SERIOUS_STATUSES, status_label
from rwgate.core import check
from rwgate.identify.ids import ARXIV_PREFIX
from rwgate.render.annotate import annotate
from rwgate.settings.config import Settings
from rwgate.sources import OpenSources
from rwgate.verdicts.result import FLAGGED

SERIOUS = frozenset(SERIOUS_STATUSES)
_RETRACTED_LIKE = frozenset(RETRACTED_LIKE)
_DATACITE = (
    "arXiv DOI (registered with DataCite): not covered by the Retraction Watch data Crossref "
    "redistributes"
)


def judge(
    pairs: Sequence[tuple[str, str]], settings: Settings, sources: OpenSources | None = None
) -> list[Citation]:
    """One citation per ``(key, doi)`` pair, in order, from a single batched check (on the
    run's ``sources`` when given: their one cache and clients)."""
    if not pairs:
        return []
    refs = [Reference(key=key, doi=doi, location=Location(file="verify")) for key, doi in pairs]
    result = check(refs, settings, sources=sources)
    policy = settings.to_policy()
    out = []
    for citation in result.citations:
        update: dict[str, object] = {"location": None}
        if citation.status == "unknown_doi" and (citation.doi or "").startswith(ARXIV_PREFIX):
            action, allowed, _ = policy.decide(citation.key, citation.doi, "unverified")
            update |= {"status": "unverified", "action": action, "reason": _DATACITE}
            update["allowed"] = allowed is not None
        out.append(citation.model_copy(update=update))
    return out


def describe(citation: Citation, openalex_retracted: bool | None) -> tuple[list[str], list[str]]:
    """(errors, warnings) a verification result shows about the matched work's integrity."""
    errors: list[str] = []
    warnings: list[str] = []
    if citation.status in FLAGGED:
        text = f"matched work is {status_label(citation.status)}: {annotate(citation).text}"
        (errors if citation.status in _RETRACTED_LIKE else warnings).append(text)
    elif citation.status == "unverified":
        warnings.append(f"integrity not verified: {citation.reason or 'no source answered'}")
    if openalex_retracted and citation.status not in _RETRACTED_LIKE:
        warnings.append(
            f"OpenAlex marks the matched work as retracted; the integrity record says "
            f"{status_label(citation.status)}"
        )
    return errors, warnings
