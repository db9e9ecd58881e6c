"""The screen as SQL text, written once in DuckDB's dialect; Spark gets it through SQLGlot.

An engine provides raw views (``in0``, ``in1``, ... one per input group) and the verdict tables
``vdoi``/``vpmid``; everything after that is SQL text: the rows of each input shaped alike
(:func:`raw_union`), the one pass over them (:func:`grouped`) and the :func:`plan`. DOIs are
normalised in :mod:`~rwgate.frontends.screen.doisql`, verdicts and counts decided in
:mod:`~rwgate.frontends.screen.verdict_sql`.
"""

from __future__ import annotations

import re
from functools import cache

import sqlglot
from sqlglot import exp

from rwgate.frontends.screen import doisql, verdict_sql
from rwgate.frontends.screen.columns import Columns
from rwgate.frontends.screen.doisql import ident, lit
from rwgate.frontends.screen.inputs import InputGroup

FILE = "rwgate_file"
"""The column of a raw view that holds its row's file number (``input_files``), named apart from
any column of the user's table."""


def _text(expr: str) -> str:
    return f"CAST({expr} AS VARCHAR)"


_FLOATS = ("DOUBLE", "FLOAT", "REAL", "DECIMAL", "double", "float")


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
    if kind.endswith("[]") or kind.lower().startswith("array<"):  # DuckDB's list, or Spark's
        return f"CASE WHEN len({c}) > 0 THEN CAST({c} AS VARCHAR[]) ELSE [NULL] END", True
    if separator:
        sep = "(?:" + re.escape(separator) + ")"
        ws = f"[{doisql.WS}]*"
        ends = lit(f"^(?:{ws}{sep})+{ws}|{ws}(?:{sep}{ws})+\\z")
        inner = lit(f"{ws}(?:{sep}{ws})+")
        text = f"regexp_replace({_text(c)}, {ends}, '', 'g')"
        # An empty cell is one reference without a DOI, as it is without a separator.
        split = f"regexp_split_to_array({text}, {inner})"
        return f"coalesce({split}, CAST([NULL] AS VARCHAR[]))", True
    if kind.startswith(_FLOATS):
        return (
            f"CASE WHEN {c} = floor({c}) AND abs({c}) < 1e15"
            f" THEN CAST(CAST({c} AS BIGINT) AS VARCHAR) ELSE {_text(c)} END"
        ), False
    return _text(c), False


def _table(
    view: str,
    cols: Columns,
    parquet: bool,
    kinds: dict[str, str],
    separator: str | None,
    count: bool = False,
) -> str:
    listed = False

    def col(name: str | None) -> str:
        return "CAST(NULL AS VARCHAR)" if name is None else _text(ident(name))

    def ref(name: str | None) -> str:
        if name is None:
            return "CAST(NULL AS VARCHAR)"
        nonlocal listed
        expr, many = values(name, kinds.get(name, "VARCHAR"), separator)
        listed = listed or many
        return f"unnest({expr})" if many else expr

    picked = (
        f"SELECT {col(cols.citing)} AS citing, {ref(cols.doi)} AS cited_raw,"
        f" {ref(cols.pmid)} AS pmid_raw, {col(cols.date)} AS date_raw,"
        f" {FILE} AS file, {'file_row_number + 2' if parquet else 'CAST(NULL AS BIGINT)'}"
        " AS rownum"
    )
    # A record's first row (the others of a list are NULL: DuckDB pads a shorter unnest).
    first = ", unnest([true]) AS rec" if listed else ", true AS rec"
    return f"{picked}{first if count else ''} FROM {view}"


def _oc_id(cell: str, prefix: str) -> str:
    """One identifier of an OpenCitations cell: ``doi:10...`` in a list, or a bare DOI (COCI)."""
    tagged = f"regexp_extract({cell}, {lit(f'(?:^|[ ]){prefix}:([^ ]+)')}, 1)"
    if prefix != "doi":
        return f"nullif({tagged}, '')"
    return (
        f"CASE WHEN regexp_matches({cell}, '(?:^|[ ])doi:') THEN {tagged}"
        f" WHEN regexp_matches({cell}, '^[a-z]+:') THEN NULL ELSE {cell} END"
    )


def _opencitations(view: str, extra: str = "") -> str:
    return (
        f"SELECT nullif(coalesce({_oc_id('citing', 'doi')}, citing), '') AS citing,"
        f" {_oc_id('cited', 'doi')} AS cited_raw, {_oc_id('cited', 'pmid')} AS pmid_raw,"
        f" creation AS date_raw, {FILE} AS file, CAST(NULL AS BIGINT) AS rownum{extra}"
        f" FROM {view}"
    )


def _crossref(view: str, extra: str = "") -> str:
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
        f" {day} AS date_raw, {FILE} AS file, CAST(NULL AS BIGINT) AS rownum{extra}"
        f" FROM (SELECT doi, reference, issued AS r2, {FILE} FROM ({works}) AS w0) AS w1,"
        f" unnest(reference) AS v(r)"
    )


def raw_union(
    groups: list[InputGroup],
    columns: list[Columns | None],
    kinds: list[dict[str, str]],
    separator: str | None,
    count: bool,
) -> str:
    """One SELECT of (citing, cited_raw, pmid_raw, date_raw, file) over every input view; a
    generic table's ``columns`` and their ``kinds`` (types) are those the screen resolved. With
    ``count``, ``rec`` too: true on each table record's first row (see :func:`grouped`)."""
    parts = []
    for i, (grp, cols) in enumerate(zip(groups, columns, strict=True)):
        view = f"in{i}"
        if grp.shape == "opencitations":
            parts.append(_opencitations(view, ", true AS rec" if count else ""))
        elif grp.shape == "crossref":
            parts.append(_crossref(view, ", CAST(NULL AS BOOLEAN) AS rec" if count else ""))
        else:
            assert cols is not None
            parts.append(_table(view, cols, grp.container == "parquet", kinds[i], separator, count))
    return " UNION ALL ".join(f"({p})" for p in parts)


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
_SLOW = "(SELECT d AS raw FROM keys WHERE gd = 0 AND d IS NOT NULL) AS k"
DOI_STAGES = doisql.stages(_SLOW, ["raw"], "raw", "doi_norm")
"""Views normalising the distinct slow DOIs of ``keys``, the last one ``doi_norm``."""


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
    f"SELECT p AS raw, {verdict_sql.pmid_key('p')} AS pmid, NOT {doisql.blank('p')} AS has_raw"
    " FROM keys WHERE gp = 0 AND p IS NOT NULL"
)
DATE_MAP = (
    f"SELECT t AS raw, {_date('t')} AS day"
    " FROM (SELECT DISTINCT date_raw AS t FROM refs_raw) AS k WHERE t IS NOT NULL"
)
"""Each citing-date spelling as a day: a corpus has few (one per citing work at most)."""
DATE_SETS = (
    "SELECT GROUPING(date_raw) AS by_file, date_raw AS t, file,"
    " count(*) FILTER (WHERE rec) AS records FROM refs_raw"
    " GROUP BY GROUPING SETS ((date_raw), (file))"
)
"""The dates' pass when it also counts each file's records (``rec``): a few groups either way,
so counting costs it next to nothing (counted in :func:`grouped`, it would cost the main pass a
second grouping set)."""
COUNTING = ("date_sets", "grouped_sets")
"""The statement whose pass counts each file's records: the dates' when there are dates."""


def grouped(default: str, date: bool = True, pmid: bool = True, count: bool = False) -> str:
    """The one pass over every row: per citing work, its references and earliest date, and the
    *rare* rows carried along as a list: all but a plain reference (a citing work, a DOI on the
    fast path that no verdict lists, no PubMed id or one on its fast path that no verdict lists),
    whose verdict is the unlisted status without a look at anything else; so is a row of a
    PubMed id alone, on its fast path and unlisted, when an unlisted work is not ``unverified``
    (with that status such a row is ``no_doi``, as in check). A corpus is mostly plain rows;
    they cost a test, a look-up and a count.

    With ``count`` (used only without a dates' pass, which counts at less cost,
    :data:`DATE_SETS`), the same pass also counts each file's records (``rec``), in a second
    grouping set by file (``by_file``), so a CSV file is read once."""
    key = doisql.fast_key("r.cited_raw")
    day = "d.day" if date else "CAST(NULL AS DATE)"
    join = " LEFT JOIN date_map AS d ON d.raw = r.date_raw" if date else ""
    plain = "r.pmid_raw IS NULL AND r.key IS NOT NULL AND v.id IS NULL"
    if pmid:
        unlisted = f"{verdict_sql.pmid_fast('r.pmid_raw')} AND p.id IS NULL"
        plain = f"(r.pmid_raw IS NULL OR ({unlisted})) AND r.key IS NOT NULL AND v.id IS NULL"
        if default != "unverified":
            plain = f"({plain}) OR (r.cited_raw IS NULL AND {unlisted})"
        join += " LEFT JOIN vpmid AS p ON p.id = r.pmid_raw"
    if default == "clean":  # an unlisted preprint is not clean (see verdict_sql): a rare row
        plain = f"({plain}) AND NOT coalesce({verdict_sql.preprint('r.key')}, false)"
    rows = (
        "SELECT r.citing AS citing, r.cited_raw AS cited_raw, r.pmid_raw AS pmid_raw,"
        f" r.date_raw AS date_raw, r.file AS file, r.rownum AS rownum, {day} AS day,"
        f"{' r.rec AS rec,' if count else ''}"
        f" coalesce(r.citing IS NOT NULL AND ({plain}), false) AS plain"
        f" FROM (SELECT *, {key} AS key FROM refs_raw AS r) AS r"
        f" LEFT JOIN vdoi AS v ON v.id = r.key{join}"
    )
    rare = (
        "struct_pack(cited_raw := cited_raw, pmid_raw := pmid_raw, date_raw := date_raw,"
        " file := file, rownum := rownum)"
    )
    by_file = "GROUPING(citing) AS by_file, citing, file," if count else "citing,"
    records = ", count(*) FILTER (WHERE rec) AS records" if count else ""
    return (
        f"SELECT {by_file} count(*) AS n, min(day) AS day,"
        f" list({rare}) FILTER (WHERE NOT plain) AS rare{records} FROM ({rows}) AS x"
        f" GROUP BY {'GROUPING SETS ((citing), (file))' if count else 'citing'}"
    )


RARE_ROWS = (
    "SELECT citing, x.cited_raw AS cited_raw, x.pmid_raw AS pmid_raw, x.date_raw AS date_raw,"
    " x.file AS file, x.rownum AS rownum"
    " FROM (SELECT citing, rare FROM grouped WHERE rare IS NOT NULL) AS g, unnest(rare) AS u(x)"
)
"""The rare rows, unpacked: shaped as ``refs_raw`` is, so :func:`screened` reads either."""


def plan(
    default: str, pmid: bool = True, date: bool = True, count: bool = False
) -> list[tuple[str, str, str]]:
    """The screen in order, as (how, name, statement): ``table`` is materialised, ``step`` is a
    link of the DOI chain (an engine nests or materialises it, see :func:`doisql.stages`),
    ``view`` a view. One pass over the corpus (``grouped``), the citing dates read once more on
    their own (``date_map``, a column of few values); the rules then run on the rare rows alone
    (``rare``), and ``per_citing`` joins their counts to every citing work. With ``count``
    (``refs_raw`` has ``rec``), a pass also counts each file's records (``file_records``)."""
    return [
        *_dates_and_grouped(default, date, pmid, count),
        ("table", "rare_rows", RARE_ROWS),
        ("table", "keys", KEYS),
        *[("step", name, statement) for name, statement in DOI_STAGES],
        ("table", "doi_map", DOI_MAP),
        ("table", "pmid_map", PMID_MAP),
        ("table", "rare", verdict_sql.rare(default, pmid, date)),
        ("table", "per_citing", verdict_sql.per_citing(default)),
        ("table", "flagged_out", verdict_sql.FLAGGED_OUT),
    ]


def _dates_and_grouped(
    default: str, date: bool, pmid: bool, count: bool
) -> list[tuple[str, str, str]]:
    """The dates' pass and the main pass; with ``count``, one of them counts each file's
    records (``file_records``): the dates' pass where there is one, else the main pass."""
    main = ("table", "grouped", grouped(default, date, pmid))
    if not date and count:
        return [
            ("table", "grouped_sets", grouped(default, date, pmid, count=True)),
            ("view", "grouped", "SELECT citing, n, day, rare FROM grouped_sets WHERE by_file = 0"),
            ("view", "file_records", "SELECT file, records FROM grouped_sets WHERE by_file = 1"),
        ]
    if not date:
        return [main]
    if not count:
        return [("table", "date_map", DATE_MAP), main]
    dates = (
        f"SELECT t AS raw, {_date('t')} AS day FROM date_sets WHERE by_file = 0 AND t IS NOT NULL"
    )
    return [
        ("table", "date_sets", DATE_SETS),
        ("table", "date_map", dates),
        ("view", "file_records", "SELECT file, records FROM date_sets WHERE by_file = 1"),
        main,
    ]


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
