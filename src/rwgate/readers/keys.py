"""Cited keys as pandoc filters rewrite them, and ids that are cross-references, not citations.

A cited id in no bibliography is looked up again as filters that run before rw-filter spell it,
before it counts as ``missing_entry``: pandoc-ext/section-bibliographies appends ``--N`` or
``--<sha1 of the heading>`` (``section-bibliographies.lua``, commit ec4e06b); pandoc-ext/cito
reads ``@property:key`` (``cito.lua`` 1.1.0: a prefix counts only when it is a CiTO property or an
alias). Manubot's persistent keys (``@doi:10.1098/rsif.2017.0387``, ``@pmid:…``) name the work
they cite. An id that still matches no entry is a cross-reference when it has the shape of one
(Quarto's ``@fig-x``, pandoc-crossref's ``@fig:x``); one of that shape that *is* a key is a
citation.
"""

from __future__ import annotations

import re
from collections.abc import Container

_SECTION_SUFFIX = re.compile(r"^(?P<base>.+)--(?:\d+(?:\.\d+)*|[0-9a-f]{40})$")
_QUARTO_XREF = re.compile(r"^(?:fig|tbl|sec|eq|lst|thm|lem|cor|prp|cnj|def|exm|exr)-.")
_PANDOC_CROSSREF = re.compile(r"^(?:fig|sec|tbl|eq|lst):.")

# pandoc-ext/cito 1.1.0's properties and their aliases (data, as that filter lists them).
_CITO = """agreesWith agreeWith agree_with agrees_with citation cites citesAsAuthority asAuthority
    cites_as_authority as_authority authority citesAsDataSource asDataSource dataSource
    cites_as_data_source as_data_source data_source citesAsEvidence asEvidence cites_as_evidence
    as_evidence evidence citesAsMetadataDocument asMetadataDocument metadataDocument
    cites_as_metadata_document as_metadata_document metadata_document metadata
    citesAsPotentialSolution cites_as_potential_solution potentialSolution potential_solution
    solution citesAsRecommendedReading asRecommendedReading recommendedReading
    cites_as_recommended_reading as_recommended_reading recommended_reading citesAsRelated
    cites_as_related related citesAsSourceDocument cites_as_source_document sourceDocument
    source_document citesForInformation cites_for_information information compiles confirms
    containsAssertionFrom corrects credits critiques derides describes disagreesWith
    disagrees_with disagree disagrees discusses disputes documents extends includesExcerptFrom
    excerptFrom excerpt excerpt_from includes_excerpt_from includesQuotationFrom quotationFrom
    includes_quotation_from quotation quotation_from linksTo links_to link obtainsBackgroundFrom
    backgroundFrom obtains_background_from background background_from providesDataFor
    obtainsSupportFrom qualifies parodies refutes repliesTo replies_to retracts reviews ridicules
    speculatesOn supports updates usesConclusionsFrom uses_conclusions_from usesDataFrom dataFrom
    uses_data_from data data_from usesMethodIn methodIn uses_method_in method method_in"""
CITO_PREFIXES = frozenset(_CITO.split())


def resolve_key(cited: str, keys: Container[str]) -> str | None:
    """The bibliography key ``cited`` stands for (itself, or under a filter's renaming), or None."""
    if cited in keys:
        return cited
    prefix, colon, rest = cited.partition(":")
    if colon and prefix in CITO_PREFIXES and rest:
        found = resolve_key(rest, keys)
        if found is not None:
            return found
    match = _SECTION_SUFFIX.match(cited)
    if match is not None:
        return resolve_key(match["base"], keys)
    return None


_IDENTIFIER = re.compile(
    r"^(?P<kind>doi|pubmed|pmid|pmcid|pmc|arxiv|url|isbn|wikidata):(?P<value>\S+)$", re.IGNORECASE
)
_KINDS = {"pubmed": "pmid", "pmc": "pmcid"}


def identifier_key(cited: str) -> tuple[str, str] | None:
    """``(kind, value)`` for a key that carries its identifier, as Manubot writes them (``doi:``,
    ``pmid:``/``pubmed:``, ``pmcid:``, ``arxiv:``, ``url:``, ``isbn:``, ``wikidata:``), else None:
    an entry of its own, that manubot's filter resolves without a bibliography."""
    match = _IDENTIFIER.match(cited)
    if match is None:
        return None
    kind = match["kind"].lower()
    return _KINDS.get(kind, kind), match["value"]


def is_cross_reference(cited: str) -> bool:
    """Whether an unresolved cited id has the shape of a Quarto or pandoc-crossref reference."""
    return bool(_QUARTO_XREF.match(cited) or _PANDOC_CROSSREF.match(cited))
