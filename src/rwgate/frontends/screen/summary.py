"""The screen's summary (``rwgate.screen/2``), in ``rwgate check``'s words.

"Flagged" means what check's default policy acts on; corrections, amendments and reinstatements
are counted apart, and every status is counted as check counts it, so the two agree status by
status on the same references. The summary also says which column of each table was read for
what, and why a row could not be screened (a count per reason, samples with file and row).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from rwgate.contract.vocab import FLAGGED_STATUSES, SERIOUS_STATUSES, STATUSES
from rwgate.frontends.screen import verdict_sql
from rwgate.frontends.screen.columns import ROLES, Columns
from rwgate.frontends.screen.doisql import ident, lit, lit_list
from rwgate.frontends.screen.inputs import InputGroup
from rwgate.frontends.screen.records import UNPARSEABLE, Accounting, FileCount
from rwgate.frontends.screen.verdicts import Verdicts

SCHEMA = "rwgate.screen/2"
CORRECTIONS = tuple(s for s in FLAGGED_STATUSES if s not in SERIOUS_STATUSES)
"""Statuses of a work with a notice that changes nothing of its standing, counted apart."""
# What a published format's fields are read as (a generic table's are found by name).
_FORMAT_COLUMNS = {
    "opencitations": {"citing": "citing", "doi": "cited (doi:)", "pmid": "cited (pmid:)",
                      "date": "creation"},
    "crossref": {"citing": "DOI", "doi": "reference[].DOI", "pmid": None,
                 "date": "issued"},
}  # fmt: skip


def columns_used(groups: list[InputGroup], found: list[Columns | None]) -> list[dict[str, Any]]:
    """Per input group: its files, its shape and the column read for each role, and how."""
    out = []
    for grp, cols in zip(groups, found, strict=True):
        if grp.numbers is not None:  # the rest of a file after an unterminated quote
            continue
        entry: dict[str, Any] = {"files": [str(f) for f in grp.files], "shape": grp.shape}
        if cols is None:
            entry["columns"] = _FORMAT_COLUMNS[grp.shape]
            entry["found"] = "the format's own fields"
        else:
            entry["columns"] = {role: getattr(cols, role) for role in ROLES}
            entry["found"] = dict(cols.how)
        out.append(entry)
    return out


def _warnings(table: Verdicts, dated: bool) -> list[str]:
    out = []
    if not table.full_export:
        out.append(
            "the snapshot holds no full Retraction Watch export: works it does not list are"
            " unverified, not clean (run `rwgate data update`)"
        )
    elif table.partial_registry:
        out.append(
            f"the snapshot's 'full export' has only {table.export_rows} rows (a real one has"
            " tens of thousands): it was imported with --allow-shrink, so every work it does"
            " not list is called clean; import the full export (`rwgate data update`)"
        )
    if not dated:
        out.append(
            "no citing-date column: whether a work was cited after its notice is not known"
            " (--date-column names one)"
        )
    return out


def _unparseable(records: Accounting) -> list[dict[str, Any]]:
    if not records.unusable:
        return []
    sample = [
        {"value": r["value"], "file": r["file"], "row": None, "line": r["line"], "why": r["why"]}
        for r in records.unusable[:5]
    ]
    return [{"reason": UNPARSEABLE, "count": len(records.unusable), "sample": sample}]


def _parquet_rows(groups: list[InputGroup]) -> dict[str, int]:
    """Each Parquet file's rows, from its footer."""
    import duckdb

    files = [f for g in groups if g.container == "parquet" for f in g.files]
    if not files:
        return {}
    with duckdb.connect() as con:
        try:
            rows = con.execute(
                f"SELECT file_name, sum(num_rows) FROM parquet_file_metadata({lit_list(files)})"
                " GROUP BY 1"
            ).fetchall()
        except duckdb.Error:
            return {}
    return {str(f): int(n) for f, n in rows}


def file_counts(groups: list[InputGroup], records: Accounting) -> list[dict[str, Any]]:
    """Per input file: records read, screened, unusable (a CSV's checked against its lines)."""
    counts = dict(records.counts)
    for name, n in _parquet_rows(groups).items():
        counts[name] = FileCount(name, n, n, 0)
    order = [str(f) for g in groups if g.numbers is None for f in g.files]
    return [counts[f].__dict__ for f in order if f in counts]


def _bad_rows(engine: Any, counts: list[int]) -> dict[str, Any]:
    reasons = []
    for i, reason in enumerate(verdict_sql.BAD_REASONS):
        if not counts[i]:
            continue
        sample = [
            {"value": v, "file": f, "row": int(r) if r is not None else None}
            for v, f, r in engine.fetch(verdict_sql.bad_sample(i))
        ]
        reasons.append({"reason": reason, "count": counts[i], "sample": sample})
    return {"count": sum(counts), "by_reason": reasons}


def _most_cited(engine: Any, table: Verdicts) -> list[dict[str, Any]]:
    top = engine.fetch(verdict_sql.TOP_CITED)
    keys = [f"doi:{row[4]}" if row[4] else f"pmid:{row[5]}" for row in top]
    names = table.names(keys)
    out = []
    for key, (work, status, n, after, doi, pmid, ndoi, ntype, nday, rid) in zip(
        keys, top, strict=True
    ):
        title, journal, year = names.get(key, (None, None, None))
        out.append(
            {
                "work": work,
                "doi": doi,
                "pmid": pmid,
                "status": status,
                "citations": int(n),
                "cited_after_notice": int(after),
                "notice_doi": ndoi,
                "notice_type": ntype,
                "notice_date": nday.isoformat() if nday else None,
                "record_id": rid,
                "title": title,
                "journal": journal,
                "year": year,
            }
        )
    return out


LIMIT = 256 * 1024 * 1024
"""Bytes of CSV read again, per file, to number the quoted rows."""


def _condition(reason: str, value: str, cols: Columns) -> str | None:
    """The SQL test that picks out the quoted row (its value is cut at 120 characters)."""
    column = cols.pmid if reason == "malformed PubMed id" else cols.doi
    if column is None:
        return None
    v = f"coalesce({ident(column)}, '')"
    test = f"starts_with({v}, {lit(value)})" if len(value) >= 120 else f"{v} = {lit(value)}"
    if reason == "no citing work":
        test += f" AND nullif(trim(coalesce({ident(cols.citing or '')}, '')), '') IS NULL"
    return test


def _row(record: int, rejected: list[int]) -> int:
    """The spreadsheet row of the ``record``-th parsed record (from 1), the records DuckDB could
    not parse (``rejected``: their lines, in order) taking rows before it where they stand."""
    row = record + 1
    for line in rejected:
        if line <= row:
            row += 1
    return row


def _number_rows(
    reasons: list[dict[str, Any]],
    groups: list[InputGroup],
    found: list[Columns | None],
    records: Accounting,
) -> None:
    """Fill in ``row`` of each quoted sample from a CSV table, as a spreadsheet shows it (the
    header row 1), where the file is no larger than :data:`LIMIT`. A CSV reader does not number
    rows, and numbering every row in the screen's pass would cost a sort: the few rows a summary
    quotes are found afterwards, in one ordered read of their file in its dialect; each record
    DuckDB could not parse before one is a row too."""
    import duckdb

    by_file: dict[str, tuple[InputGroup, Columns]] = {}
    for grp, cols in zip(groups, found, strict=True):
        if cols is not None and grp.container == "csv" and grp.numbers is None:
            by_file.update({str(f): (grp, cols) for f in grp.files})
    rejected: dict[str, list[int]] = {}
    for bad in records.unusable:
        rejected.setdefault(bad["file"], []).append(int(bad["line"]))
    with duckdb.connect() as con:
        try:
            for reason in reasons:
                for sample in reason["sample"]:
                    where = by_file.get(sample["file"])
                    if sample["row"] is not None or where is None:
                        continue
                    grp, cols = where
                    path = grp.read_as.get(Path(sample["file"]), Path(sample["file"]))
                    test = _condition(reason["reason"], sample["value"], cols)
                    if test is None or not path.is_file() or path.stat().st_size > LIMIT:
                        continue
                    assert grp.dialect is not None
                    found_row = con.execute(
                        "SELECT n FROM (SELECT row_number() OVER () AS n, * FROM read_csv("
                        f"{lit(str(path))}, {grp.dialect.options()}, ignore_errors = true,"
                        f" parallel = false)) WHERE {test} LIMIT 1"
                    ).fetchone()
                    lines = sorted(rejected.get(sample["file"], []))
                    sample["row"] = _row(int(found_row[0]), lines) if found_row else None
        except duckdb.Error:
            pass  # numbering is a help, not the screen: a file it cannot re-read stays unnumbered


def build(
    engine: Any,
    table: Verdicts,
    files: list[Path],
    groups: list[InputGroup],
    found: list[Columns | None],
    records: Accounting,
) -> dict[str, Any]:
    """The summary of the screen ``engine`` holds (``per_citing``, ``flagged_out``)."""
    totals = engine.fetch(verdict_sql.TOTALS)[0]
    by_status = {s: int(totals[5 + i] or 0) for i, s in enumerate(STATUSES)}
    bad = [int(n or 0) for n in totals[5 + len(STATUSES) :]]
    dated = any(c is None or c.date is not None for c in found)
    bad_rows = _bad_rows(engine, bad)
    _number_rows(bad_rows["by_reason"], groups, found, records)
    bad_rows["by_reason"] = _unparseable(records) + bad_rows["by_reason"]
    bad_rows["count"] += len(records.unusable)
    return {
        "schema": SCHEMA,
        "generated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "tool": {"name": "rwgate", "engine": engine.name, "engine_version": engine.version},
        "sources": [
            {
                "name": "snapshot",
                "path": str(table.snapshot),
                "as_of": table.as_of.isoformat() if table.as_of else None,
                "full_export": table.full_export,
                "export_rows": table.export_rows,
                "partial_registry": table.partial_registry,
                "works": table.count,
                "unlisted_work_is": table.default_status,
            }
        ],
        "inputs": [str(f) for f in files],
        "columns": columns_used(groups, found),
        "files": file_counts(groups, records),
        "summary": {
            "references": int(totals[1] or 0),
            "citing_works": int(totals[0] or 0),
            "flagged": int(totals[2] or 0),
            "citing_works_flagged": int(totals[4] or 0),
            "cited_after_notice": int(totals[3] or 0) if dated else None,
            "corrections": sum(by_status[s] for s in CORRECTIONS),
            "unverified": by_status["unverified"],
            "by_status": {s: n for s, n in by_status.items() if n},
            "flagged_by_status": {s: by_status[s] for s in SERIOUS_STATUSES if by_status[s]},
            "corrections_by_status": {s: by_status[s] for s in CORRECTIONS if by_status[s]},
        },
        "bad_rows": bad_rows,
        "flagged_share": [[int(b), int(n)] for b, n in engine.fetch(verdict_sql.SHARES)],
        "flagged_by_citing_year": [[int(y), int(n)] for y, n in engine.fetch(verdict_sql.BY_YEAR)],
        "flagged_works": int(engine.fetch(verdict_sql.FLAGGED_WORKS)[0][0] or 0),
        "most_cited": _most_cited(engine, table),
        "warnings": _warnings(table, dated),
    }
