"""Which identifiers does an entry give? Read once, for ``rwgate check`` and ``rwgate verify``.

The one place that turns what the readers give (DOI, PubMed id, arXiv id, URL, as written) into
what the sources are asked for: the DOI when there is one; else an arXiv id (its own field or an
arXiv URL), looked up as its DataCite DOI. URLs are read, never fetched: nothing a possibly
invented reference points at is visited.
"""

from __future__ import annotations

import re

from rwgate.contract import doi as doimod
from rwgate.contract.models import Reference
from rwgate.sources.preprint_ids import ARXIV_PREFIX, parse_arxiv

_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf|html|format)/\S+", re.IGNORECASE)


def arxiv_id(raw: str | None) -> str | None:
    """The canonical arXiv id (no version) in ``arXiv:1706.03762v5`` and the like: the one
    parser's (:func:`rwgate.sources.preprint_ids.parse_arxiv`), as the arXiv source reads it."""
    found = parse_arxiv(raw)
    return found.id if found else None


def arxiv_doi(identifier: str) -> str:
    """arXiv registers every paper with DataCite as ``10.48550/arXiv.<id>`` (canonical: lower)."""
    return ARXIV_PREFIX + identifier.lower()


def identifiers_in_url(url: str | None) -> tuple[str | None, str | None]:
    """(DOI, arXiv id) written in ``url``; read from the text only, never fetched."""
    if not url:
        return None, None
    match = _ARXIV_URL.search(url)
    if match:
        return None, arxiv_id(match.group(0))
    return doimod.find_in_text(url), None


def read_ids(ref: Reference) -> tuple[Reference, str | None]:
    """``ref`` as the sources are asked about it, and what was read beyond its own DOI (a line
    for a report, or None). A DOI-less entry names the DOI its URL holds (``doi_origin``
    ``url``: the readers find it there already; an agent's reference may not have been read),
    else its arXiv id's (its own field, or an arXiv URL) DataCite DOI (``doi_origin``
    ``arxiv``)."""
    if ref.doi is not None or ref.raw_doi is not None or ref.missing:
        return ref, None
    url_doi, url_arxiv = identifiers_in_url(ref.url)
    if url_doi:
        said = f"DOI {url_doi} read from the URL (not fetched)"
        return ref.model_copy(update={"doi": url_doi, "doi_origin": "url"}), said
    arxiv = arxiv_id(ref.arxiv_id) or url_arxiv
    if arxiv is None:
        return ref, None
    doi = arxiv_doi(arxiv)
    said = f"arXiv {arxiv} looked up as its DataCite DOI {doi}"
    return ref.model_copy(update={"doi": doi, "doi_origin": "arxiv"}), said
