"""A reference's verdict in SQL, and the counts and outputs made of the verdicts.

``rwgate check``'s rules for the rows the one pass of :mod:`rwgate.frontends.screen.sql` carries
out as rare (and every row, for ``citations.parquet``): each row is looked up in the small maps
of its slow spellings, joined with the verdict tables ``vdoi``/``vpmid``, and decided by check's
rule for a work cited by DOI and PubMed id (a flagged verdict wins, the more severe of two
flagged ones, else the DOI's); an unlisted DOI takes the snapshot's unlisted status, except a
preprint's (:func:`preprint`), which is ``unverified``. Then per citing work (:func:`per_citing`),
the flagged citations, and the statements the summary and the Parquet outputs read.
"""

from __future__ import annotations

import re

from rwgate.contract.vocab import FLAGGED_STATUSES, SERIOUS_STATUSES, STATUSES
from rwgate.frontends.screen import doisql
from rwgate.frontends.screen.doisql import lit
from rwgate.frontends.screen.verdicts import COLUMNS
from rwgate.sources.preprint_ids import BIORXIV_DOI, PREPRINT_PREFIXES

NOTICE = ("notice_type", "notice_doi", "notice_date", "record_id", "source")
BAD_REASONS = ("no citing work", "malformed DOI", "malformed PubMed id")
"""Why a row could not be screened, in the order the summary lists them."""
N_FLAGGED = len(SERIOUS_STATUSES)
"""A verdict is flagged, in ``rwgate check``'s sense (what its default policy acts on), when its
severity rank is below this; the ranks after it are corrections, counted apart."""


def pmid_fast(raw: str) -> str:
    """Whether ``raw`` is a PubMed id as the snapshot keys it already (digits, no leading zero):
    :func:`pmid_key` would give it back unchanged."""
    return f"regexp_matches({raw}, '^[1-9][0-9]*\\z')"


def pmid_key(raw: str) -> str:
    """A PubMed id as the snapshot keys it: digits, leading zeros dropped (``0`` is none)."""
    ws = f"[{doisql.WS}]*"
    digits = f"regexp_replace({doisql.strip(raw)}, {lit(f'^(?i:pmid){ws}:?{ws}')}, '')"
    return (
        f"CASE WHEN regexp_matches({digits}, '^[0-9]+\\z')"
        f" THEN nullif(regexp_replace({digits}, '^0+', ''), '') END"
    )


def _looked_up(source: str, pmid: bool, date: bool) -> str:
    """Per row of ``source`` (the rare rows; every row for ``citations.parquet``): hash look-ups
    in the small maps, and the fast key of a DOI outside them; no look-up of a PubMed id
    (``pmid``) or a date (``date``) where no input has the column."""
    # A DOI not in doi_map is on the fast path (the slow spellings of every rare row are in it,
    # and a plain row's DOI is on the fast path).
    fast = doisql.fast_key("r.cited_raw")
    # A PubMed id of a plain row is on its fast path and in no map (only the rare rows' are).
    q_fast = f"q.raw IS NULL AND {pmid_fast('r.pmid_raw')}"
    q_cols = (
        f"CASE WHEN {q_fast} THEN r.pmid_raw ELSE q.pmid END AS pmid,"
        f" CASE WHEN {q_fast} THEN true ELSE coalesce(q.has_raw, false) END AS has_pmid_raw"
    )
    if not pmid:
        q_cols = "CAST(NULL AS VARCHAR) AS pmid, false AS has_pmid_raw"
    t_cols = "t.day AS citing_date" if date else "CAST(NULL AS DATE) AS citing_date"
    joins = " LEFT JOIN pmid_map AS q ON q.raw = r.pmid_raw" if pmid else ""
    joins += " LEFT JOIN date_map AS t ON t.raw = r.date_raw" if date else ""
    looked = (
        "SELECT r.citing AS citing, r.cited_raw AS cited_raw, r.file AS file,"
        " r.pmid_raw AS pmid_raw, r.rownum AS rownum,"
        f" m.raw IS NOT NULL AS hit, m.doi AS m_doi, m.vkey AS m_vkey,"
        f" CASE WHEN m.raw IS NULL THEN {fast} END AS fast,"
        f" {q_cols}, {t_cols},"
        " m.short AS short, coalesce(m.no_raw, r.cited_raw IS NULL) AS no_raw"
        f" FROM {source} AS r LEFT JOIN doi_map AS m ON m.raw = r.cited_raw{joins}"
    )
    return (
        "SELECT citing, cited_raw, pmid_raw, file, rownum,"
        " CASE WHEN hit THEN m_doi ELSE fast END AS doi,"
        " CASE WHEN hit THEN m_vkey ELSE fast END AS vkey, pmid, has_pmid_raw, citing_date,"
        f" short, no_raw FROM ({looked}) AS l"
    )


def preprint(doi: str) -> str:
    """Whether the canonical DOI ``doi`` is a preprint's (:mod:`rwgate.sources.preprint_ids`).

    One anchored pattern, so the expression behind ``doi`` is named once: every row of a corpus
    takes this test, and DuckDB computes an inlined expression again at each of its uses (a test
    per prefix made the main pass 2.6 times as long at 10^7 rows)."""
    prefixes = "|".join(re.escape(prefix) for prefix in PREPRINT_PREFIXES)
    biorxiv = BIORXIV_DOI.removeprefix("^")  # anchored at its end: CSHL journals are no preprints
    return f"regexp_matches({doi}, {lit(f'^(?:{prefixes}|{biorxiv})')})"  # Spark: RLIKE


def _unlisted(default: str) -> str:
    """An unlisted DOI's status: ``default``, except a preprint's, which no registry of notices
    vouches for (``rwgate check`` asks the preprint server; the screen cannot): ``unverified``."""
    if default != "clean":
        return lit(default)
    return f"CASE WHEN {preprint('doi')} THEN 'unverified' ELSE {lit(default)} END"


def screened(default: str, pmid: bool = True, date: bool = True, source: str = "refs_raw") -> str:
    """Every reference of ``source`` with its verdict, ``default`` being an unlisted work's
    status; ``pmid`` and ``date``: whether any input has a PubMed id or a citing-date column."""
    fields = ["status", "flag_rank", *NOTICE]
    types = dict(COLUMNS)

    def p_col(f: str) -> str:
        return f"p.{f}" if pmid else f"CAST(NULL AS {types[f]})"

    joined = (
        "SELECT b.*, "
        + ", ".join(f"d.{f} AS d_{f}, {p_col(f)} AS p_{f}" for f in fields)
        + f" FROM ({_looked_up(source, pmid, date)}) AS b LEFT JOIN vdoi AS d ON d.id = b.vkey"
        + (" LEFT JOIN vpmid AS p ON p.id = b.pmid" if pmid else "")
    )
    d_status = f"coalesce(d_status, {_unlisted(default)})"
    p_status = f"coalesce(p_status, {lit(default)})"
    use_p = (
        "(doi IS NOT NULL AND p_flag_rank IS NOT NULL"
        " AND (d_flag_rank IS NULL OR p_flag_rank < d_flag_rank))"
        f" OR (doi IS NULL AND no_raw AND pmid IS NOT NULL AND {p_status} <> 'unverified')"
    )
    status = (
        f"CASE WHEN from_p THEN {p_status} WHEN doi IS NOT NULL THEN {d_status}"
        " WHEN NOT no_raw THEN CASE WHEN short THEN 'unverified' ELSE 'invalid_doi' END"
        " ELSE 'no_doi' END"
    )
    chosen = ", ".join(
        f"CASE WHEN from_p THEN p_{f} ELSE d_{f} END AS {f}" for f in ["flag_rank", *NOTICE]
    )
    decided = (
        f"SELECT citing, cited_raw, pmid_raw, doi, pmid, citing_date, file, rownum, short,"
        " no_raw, has_pmid_raw,"
        f" {status} AS status, {chosen}"
        f" FROM (SELECT j.*, ({use_p}) AS from_p FROM ({joined}) AS j) AS k"
    )
    # A verdict has a severity rank exactly when its status is a flagged one (verdicts.py):
    # an integer test per row, not a look-up in the list of flagged statuses.
    flagged = f"coalesce(flag_rank < {N_FLAGGED}, false)"
    reason = (
        f"CASE WHEN citing IS NULL THEN {lit(BAD_REASONS[0])}"
        f" WHEN status = 'invalid_doi' THEN {lit(BAD_REASONS[1])}"
        f" WHEN has_pmid_raw AND pmid IS NULL THEN {lit(BAD_REASONS[2])} END"
    )
    return (
        f"SELECT * EXCLUDE (flag_rank), {flagged} AS flagged,"
        f" CASE WHEN {flagged} THEN citing_date > notice_date END AS cited_after_notice,"
        f" {reason} AS bad_reason FROM ({decided}) AS x"
    )


def rare(default: str, pmid: bool = True, date: bool = True) -> str:
    """The rare rows with their verdicts, the reason a row is unusable and its sample (value,
    file name, row): a few per cent of a corpus, kept as rows (``flagged.parquet`` is a filter of
    them, ``per_citing`` a count of them)."""
    value = f"CASE WHEN bad_reason = {lit(BAD_REASONS[2])} THEN pmid_raw ELSE cited_raw END"
    sample = (
        f"struct_pack(value := left(coalesce({value}, ''), 120), file := coalesce(f.name, '?'),"
        " rownum := rownum)"
    )
    return (
        f"SELECT s.*, CASE WHEN bad_reason IS NOT NULL THEN {sample} END AS sample"
        f" FROM ({screened(default, pmid, date, 'rare_rows')}) AS s"
        " LEFT JOIN input_files AS f ON f.file = s.file"
    )


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
