"""The screen as SQL text, written once in DuckDB's dialect; Spark gets it through SQLGlot.

An engine provides raw views (``in0``, ``in1``, ... one per input group, as its own file readers
see the files) and the verdict tables ``vdoi``/``vpmid``; everything after that is here:
identifiers normalised (:mod:`rwgate.frontends.screen.doisql`), joined with the verdicts, combined
by
``rwgate check``'s rule for a work cited by DOI and PubMed id (a flagged verdict wins, the more
severe of two flagged ones, else the DOI's), and counted per citing work. The corpus is read
once (:func:`grouped`; the distinct citing dates aside): each row is tested, looked up and
counted, and the few rows that need more (:data:`RARE_ROWS`) are carried out of that pass to be
settled on their own, not once per output.
"""

from __future__ import annotations

import re
from functools import cache

import sqlglot
from sqlglot import exp

from rwgate.contract.vocab import FLAGGED_STATUSES, SERIOUS_STATUSES, STATUSES
from rwgate.frontends.screen import doisql
from rwgate.frontends.screen.columns import Columns
from rwgate.frontends.screen.inputs import InputGroup
from rwgate.frontends.screen.verdicts import COLUMNS
from rwgate.sources.preprint_ids import BIORXIV_DOI, PREPRINT_PREFIXES

lit = doisql.lit
FILE = "rwgate_file"
"""The column of a raw view that holds its row's file number (``input_files``), named apart from
any column of the user's table."""
NOTICE = ("notice_type", "notice_doi", "notice_date", "record_id", "source")
BAD_REASONS = ("no citing work", "malformed DOI", "malformed PubMed id")
"""Why a row could not be screened, in the order the summary lists them."""
N_FLAGGED = len(SERIOUS_STATUSES)
"""A verdict is flagged, in ``rwgate check``'s sense (what its default policy acts on), when its
severity rank is below this; the ranks after it are corrections, counted apart."""


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _text(expr: str) -> str:
    return f"CAST({expr} AS VARCHAR)"


_FLOATS = ("DOUBLE", "FLOAT", "REAL", "DECIMAL", "double", "float")


def is_list(kind: str) -> bool:
    """Whether a column's type (DuckDB's ``typeof``, or Spark's) is a list."""
    return kind.endswith("[]") or kind.lower().startswith("array<")


def values(name: str, kind: str, separator: str | None) -> tuple[str, bool]:
    """An identifier column as text, and whether it is a list of them: a Parquet LIST, or a cell
    of many split at ``separator`` (separators at its ends, repeated or spaced, split nothing:
    ``'10.1/a; 10.1/b;'`` is two references); a whole number stored as a float (pandas writes a
    PubMed id column with gaps so) is its digits, ``34938348``, not ``34938348.0``."""
    c = ident(name)
    if kind == "JSON":  # a JSON lines column of strings and lists: each row's value(s) as text
        return (
            f"CASE WHEN json_type({c}) = 'ARRAY' THEN CASE WHEN json_array_length({c}) > 0"
            f" THEN json_extract_string({c}, '$[*]') ELSE [NULL] END"
            f" ELSE [json_extract_string({c}, '$')] END"
        ), True
    if is_list(kind):
        return f"CASE WHEN len({c}) > 0 THEN CAST({c} AS VARCHAR[]) ELSE [NULL] END", True
    if separator:
        sep = "(?:" + re.escape(separator) + ")"
        ws = f"[{doisql.WS}]*"
        ends = lit(f"^(?:{ws}{sep})+{ws}|{ws}(?:{sep}{ws})+\\z")
        inner = lit(f"{ws}(?:{sep}{ws})+")
        text = f"regexp_replace({_text(c)}, {ends}, '', 'g')"
        return f"regexp_split_to_array({text}, {inner})", True
    if kind.startswith(_FLOATS):
        return (
            f"CASE WHEN {c} = floor({c}) AND abs({c}) < 1e15"
            f" THEN CAST(CAST({c} AS BIGINT) AS VARCHAR) ELSE {_text(c)} END"
        ), False
    return _text(c), False


def _table(
    view: str, cols: Columns, parquet: bool, kinds: dict[str, str], separator: str | None
) -> str:
    def col(name: str | None) -> str:
        return "CAST(NULL AS VARCHAR)" if name is None else _text(ident(name))

    def ref(name: str | None) -> str:
        if name is None:
            return "CAST(NULL AS VARCHAR)"
        expr, listed = values(name, kinds.get(name, "VARCHAR"), separator)
        return f"unnest({expr})" if listed else expr

    return (
        f"SELECT {col(cols.citing)} AS citing, {ref(cols.doi)} AS cited_raw,"
        f" {ref(cols.pmid)} AS pmid_raw, {col(cols.date)} AS date_raw,"
        f" {FILE} AS file, {'file_row_number + 2' if parquet else 'CAST(NULL AS BIGINT)'}"
        f" AS rownum FROM {view}"
    )


def _oc_id(cell: str, prefix: str) -> str:
    """One identifier of an OpenCitations cell: ``doi:10...`` in a list, or a bare DOI (COCI)."""
    tagged = f"regexp_extract({cell}, {lit(f'(?:^|[ ]){prefix}:([^ ]+)')}, 1)"
    if prefix != "doi":
        return f"nullif({tagged}, '')"
    return (
        f"CASE WHEN regexp_matches({cell}, '(?:^|[ ])doi:') THEN {tagged}"
        f" WHEN regexp_matches({cell}, '^[a-z]+:') THEN NULL ELSE {cell} END"
    )


def _opencitations(view: str) -> str:
    return (
        f"SELECT nullif(coalesce({_oc_id('citing', 'doi')}, citing), '') AS citing,"
        f" {_oc_id('cited', 'doi')} AS cited_raw, {_oc_id('cited', 'pmid')} AS pmid_raw,"
        f" creation AS date_raw, {FILE} AS file, CAST(NULL AS BIGINT) AS rownum FROM {view}"
    )


def _crossref(view: str) -> str:
    """Works (a record per line, or the ``items`` of a list file) and their DOI references."""
    works = (
        f'SELECT "DOI" AS doi, reference, issued, {FILE} FROM {view} WHERE items IS NULL'
        f' UNION ALL SELECT w."DOI" AS doi, w.reference AS reference, w.issued AS issued,'
        f" {FILE} FROM {view}, unnest(items) AS u(w)"
    )
    parts = 'r2."date-parts"[1]'
    day = (
        f"CASE WHEN {parts}[1] IS NOT NULL THEN CAST({parts}[1] AS VARCHAR)"
        f" || coalesce('-' || lpad(CAST({parts}[2] AS VARCHAR), 2, '0'), '')"
        f" || coalesce('-' || lpad(CAST({parts}[3] AS VARCHAR), 2, '0'), '') END"
    )
    return (
        f'SELECT lower(doi) AS citing, r."DOI" AS cited_raw, CAST(NULL AS VARCHAR) AS pmid_raw,'
        f" {day} AS date_raw, {FILE} AS file, CAST(NULL AS BIGINT) AS rownum"
        f" FROM (SELECT doi, reference, issued AS r2, {FILE} FROM ({works}) AS w0) AS w1,"
        f" unnest(reference) AS v(r)"
    )


def raw_union(
    groups: list[InputGroup],
    columns: list[Columns | None],
    kinds: list[dict[str, str]] | None = None,
    separator: str | None = None,
) -> str:
    """One SELECT of (citing, cited_raw, pmid_raw, date_raw, file) over every input view; a
    generic table's ``columns`` are those :func:`rwgate.frontends.screen.columns.resolve` found."""
    parts = []
    for i, (grp, cols) in enumerate(zip(groups, columns, strict=True)):
        view = f"in{i}"
        if grp.shape == "opencitations":
            parts.append(_opencitations(view))
        elif grp.shape == "crossref":
            parts.append(_crossref(view))
        else:
            assert cols is not None
            kind = kinds[i] if kinds else {}
            parts.append(_table(view, cols, grp.container == "parquet", kind, separator))
    return " UNION ALL ".join(f"({p})" for p in parts)


def pmid_fast(raw: str) -> str:
    """Whether ``raw`` is a PubMed id as the snapshot keys it already (digits, no leading zero):
    :func:`_pmid` would give it back unchanged."""
    return f"regexp_matches({raw}, '^[1-9][0-9]*\\z')"


def _pmid(raw: str) -> str:
    """A PubMed id as the snapshot keys it: digits, leading zeros dropped (``0`` is none)."""
    ws = f"[{doisql.WS}]*"
    digits = f"regexp_replace({doisql.strip(raw)}, {lit(f'^(?i:pmid){ws}:?{ws}')}, '')"
    return (
        f"CASE WHEN regexp_matches({digits}, '^[0-9]+\\z')"
        f" THEN nullif(regexp_replace({digits}, '^0+', ''), '') END"
    )


def _date(raw: str) -> str:
    """A citing date, ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``, as its first possible day."""
    return (
        f"CASE WHEN regexp_matches({raw}, '^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}')"
        f" THEN try_cast(substr({raw}, 1, 10) AS DATE)"
        f" WHEN regexp_matches({raw}, '^[0-9]{{4}}-[0-9]{{2}}\\z')"
        f" THEN try_cast({raw} || '-01' AS DATE)"
        f" WHEN regexp_matches({raw}, '^[0-9]{{4}}\\z')"
        f" THEN try_cast({raw} || '-01-01' AS DATE) END"
    )


KEYS = (
    "SELECT GROUPING(d) AS gd, GROUPING(p) AS gp, d, p FROM"
    f" (SELECT CASE WHEN {doisql.fast_key('cited_raw')} IS NULL THEN cited_raw END AS d,"
    " pmid_raw AS p FROM rare_rows) AS r GROUP BY GROUPING SETS ((d), (p))"
)
"""The distinct identifiers of the rare rows that need more than a look (DOIs off the fast path,
PubMed ids): the costly rules run once per spelling, not once per row."""


def doi_stages() -> list[tuple[str, str]]:
    """Views normalising the distinct slow DOIs of ``keys``, the last one ``doi_norm``."""
    source = "(SELECT d AS raw FROM keys WHERE gd = 0 AND d IS NOT NULL) AS k"
    return doisql.stages(source, ["raw"], "raw", "doi_norm")


DOI_MAP = (
    "SELECT n.raw AS raw, n.doi AS doi,"
    f" CASE WHEN n.doi IS NULL AND NOT {doisql.blank('n.raw')} THEN"
    f" {doisql.short_doi('n.raw')} END AS short, {doisql.blank('n.raw')} AS no_raw,"
    " CASE WHEN d.id IS NULL AND a.id IS NOT NULL THEN a.id ELSE n.doi END AS vkey"
    " FROM doi_norm AS n LEFT JOIN vdoi AS d ON d.id = n.doi"
    " LEFT JOIN vdoi AS a ON a.id = CASE WHEN n.doi LIKE '%<%' OR n.doi LIKE '%>%'"
    " THEN replace(replace(n.doi, '<', ''), '>', '') END AND a.n_notices > 0"
)
"""Each slow spelling: its DOI, whether it is a shortDOI or blank, and the key its verdict is
found under (a SICI DOI written without its ``<>`` finds the listed one, as in check)."""
PMID_MAP = (
    f"SELECT p AS raw, {_pmid('p')} AS pmid, NOT {doisql.blank('p')} AS has_raw FROM keys"
    " WHERE gp = 0 AND p IS NOT NULL"
)
DATE_MAP = (
    f"SELECT t AS raw, {_date('t')} AS day"
    " FROM (SELECT DISTINCT date_raw AS t FROM refs_raw) AS k WHERE t IS NOT NULL"
)
"""Each citing-date spelling as a day: a corpus has few (one per citing work at most)."""


def grouped(default: str, date: bool = True, pmid: bool = True) -> str:
    """The one pass over every row: per citing work, its references and earliest date, and the
    *rare* rows carried along as a list: all but a plain reference (a citing work, a DOI on the
    fast path that no verdict lists, no PubMed id or one on its fast path that no verdict lists),
    whose verdict is the unlisted status without a look at anything else; so is a row of a
    PubMed id alone, on its fast path and unlisted, when an unlisted work is not ``unverified``
    (with that status such a row is ``no_doi``, as in check). A corpus is mostly plain rows;
    they cost a test, a look-up and a count. Everything else about a row is decided on the few
    per cent that are rare."""
    key = doisql.fast_key("r.cited_raw")
    day = "d.day" if date else "CAST(NULL AS DATE)"
    join = " LEFT JOIN date_map AS d ON d.raw = r.date_raw" if date else ""
    plain = "r.pmid_raw IS NULL AND r.key IS NOT NULL AND v.id IS NULL"
    if pmid:
        unlisted = f"{pmid_fast('r.pmid_raw')} AND p.id IS NULL"
        plain = f"(r.pmid_raw IS NULL OR ({unlisted})) AND r.key IS NOT NULL AND v.id IS NULL"
        if default != "unverified":
            plain = f"({plain}) OR (r.cited_raw IS NULL AND {unlisted})"
        join += " LEFT JOIN vpmid AS p ON p.id = r.pmid_raw"
    if default == "clean":  # an unlisted preprint is not clean (_unlisted): a rare row
        plain = f"({plain}) AND NOT coalesce({_preprint('r.key')}, false)"
    rows = (
        "SELECT r.citing AS citing, r.cited_raw AS cited_raw, r.pmid_raw AS pmid_raw,"
        f" r.date_raw AS date_raw, r.file AS file, r.rownum AS rownum, {day} AS day,"
        f" coalesce(r.citing IS NOT NULL AND ({plain}), false) AS plain"
        f" FROM (SELECT *, {key} AS key FROM refs_raw AS r) AS r"
        f" LEFT JOIN vdoi AS v ON v.id = r.key{join}"
    )
    rare = (
        "struct_pack(cited_raw := cited_raw, pmid_raw := pmid_raw, date_raw := date_raw,"
        " file := file, rownum := rownum)"
    )
    return (
        "SELECT citing, count(*) AS n, min(day) AS day,"
        f" list({rare}) FILTER (WHERE NOT plain) AS rare"
        f" FROM ({rows}) AS x GROUP BY citing"
    )


RARE_ROWS = (
    "SELECT citing, x.cited_raw AS cited_raw, x.pmid_raw AS pmid_raw, x.date_raw AS date_raw,"
    " x.file AS file, x.rownum AS rownum"
    " FROM (SELECT citing, rare FROM grouped WHERE rare IS NOT NULL) AS g, unnest(rare) AS u(x)"
)
"""The rare rows, unpacked: shaped as ``refs_raw`` is, so :func:`screened` reads either."""


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


def _preprint(doi: str) -> str:
    """Whether the canonical DOI ``doi`` is a preprint's (:mod:`rwgate.sources.preprint_ids`):
    one set look-up of its registrant prefix on every row, the prefix tests on the few it keeps."""
    registrants = ", ".join(lit(p.split("/")[0]) for p in dict.fromkeys(PREPRINT_PREFIXES))
    tests = " OR ".join(f"starts_with({doi}, {lit(prefix)})" for prefix in PREPRINT_PREFIXES)
    biorxiv = f"regexp_matches({doi}, {lit(BIORXIV_DOI)})"
    return f"(split_part({doi}, '/', 1) IN ({registrants}, '10.1101') AND ({tests} OR {biorxiv}))"


def _unlisted(default: str) -> str:
    """An unlisted DOI's status: ``default``, except a preprint's, which no registry of notices
    vouches for (``rwgate check`` asks the preprint server; the screen cannot): ``unverified``."""
    if default != "clean":
        return lit(default)
    return f"CASE WHEN {_preprint('doi')} THEN 'unverified' ELSE {lit(default)} END"


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


def plan(default: str, pmid: bool = True, date: bool = True) -> list[tuple[str, str, str]]:
    """The screen in order, as (how, name, statement): ``table`` is materialised, ``step`` is a
    link of the DOI chain (an engine nests or materialises it, see :func:`doisql.stages`).

    One pass over the corpus (``grouped``: every row tested, looked up, counted per citing work,
    the rare rows kept); the citing dates read once more on their own (``date_map``, a column of
    few values). The rules and verdicts (``rare``) then run on the rare rows alone, and
    ``per_citing`` counts them and joins the counts to every citing work.
    """
    return [
        *([("table", "date_map", DATE_MAP)] if date else []),
        ("table", "grouped", grouped(default, date, pmid)),
        ("table", "rare_rows", RARE_ROWS),
        ("table", "keys", KEYS),
        *[("step", name, statement) for name, statement in doi_stages()],
        ("table", "doi_map", DOI_MAP),
        ("table", "pmid_map", PMID_MAP),
        ("table", "rare", rare(default, pmid, date)),
        ("table", "per_citing", per_citing(default)),
        ("table", "flagged_out", FLAGGED_OUT),
    ]


def status_column(status: str) -> str:
    return f"n_{status}"


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


@cache
def to_spark(statement: str) -> str:
    """``statement`` in Spark SQL: SQLGlot's transpilation, plus what it does not know.

    DuckDB's ``try(url_decode(x))`` (NULL on invalid UTF-8) is Spark's ``try_url_decode(x)``
    (SQLGlot would drop the ``try`` and Spark's ``url_decode`` would fail the whole job). A list
    element past the end is NULL in DuckDB and an error in Spark's ANSI mode: ``x[i]`` becomes
    ``try_element_at(x, i)``, both counting from 1 (a Crossref date of year and month has no
    third part).
    """
    tree = sqlglot.parse_one(statement, read="duckdb")

    def fix(node: exp.Expression) -> exp.Expression:
        inner = node.this if isinstance(node, exp.Try) else None
        if isinstance(inner, exp.Anonymous) and inner.name.upper() == "URL_DECODE":
            return exp.Anonymous(this="TRY_URL_DECODE", expressions=list(inner.expressions))
        if isinstance(node, exp.Bracket) and len(node.expressions) == 1:
            index = node.expressions[0]
            if isinstance(index, exp.Literal) and index.is_int:  # SQLGlot holds it from 0
                first = exp.Literal.number(int(index.this) + 1)
                return exp.Anonymous(
                    this="TRY_ELEMENT_AT", expressions=[node.this.transform(fix), first]
                )
        return node

    return tree.transform(fix).sql(dialect="spark")


ALL_OUT = (
    "SELECT citing, cited_raw, doi AS cited_doi, pmid AS cited_pmid, status, notice_type,"
    " notice_doi, notice_date, record_id, citing_date, cited_after_notice FROM ({screened}) AS a"
)
