"""Row numbers of the unusable rows a summary quotes, for the CSV tables the engine read.

A Parquet file tells each row's number as it is read (``file_row_number``); a CSV reader does not,
and numbering every row of a corpus in the screen's pass would cost a sort. The few rows a summary
quotes (five per reason at most) are found afterwards instead: one ordered read of each CSV file
they come from, in DuckDB, numbering its data rows as the file holds them (1 = the first row after
the header). Files larger than :data:`LIMIT` are left unnumbered: the file and the quoted value
still say where to look.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rwgate.screen.columns import Columns
from rwgate.screen.doisql import lit
from rwgate.screen.inputs import InputGroup

LIMIT = 256 * 1024 * 1024
"""Bytes of CSV read again, per file, to number the quoted rows."""


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _condition(reason: str, value: str, cols: Columns) -> str | None:
    """The SQL test that picks out the quoted row (its value is cut at 120 characters)."""
    column = cols.pmid if reason == "malformed PubMed id" else cols.doi
    if column is None:
        return None
    v = f"coalesce({_ident(column)}, '')"
    test = f"starts_with({v}, {lit(value)})" if len(value) >= 120 else f"{v} = {lit(value)}"
    if reason == "no citing work":
        test += f" AND nullif(trim(coalesce({_ident(cols.citing or '')}, '')), '') IS NULL"
    return test


def number(
    reasons: list[dict[str, Any]], groups: list[InputGroup], found: list[Columns | None]
) -> None:
    """Fill in ``row`` of each quoted sample from a CSV table, where the file is small enough."""
    import duckdb

    by_file: dict[str, tuple[InputGroup, Columns]] = {}
    for grp, cols in zip(groups, found, strict=True):
        if cols is not None and grp.container == "csv":
            by_file.update({str(f): (grp, cols) for f in grp.files})
    con = duckdb.connect()
    try:
        for reason in reasons:
            for sample in reason["sample"]:
                where = by_file.get(sample["file"])
                if sample["row"] is not None or where is None:
                    continue
                path = Path(sample["file"])
                test = _condition(reason["reason"], sample["value"], where[1])
                if test is None or not path.is_file() or path.stat().st_size > LIMIT:
                    continue
                found_row = con.execute(
                    "SELECT n FROM (SELECT row_number() OVER () AS n, * FROM read_csv("
                    f"{lit(str(path))}, header = true, all_varchar = true, ignore_errors = true,"
                    f" strict_mode = false, parallel = false)) WHERE {test} LIMIT 1"
                ).fetchone()
                sample["row"] = int(found_row[0]) if found_row else None
    except duckdb.Error:
        pass  # numbering is a help, not the screen: a file it cannot re-read stays unnumbered
    finally:
        con.close()
