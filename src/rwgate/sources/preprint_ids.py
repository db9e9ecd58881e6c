"""Preprint identifiers as authors write them: arXiv ids in every spelling, bioRxiv/medRxiv
DOIs, and the preprint servers that publish no machine-readable withdrawals.

One parser for arXiv ids, because authors write one paper a dozen ways: ``eprint = {1706.03762}``
(BibTeX, biblatex), ``arXiv:1706.03762v5`` in a note or journal (Google Scholar), an arxiv.org
``/abs/`` or ``/pdf/`` URL, DBLP's ``volume = {abs/1706.03762}``, old-style ids with a subject
class (``math.GT/0309136``, filed as ``math/0309136``) and arXiv's DataCite DOI
(``10.48550/arXiv.1706.03762``). The canonical form is the id without version (what ``id_list``
answers with its latest version), the version kept apart.

``10.1101/`` is shared by bioRxiv, medRxiv and the Cold Spring Harbor journals (``10.1101/gr.…``):
only the preprints' suffixes (six or more digits, or the dated ``2020.03.01.123456``) are
preprints; the journals are Crossref's to judge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rwgate.contract.doi import try_normalize

_NEW = r"(?P<new>(?P<yymm>\d{4})\.(?P<num>\d{4,5}))"
_OLD = r"(?P<old>(?P<archive>[a-z]+(?:-[a-z]+)?)(?:\.[a-z]{2})?/(?P<oldnum>\d{7}))"
_VERSION = r"(?:v(?P<version>\d{1,3}))?"
_ID = rf"(?:{_NEW}|{_OLD}){_VERSION}"
_BARE = re.compile(rf"^\s*{_ID}\s*$", re.IGNORECASE)
# Where an id sits inside longer text: after "arXiv:", in an arxiv.org URL, after the DataCite
# prefix, or DBLP's "abs/". A bare id inside prose is not taken (a page range looks the same).
_IN_TEXT = re.compile(
    r"(?:\barxiv\s*:\s*|\barxiv\.org/(?:abs|pdf|html|format)/|10\.48550/arxiv\.|\babs/)"
    rf"{_ID}(?![\d.]*\d)",
    re.IGNORECASE,
)
_ARCHIVE_NAMES = (
    "acc-phys adap-org alg-geom ao-sci astro-ph atom-ph bayes-an chao-dyn chem-ph cmp-lg "
    "comp-gas cond-mat cs dg-ga funct-an gr-qc hep-ex hep-lat hep-ph hep-th math math-ph "
    "mtrl-th nlin nucl-ex nucl-th patt-sol physics plasm-ph q-alg q-bio quant-ph solv-int "
    "supr-con"
)
"""The old-style archives (``hep-th/9901001``)."""
_ARCHIVES = frozenset(_ARCHIVE_NAMES.split())
ARXIV_PREFIX = "10.48550/arxiv."


@dataclass(frozen=True, order=True)
class ArxivId:
    """One arXiv paper (``id``, canonical, without version) and the version written, if any."""

    id: str
    version: int | None = None

    @property
    def versioned(self) -> str:
        return f"{self.id}v{self.version}" if self.version else self.id

    @property
    def doi(self) -> str:
        """The DataCite DOI arXiv registers for the paper (canonical: lower case)."""
        return f"{ARXIV_PREFIX}{self.id}".lower()


def _from_match(match: re.Match[str]) -> ArxivId | None:
    """The id of a regex match, when it is a possible arXiv id (a real month, a known archive,
    four-digit numbers only before 2015 and five-digit ones only from 2015)."""
    version = int(match["version"]) if match["version"] else None
    if version == 0:
        return None
    if match["new"]:
        yymm = match["yymm"]
        year, month = int(yymm[:2]), int(yymm[2:])
        if not 1 <= month <= 12 or (year, month) < (7, 4):
            return None
        if (len(match["num"]) == 5) != (year >= 15):
            return None
        return ArxivId(match["new"], version)
    archive = match["archive"].lower()
    number = match["oldnum"]
    year, month = int(number[:2]), int(number[2:4])
    if archive not in _ARCHIVES or not 1 <= month <= 12 or 7 < year < 91:
        return None
    return ArxivId(f"{archive}/{number}", version)


def parse_arxiv(text: str | None) -> ArxivId | None:
    """The arXiv id in ``text``: a bare id (``1706.03762v2``, ``hep-th/9901001``), or one
    introduced by ``arXiv:``, an arxiv.org URL, the DataCite DOI or DBLP's ``abs/``. None when
    there is none (fail closed: a string that only looks numeric is not guessed at)."""
    if not text:
        return None
    text = text.strip()
    bare = _BARE.match(text)
    if bare:
        return _from_match(bare)
    for match in _IN_TEXT.finditer(text):
        found = _from_match(match)
        if found is not None:
            return found
    return None


def arxiv_of_doi(doi: str | None) -> ArxivId | None:
    """The paper of an arXiv DataCite DOI (``10.48550/arXiv.1706.03762``), else None."""
    canonical = try_normalize(doi) if doi else None
    if not canonical or not canonical.startswith(ARXIV_PREFIX):
        return None
    return parse_arxiv(canonical[len(ARXIV_PREFIX) :])


# --- bioRxiv / medRxiv -------------------------------------------------------------------------

BIORXIV_DOI = r"^10\.1101/(?:\d{6,}|\d{4}\.\d{2}\.\d{2}\.\d{6,})(?:v\d{1,3})?$"
"""A bioRxiv/medRxiv preprint's DOI (RE2 and Python alike: the screen's SQL uses it too)."""
_BIORXIV = re.compile(BIORXIV_DOI)


def biorxiv_doi(doi: str | None) -> str | None:
    """The canonical DOI of a bioRxiv/medRxiv preprint (a ``v2`` copied from a URL dropped), or
    None: another prefix, or a Cold Spring Harbor journal's ``10.1101/gr.…`` (Crossref's)."""
    canonical = try_normalize(doi) if doi else None
    if not canonical or not _BIORXIV.match(canonical):
        return None
    return re.sub(r"v\d{1,3}$", "", canonical)


# --- servers without a machine-readable withdrawal -----------------------------------------------


@dataclass(frozen=True)
class PreprintServer:
    """A preprint server a DOI belongs to, and whether rwgate can learn its withdrawals."""

    name: str
    withdrawals: bool
    """Whether the server publishes withdrawals machine-readably (arXiv, bioRxiv/medRxiv)."""

    @property
    def reason(self) -> str | None:
        """Why a work on it stays unverified (None where withdrawals can be asked)."""
        if self.withdrawals:
            return None
        return f"{self.name} does not publish withdrawals in a machine-readable form"


_SILENT: tuple[tuple[str, str], ...] = (
    ("10.2139/", "SSRN"),
    ("10.21203/", "Research Square"),
    ("10.22541/", "Authorea"),
    ("10.20944/", "Preprints.org"),
    *((f"10.{n}/", "OSF Preprints") for n in range(31219, 31238)),
    ("10.31730/", "OSF Preprints"),
)
"""Prefixes of servers whose withdrawals no API states (Crossref has no withdrawal signal for
posted content either): SSRN, Research Square, Authorea, Preprints.org, the OSF-hosted servers
(OSF Preprints 10.31219, PsyArXiv 10.31234, SocArXiv 10.31235, LawArXiv 10.31228, ...)."""


PREPRINT_PREFIXES: tuple[str, ...] = (ARXIV_PREFIX, *(prefix for prefix, _ in _SILENT))
"""Every preprint DOI prefix but bioRxiv's (``10.1101/`` is shared with CSHL journals: see
:data:`BIORXIV_DOI`), for the screen's SQL."""


def preprint_server(doi: str | None) -> PreprintServer | None:
    """The preprint server of ``doi``, or None when it is no known preprint server's DOI."""
    canonical = try_normalize(doi) if doi else None
    if not canonical:
        return None
    if arxiv_of_doi(canonical) is not None:
        return PreprintServer("arXiv", True)
    if biorxiv_doi(canonical) is not None:
        return PreprintServer("bioRxiv/medRxiv", True)
    for prefix, name in _SILENT:
        if canonical.startswith(prefix):
            return PreprintServer(name, False)
    return None
