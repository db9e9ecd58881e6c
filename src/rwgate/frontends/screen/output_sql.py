"""The screen's counts and outputs in SQL: per citing work (``per_citing``), the flagged
citations, and the statements the summary and the Parquet outputs read.
"""

from __future__ import annotations

from rwgate.contract.vocab import FLAGGED_STATUSES, SERIOUS_STATUSES, STATUSES
from rwgate.frontends.screen import doisql
from rwgate.frontends.screen.verdict_sql import BAD_REASONS

lit = doisql.lit


def status_column(status: str) -> str:
    return f"n_{status}"


SAMPLE = "STRUCT(value VARCHAR, file VARCHAR, rownum BIGINT)"
"""An unusable row's sample: its value (cut at 120 characters), file name and row number."""


def _count(where: str) -> str:
    return f"count(*) FILTER (WHERE {where})"


def per_citing(default: str) -> str:
    """Per citing work: references, flagged, by status, unusable. Every citing work is a row of
    ``grouped`` (its plain references counted there); the counts of its rare rows (:func:`rare`)
    are joined to those that have any (a NULL citing work, rows that name none, is one)."""
    assert default not in FLAGGED_STATUSES
    flagged = "status IN (" + ", ".join(lit(st) for st in SERIOUS_STATUSES) + ")"
    counts = ", ".join(f"{_count(f'status = {lit(st)}')} AS {status_column(st)}" for st in STATUSES)
    bad = ", ".join(
        f"{_count(f'bad_reason = {lit(r)}')} AS bad_{i},"
        f" min(sample) FILTER (WHERE bad_reason = {lit(r)}) AS bad_sample_{i}"
        for i, r in enumerate(BAD_REASONS)
    )
    rare = (
        f"SELECT citing, {_count(flagged)} AS flagged, {_count('cited_after_notice')} AS after,"
        f" {counts}, {bad} FROM rare GROUP BY citing"
    )
    cols = [
        f"g.n - array_length(g.rare) + coalesce(r.{status_column(st)}, 0)"
        if st == default
        else f"coalesce(r.{status_column(st)}, 0)"
        for st in STATUSES
    ]
    plain = [f"{'n' if st == default else '0'} AS {status_column(st)}" for st in STATUSES] + [
        f"0 AS bad_{i}, CAST(NULL AS {SAMPLE}) AS bad_sample_{i}" for i in range(len(BAD_REASONS))
    ]
    bads = [f"coalesce(r.bad_{i}, 0), r.bad_sample_{i}" for i in range(len(BAD_REASONS))]
    # A citing work without rare rows (most of them) is taken as it is; only the others are
    # joined to their counts.
    return (
        "SELECT citing, n AS refs, 0 AS flagged, 0 AS cited_after_notice, day AS citing_date,"
        f" {', '.join(plain)} FROM grouped WHERE rare IS NULL UNION ALL"
        " SELECT g.citing, g.n, coalesce(r.flagged, 0), coalesce(r.after, 0), g.day,"
        f" {', '.join(cols + bads)} FROM (SELECT * FROM grouped WHERE rare IS NOT NULL) AS g"
        f" LEFT JOIN ({rare}) AS r ON r.citing IS NOT DISTINCT FROM g.citing"
    )


FLAGGED_OUT = (
    "SELECT citing, doi AS cited_doi, pmid AS cited_pmid, status, notice_type, notice_doi,"
    " notice_date, record_id, source, citing_date, cited_after_notice FROM rare WHERE flagged"
)
"""Each flagged citation (all are rare rows)."""
CITING_OUT = (
    'SELECT citing, refs AS "references", flagged,'
    " CAST(flagged AS DOUBLE) / refs AS flagged_share, cited_after_notice, citing_date, "
    + ", ".join(status_column(s) for s in FLAGGED_STATUSES)
    + ", n_unverified, n_invalid_doi, n_no_doi FROM per_citing"
)
TOTALS = (
    "SELECT count(*) AS citing_works, sum(refs), sum(flagged), sum(cited_after_notice),"
    " count(*) FILTER (WHERE flagged > 0), "
    + ", ".join(f"sum({status_column(s)})" for s in STATUSES)
    + ", "
    + ", ".join(f"sum(bad_{i})" for i in range(len(BAD_REASONS)))
    + " FROM per_citing"
)


def bad_sample(reason: int, limit: int = 5) -> str:
    """Up to ``limit`` distinct unusable rows for one reason: value, file, row number."""
    col = f"bad_sample_{reason}"
    return (
        f"SELECT DISTINCT {col}.value, {col}.file, {col}.rownum FROM per_citing"
        f" WHERE {col} IS NOT NULL ORDER BY 2, 3, 1 LIMIT {limit}"
    )


SHARES = (
    "SELECT least(CAST(floor(CAST(flagged AS DOUBLE) / refs * 20) AS INTEGER), 19) AS bucket,"
    " count(*) FROM per_citing WHERE flagged > 0 GROUP BY 1 ORDER BY 1"
)
BY_YEAR = (
    "SELECT year(citing_date) AS y, count(*) FROM flagged_out WHERE citing_date IS NOT NULL"
    " GROUP BY 1 ORDER BY 1"
)
TOP = 100
"""Flagged works the summary lists (most cited first); ``flagged.parquet`` holds every one."""
TOP_CITED = (
    "SELECT coalesce(cited_doi, 'PMID ' || cited_pmid) AS work, min(status), count(*) AS n,"
    " count(*) FILTER (WHERE cited_after_notice), min(cited_doi), min(cited_pmid),"
    " min(notice_doi), min(notice_type), min(notice_date), min(record_id) FROM flagged_out"
    f" GROUP BY 1 ORDER BY n DESC, work LIMIT {TOP}"
)

FLAGGED_WORKS = "SELECT count(DISTINCT coalesce(cited_doi, 'PMID ' || cited_pmid)) FROM flagged_out"


ALL_OUT = (
    "SELECT citing, cited_raw, doi AS cited_doi, pmid AS cited_pmid, status, notice_type,"
    " notice_doi, notice_date, record_id, citing_date, cited_after_notice FROM ({screened}) AS a"
)
