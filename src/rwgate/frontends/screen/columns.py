"""Which column of a generic table holds what the screen needs, decided before any row is read
(a wrong guess would read every reference as ``no_doi`` and report a clean corpus).

Each role is found by the column a flag names (it must exist), else by the role's own name
(``citing``, ``cited_doi``, ``cited_pmid``, ``citing_date``), else by one of its
:data:`COMMON_NAMES` (without case, ``-`` and space read as ``_``) when exactly one column is
among them. Two candidates, no citing column, or neither a DOI nor a PubMed id column is an error
of one line naming the file, its columns and the flag to use; a table without a PubMed id or a
date column is screened, the summary saying so. A DOI column whose first values are mostly
neither DOIs nor PubMed ids is no DOI column, whatever its name (:func:`check_values`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from rwgate.contract.doi import try_normalize
from rwgate.frontends.screen.inputs import InputError, InputGroup

ROLES = ("citing", "doi", "pmid", "date")
"""The roles a generic table's columns play, as ``--column ROLE=NAME`` names them."""

OWN_NAMES = {"citing": "citing", "doi": "cited_doi", "pmid": "cited_pmid", "date": "citing_date"}
COMMON_NAMES: dict[str, tuple[str, ...]] = {
    "citing": (
        "citing", "citing_doi", "citing_id", "citing_work", "citing_paper", "source_doi",
        "source_id", "work_id", "paper_id", "article_id", "manuscript_id",
    ),
    "doi": (
        "cited_doi", "doi", "cited", "reference_doi", "ref_doi", "referenced_doi",
        "cited_work_doi", "target_doi", "citation_doi",
    ),
    "pmid": (
        "cited_pmid", "pmid", "pubmed_id", "cited_pubmed_id", "reference_pmid", "ref_pmid",
    ),
    "date": (
        "citing_date", "date", "citing_year", "year", "publication_date", "pub_date",
        "published", "creation", "citing_published",
    ),
}  # fmt: skip
"""Names each role is found under when the table does not use the role's own name."""
WHAT = {
    "citing": "citing-work",
    "doi": "cited-DOI",
    "pmid": "cited-PubMed-id",
    "date": "citing-date",
}
SAMPLE = 1000
"""Non-empty DOI values looked at before the screen: enough to tell a DOI column from another."""
_PMID = re.compile(r"(?i)\s*(?:pmid:?\s*)?0*[1-9][0-9]{0,9}\s*")
_SHORT = re.compile(r"(?i)\s*(?:https?://(?:dx\.)?doi\.org/|doi:\s*)?10/[a-z0-9]{2,20}\s*")


@dataclass(frozen=True)
class Columns:
    """The columns a table's roles were found in (None: the table has none) and how."""

    citing: str | None
    doi: str | None
    pmid: str | None
    date: str | None
    how: dict[str, str]


def _key(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", name.strip()).lower()


def _listing(columns: list[str]) -> str:
    shown = ", ".join(columns[:20]) + (
        f", ... ({len(columns)} in all)" if len(columns) > 20 else ""
    )
    return shown or "none"


def _where(grp: InputGroup) -> str:
    more = f" (and {len(grp.files) - 1} more file(s) read with it)" if len(grp.files) > 1 else ""
    return f"{grp.files[0]}{more}"


def _find(
    role: str, given: str | None, columns: list[str], grp: InputGroup
) -> tuple[str | None, str]:
    """The column of ``role`` and how it was found; InputError for a wrong or doubtful one."""
    flag = f"--{role}-column"
    if given is not None:
        if given == "":
            return None, "none, as asked"
        if given not in columns:
            raise InputError(
                f"{_where(grp)}: no column {given!r} (asked for by {flag}); its columns are"
                f" {_listing(columns)}"
            )
        return given, f"named by {flag}"
    if OWN_NAMES[role] in columns:
        return OWN_NAMES[role], "its own name"
    common = set(COMMON_NAMES[role])
    found = [c for c in columns if _key(c) in common]
    if len(found) > 1:
        raise InputError(
            f"{_where(grp)}: {len(found)} columns could hold the {WHAT[role]}"
            f" ({', '.join(found)}); say which with {flag} NAME (its columns are"
            f" {_listing(columns)})"
        )
    if found:
        return found[0], "a common name"
    return None, "absent"


def resolve(grp: InputGroup, columns: list[str], given: dict[str, str | None]) -> Columns:
    """The roles of a generic table's ``columns``: flags first, then names (see the module)."""
    found: dict[str, str | None] = {}
    how: dict[str, str] = {}
    for role in ROLES:
        found[role], how[role] = _find(role, given.get(role), columns, grp)
    if found["citing"] is None:
        raise InputError(
            f"{_where(grp)}: no citing-work column (looked for"
            f" {', '.join(COMMON_NAMES['citing'])}); its columns are {_listing(columns)}:"
            " name it with --citing-column NAME"
        )
    if found["doi"] is None and found["pmid"] is None:
        asked = " (--doi-column '' leaves none)" if given.get("doi") == "" else ""
        raise InputError(
            f"{_where(grp)}: no cited-DOI column{asked} (looked for"
            f" {', '.join(COMMON_NAMES['doi'])}) and no PubMed id column; its columns are"
            f" {_listing(columns)}: name it with --doi-column NAME"
        )
    return Columns(found["citing"], found["doi"], found["pmid"], found["date"], how)


def _is_identifier(value: str) -> bool:
    return (
        try_normalize(value) is not None
        or _PMID.fullmatch(value) is not None
        or _SHORT.fullmatch(value) is not None
    )


def check_values(
    grp: InputGroup, columns: list[str], column: str, values: Iterable[str | None]
) -> None:
    """Raise InputError when most non-empty ``values`` (the first of the column) are neither
    DOIs nor PubMed ids: a column of titles or URLs is not a DOI column, whatever its name."""
    seen = [v for v in values if v is not None and v.strip()]
    if not seen:
        return
    bad = [v for v in seen if not _is_identifier(v)]
    if 2 * len(bad) > len(seen):
        example = bad[0].strip()
        example = example if len(example) <= 60 else example[:57] + "..."
        raise InputError(
            f"{_where(grp)}: column {column!r} does not hold DOIs ({len(bad)} of the first"
            f" {len(seen)} values are neither a DOI nor a PubMed id, e.g. {example!r}); its"
            f" columns are {_listing(columns)}: name the DOI column with --doi-column NAME"
        )


def parse_column_flags(pairs: list[str]) -> dict[str, str]:
    """``--column ROLE=NAME`` values as a role -> name map; a usage error names a wrong one."""
    out: dict[str, str] = {}
    for pair in pairs:
        role, sep, name = pair.partition("=")
        role = role.strip().lower()
        if not sep or role not in ROLES:
            raise InputError(
                f"--column {pair!r}: expected ROLE=NAME with ROLE one of {', '.join(ROLES)}"
            )
        out[role] = name
    return out
