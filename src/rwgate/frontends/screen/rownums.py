"""Row numbers of the unusable rows a summary quotes, as a spreadsheet shows them (the header
is row 1, the first record row 2).

A Parquet file tells each row's number as it is read (``file_row_number``); a CSV reader does not,
and numbering every row of a corpus in the screen's pass would cost a sort. The few rows a summary
quotes (five per reason at most) are found afterwards instead: one ordered read of each CSV file
they come from, in DuckDB, in the file's dialect, numbering the records it parses; each record
DuckDB could not parse before it (:mod:`rwgate.frontends.screen.records`) is a row too. Files
larger than
:data:`LIMIT` are left unnumbered: the file and the quoted value still say where to look.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rwgate.frontends.screen.columns import Columns
from rwgate.frontends.screen.doisql import lit
from rwgate.frontends.screen.inputs import InputGroup
from rwgate.frontends.screen.records import Accounting

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


def _row(record: int, rejected: list[int]) -> int:
    """The spreadsheet row of the ``record``-th parsed record (from 1), the records DuckDB could
    not parse (``rejected``: their lines, in order) taking rows before it where they stand."""
    row = record + 1
    for line in rejected:
        if line <= row:
            row += 1
    return row


def number(
    reasons: list[dict[str, Any]],
    groups: list[InputGroup],
    found: list[Columns | None],
    records: Accounting | None = None,
) -> None:
    """Fill in ``row`` of each quoted sample from a CSV table, where the file is small enough."""
    import duckdb

    by_file: dict[str, tuple[InputGroup, Columns]] = {}
    for grp, cols in zip(groups, found, strict=True):
        if cols is not None and grp.container == "csv" and grp.numbers is None:
            by_file.update({str(f): (grp, cols) for f in grp.files})
    rejected: dict[str, list[int]] = {}
    for bad in records.unusable if records else []:
        rejected.setdefault(bad["file"], []).append(int(bad["line"]))
    con = duckdb.connect()
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
    finally:
        con.close()
