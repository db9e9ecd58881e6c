"""Every record of a CSV input accounted for: screened, or unusable with its line quoted (JSON
lines inputs: :mod:`rwgate.frontends.screen.jsonlines`).

A CSV is read strictly, in its sniffed dialect, with DuckDB's ``store_rejects``: a record DuckDB
cannot parse is an *unusable record*, counted, with its line and text. An unterminated quote
swallows the rest of its file into one rejected record: its first line is the unusable record,
and the lines after it are read again under the file's header, so one stray quote costs one row.

On DuckDB the screen's own pass counts each CSV file's records and keeps the rejected ones
(:func:`from_pass`), so the file is read once. On Spark (its reader keeps no rejects), and after
an unterminated quote, :func:`account` reads each CSV strictly before the screen and checks the
records read against the file's non-blank lines counted from its bytes (a file whose lines do
not add up is an error naming it).
"""

from __future__ import annotations

import codecs
import gzip
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rwgate.frontends.screen import jsonlines
from rwgate.frontends.screen.doisql import ident, lit_list
from rwgate.frontends.screen.inputs import Dialect, InputError, InputGroup

_BLANK_AFTER = re.compile(rb"\n(?=\r?\n)")
_SHOWN = 120
"""Characters of an unusable record quoted in the summary."""
UNPARSEABLE = "record DuckDB cannot parse"
REJECTS, SCANS = "rwgate_rj", "rwgate_rs"
"""The names (with the view's number) of the tables DuckDB keeps a CSV view's rejects in."""


@dataclass
class FileCount:
    """One input file's records: read (screened or not), screened, unusable."""

    file: str
    records: int = 0
    screened: int = 0
    unusable: int = 0
    lines: int | None = None
    """A JSON lines file's non-blank lines, as counted from its bytes; None for a CSV (its
    lines, where :func:`account` counts them, are checked and not reported) or Parquet."""


@dataclass
class Accounting:
    counts: dict[str, FileCount] = field(default_factory=dict)
    unusable: list[dict[str, Any]] = field(default_factory=list)
    """Unusable records: file, line, text (cut), DuckDB's reason."""
    recovered: list[InputGroup] = field(default_factory=list)
    """The rests of files after an unterminated quote, read as inputs of their own."""


def nonblank_lines(path: Path, encoding: str, compression: str) -> int:
    """The non-blank lines of ``path`` (``\\n`` ends a line; one without it still counts; a line
    of nothing, or of a lone ``\\r``, is blank), counted from its bytes, not by a CSV parser."""
    gz = compression == "gzip" or (compression == "auto" and path.name.endswith(".gz"))
    opener: Any = gzip.open if gz else open
    decoder = codecs.getincrementaldecoder("utf-16")() if encoding == "utf-16" else None
    newlines = blanks = 0
    carry, last = b"", b""
    with opener(path, "rb") as handle:
        while chunk := handle.read(1 << 22):
            if decoder is not None:
                chunk = decoder.decode(chunk).encode("utf-8")
            newlines += chunk.count(b"\n")
            buf = carry + chunk
            cut = max(len(buf) - 2, 0)
            blanks += sum(1 for m in _BLANK_AFTER.finditer(buf) if m.start() < cut)
            carry, last = buf[cut:], buf[-1:] or last
    blanks += sum(1 for _ in _BLANK_AFTER.finditer(carry))
    lines = newlines + (1 if last and last != b"\n" else 0)
    return lines - blanks


def _continued(column: str) -> str:
    """The non-blank lines a value continues onto (a quoted cell holding newlines): one per run
    of newlines in it (the empty lines inside a run are blank lines of the file)."""
    c = ident(column)
    runs = f"regexp_replace(replace({c}, chr(13), ''), '\\n+', chr(10), 'g')"
    return (
        f"CASE WHEN contains({c}, chr(10)) THEN length({runs})"
        f" - length(replace({runs}, chr(10), '')) ELSE 0 END"
    )


def _segments(text: str) -> list[str]:
    return text.replace("\r", "").split("\n")


def _first_line(text: str) -> tuple[int, str]:
    """The number of blank lines before a rejected record's text, and its first line."""
    parts = _segments(text)
    lead = 0
    while lead < len(parts) - 1 and not parts[lead]:
        lead += 1
    return lead, parts[lead]


def _header(d: Dialect) -> str:
    q = d.quote or '"'
    return d.delimiter.join(q + c.replace(q, q + q) + q for c in d.columns)


def _rejects(table: str, scan: str, where: str = "") -> str:
    """The rejected records of a rejects table: file path, line, error type, the record's text,
    DuckDB's message; one per record (DuckDB keeps a row per error)."""
    return (
        "SELECT s.file_path, min(e.line), first(e.error_type), first(e.csv_line),"
        f" first(e.error_message) FROM {table} AS e JOIN {scan} AS s"
        f" ON s.scan_id = e.scan_id AND s.file_id = e.file_id{where}"
        " GROUP BY s.file_path, e.line_byte_position ORDER BY 1, 2"
    )


class _Reader:
    """One DuckDB connection that reads CSV files strictly and keeps their rejects."""

    def __init__(self, folder: Path, memory_limit: str, threads: int | None) -> None:
        import duckdb

        self.error = duckdb.Error
        self.con = duckdb.connect(config={"memory_limit": memory_limit})
        if threads:
            self.con.execute(f"SET threads = {int(threads)}")
        self.folder = folder
        self.n = 0

    def read(self, paths: list[Path], d: Dialect) -> tuple[dict[str, tuple[int, int]], list[Any]]:
        """Per path: (records read, lines they continue onto); and the rejected records."""
        self.n += 1
        table, scan = f"rj{self.n}", f"rs{self.n}"
        cont = " + ".join(_continued(c) for c in d.columns) or "0"
        try:
            rows = self.con.execute(
                f"SELECT rwgate_path, count(*), coalesce(sum({cont}), 0) FROM read_csv("
                f"{lit_list(paths)}, filename = 'rwgate_path', {d.options()}, store_rejects = true,"
                f" rejects_table = '{table}', rejects_scan = '{scan}') GROUP BY 1"
            ).fetchall()
            rejects = self.con.execute(_rejects(table, scan)).fetchall()
        except self.error as exc:
            first = str(exc).splitlines()[0]
            raise InputError(f"{paths[0]}: unreadable as CSV: {first}") from None
        return {str(p): (int(n), int(c)) for p, n, c in rows}, rejects


def _unusable(acc: Accounting, name: str, reject: Any, offset: int) -> int:
    """Add one rejected record (path, line, kind, text, message) of file ``name``, ``offset``
    lines into it; the line it is quoted at (its first non-blank one)."""
    _, line, kind, text, message = reject
    lead, first = _first_line(text or "")
    at = int(line) + max(lead - 1, 0) + offset
    acc.unusable.append(
        {"file": name, "line": at, "value": first[:_SHOWN], "why": str(message or kind)}
    )
    return at


def _swallows(reject: Any) -> bool:
    """Whether a rejected record is an unterminated quote that took the lines after it."""
    _, _, kind, text, _ = reject
    return bool(kind == "UNQUOTED VALUE" and sum(1 for s in _segments(text or "") if s) > 1)


def _recover(reader: _Reader, text: str, d: Dialect) -> tuple[Path, Dialect]:
    """The rest of a file after an unterminated quote's line, under the file's header."""
    lead, _ = _first_line(text)
    rest = "\n".join(_segments(text)[lead + 1 :])
    path = reader.folder / f"rest-{reader.n}.csv"
    path.write_text(_header(d) + "\n" + rest, encoding="utf-8")
    return path, replace(d, encoding="utf-8", compression="none")


def _account_file(
    acc: Accounting,
    reader: _Reader,
    name: str,
    path: Path,
    d: Dialect,
    got: tuple[int, int],
    rejects: list[Any],
    offset: int,
) -> list[tuple[Path, Dialect, int]]:
    """Count one file's records and check them against its lines; its rests to read again."""
    count = acc.counts.setdefault(name, FileCount(name))
    good, cont = got
    count.records += good + len(rejects)
    count.screened += good
    count.unusable += len(rejects)
    lines = nonblank_lines(path, d.encoding, d.compression)  # checked, not reported: the
    # screen's own pass counts no lines, and a summary does not depend on the way it was read
    rest_lines = 0
    again = []
    for reject in rejects:
        at = _unusable(acc, name, reject, offset)
        text = reject[3] or ""
        rest_lines += sum(1 for s in _segments(text) if s)
        if _swallows(reject):
            rest, dialect = _recover(reader, text, d)
            again.append((rest, dialect, at - 1))
    expected = 1 + good + cont + rest_lines
    if expected != lines:
        raise InputError(
            f"{name}: {lines} non-blank lines, but DuckDB read a header, {good} records"
            f" ({good + cont} lines) and {len(rejects)} unusable record(s)"
            f" ({rest_lines} lines): the file cannot be accounted for, so it is not screened"
        )
    return again


def _account_json(acc: Accounting, reader: _Reader, grp: InputGroup) -> None:
    for path, got in zip(
        grp.files, jsonlines.account_json(reader.con, reader.error, grp), strict=True
    ):
        name = str(path)
        acc.counts[name] = FileCount(
            name, got["records"], got["screened"], len(got["unusable"]), got["lines"]
        )
        acc.unusable += [{"file": name, **bad} for bad in got["unusable"]]


def account(
    groups: list[InputGroup],
    folder: Path,
    memory_limit: str = "3GB",
    threads: int | None = None,
    csv: bool = True,
) -> Accounting:
    """Read every JSON lines group and (``csv``) every CSV group once, strictly: counts per
    file, unusable records quoted, the rests after unterminated quotes added as groups of their
    own (numbered as their file). Without ``csv`` the screen's pass counts the CSV files
    (:func:`from_pass`)."""
    acc = Accounting()
    reader = _Reader(folder, memory_limit, threads)
    number = 0
    try:
        for grp in groups:
            if jsonlines.lines_json(grp):
                _account_json(acc, reader, grp)
            if grp.container != "csv" or grp.dialect is None or not csv:
                number += len(grp.files)
                continue
            got, rejects = reader.read(grp.paths(), grp.dialect)
            for path, read in zip(grp.files, grp.paths(), strict=True):
                mine = [r for r in rejects if r[0] == str(read)]
                todo = [(read, grp.dialect, 0, got.get(str(read), (0, 0)), mine)]
                while todo:
                    p, d, offset, counted, rj = todo.pop(0)
                    more = _account_file(acc, reader, str(path), p, d, counted, rj, offset)
                    for rest, dialect, at in more:
                        got_rest, rejects_rest = reader.read([rest], dialect)
                        todo.append(
                            (rest, dialect, at, got_rest.get(str(rest), (0, 0)), rejects_rest)
                        )
                        acc.recovered.append(
                            InputGroup(grp.shape, "csv", [rest], list(grp.columns), dialect,
                                       numbers=[number])
                        )  # fmt: skip
                number += 1
    finally:
        reader.con.close()
    return acc


def from_pass(
    acc: Accounting, groups: list[InputGroup], records: dict[int, int], rejects: list[Any]
) -> bool:
    """Add the CSV files' counts of the screen's one pass to ``acc``: ``records`` (file number:
    the records it parsed, as :func:`rwgate.frontends.screen.sql.grouped` counted them),
    ``rejects`` (:func:`pass_rejects`). False, and nothing added, when an unterminated quote
    swallowed the rest of a file: the caller reads the CSV files again with :func:`account`,
    which recovers the rest."""
    if any(_swallows(r) for r in rejects):
        return False
    number = 0
    for grp in groups:
        if grp.numbers is not None:
            continue
        for path, read in zip(grp.files, grp.paths(), strict=True):
            if grp.container == "csv":
                mine = [r for r in rejects if r[0] == str(read)]
                good = records.get(number, 0)
                acc.counts[str(path)] = FileCount(str(path), good + len(mine), good, len(mine))
                for reject in mine:
                    _unusable(acc, str(path), reject, 0)
            number += 1
    return True


def _tables(con: Any) -> set[str]:
    return {row[0] for row in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}


def scans(con: Any, groups: list[InputGroup]) -> dict[int, int]:
    """Per CSV group (by its view's number), the last scan its rejects tables hold: DuckDB keeps
    the rejects of every scan of a view (a sample's, say), each under its own ``scan_id``, so a
    pass's are those of the scans after this mark. ``con``: the engine's DuckDB connection."""
    kept = _tables(con)
    marks = {}
    for i, grp in enumerate(groups):
        if grp.container == "csv":
            got = None
            if f"{SCANS}{i}" in kept:  # DuckDB makes the tables at a view's first scan
                got = con.execute(f"SELECT max(scan_id) FROM {SCANS}{i}").fetchone()
            marks[i] = int(got[0]) if got and got[0] is not None else -1
    return marks


def pass_rejects(con: Any, marks: dict[int, int]) -> list[Any]:
    """The records DuckDB could not parse in the scans after ``marks`` (:func:`scans`)."""
    out: list[Any] = []
    kept = _tables(con)
    for i, mark in marks.items():
        if f"{REJECTS}{i}" not in kept:  # none made: no scan rejected anything
            continue
        where = f" WHERE e.scan_id > {int(mark)}"
        out += con.execute(_rejects(f"{REJECTS}{i}", f"{SCANS}{i}", where)).fetchall()
    return out
