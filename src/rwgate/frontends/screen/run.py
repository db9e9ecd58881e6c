"""One screen, start to end: verdict table, inputs, the engine's pass, the outputs.

Outputs land in ``--out DIR``, each replaced atomically: ``flagged.parquet``, ``citing.parquet``,
``summary.json``, ``summary.html``, and with ``all_citations`` ``citations.parquet``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rwgate.frontends.screen import sql, verdict_sql
from rwgate.frontends.screen.columns import SAMPLE, Columns, check_values, resolve
from rwgate.frontends.screen.doisql import ident
from rwgate.frontends.screen.engine import DuckEngine, open_engine
from rwgate.frontends.screen.inputs import (
    CsvOptions,
    InputError,
    InputGroup,
    expand,
    group,
    split_by_columns,
)
from rwgate.frontends.screen.records import Accounting, account, from_pass, pass_rejects, scans
from rwgate.frontends.screen.summary import build as build_summary
from rwgate.frontends.screen.verdict_cache import verdicts


@dataclass
class ScreenOptions:
    """What the invoking user chose (never a document: a screen reads no document)."""

    inputs: list[str]
    out: Path
    snapshot: Path
    input_format: str = "auto"
    columns: dict[str, str | None] = field(default_factory=dict)
    """role -> column the user named (``''``: none); a role not here is found by name."""
    engine: str = "duckdb"
    master: str | None = None
    memory_limit: str = "3GB"
    threads: int | None = None
    temp_dir: Path | None = None
    all_citations: bool = False
    encoding: str | None = None
    delimiter: str | None = None
    quote: str | None = None
    list_separator: str | None = None
    """A cell of many identifiers split at this string, one reference per element."""
    progress: bool | None = None
    cache: Path | None = None
    """The invoking user's cache folder, where the verdict table of each snapshot is kept
    (:mod:`rwgate.frontends.screen.verdict_cache`); None: built for this screen alone."""
    timings: dict[str, float] | None = None
    """When a dict: filled with the seconds each part of the screen took (the benchmark's
    breakdown); nothing is timed otherwise."""


@contextmanager
def _timed(timings: dict[str, float] | None, name: str) -> Iterator[None]:
    start = time.perf_counter()
    yield
    if timings is not None:
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - start


@dataclass
class ScreenResult:
    summary: dict[str, Any]
    outputs: dict[str, Path]


def _kinds(engine: Any, view: str, names: list[str]) -> dict[str, str]:
    """Each column's type, as the engine's ``typeof`` names it (a table without rows: text)."""
    if not names:
        return {}
    got = engine.fetch(
        "SELECT " + ", ".join(f"typeof({ident(n)})" for n in names) + f" FROM {view} LIMIT 1"
    )
    return dict(zip(names, got[0], strict=True)) if got else {}


def _columns(
    engine: Any,
    groups: list[InputGroup],
    read: list[list[str]],
    given: dict[str, str | None],
    separator: str | None = None,
) -> tuple[list[Columns | None], list[dict[str, str]]]:
    """Each generic table's columns (:func:`resolve`) and their types, its DOI column's first
    values (a list's elements) looked at: a table the screen cannot read as references is an
    error before any row is screened."""
    out: list[Columns | None] = []
    kinds: list[dict[str, str]] = []
    for i, (grp, names) in enumerate(zip(groups, read, strict=True)):
        if grp.shape != "table":
            out.append(None)
            kinds.append({})
            continue
        names = [n for n in (grp.columns or names) if n not in (sql.FILE, "file_row_number")]
        cols = resolve(grp, names, given)
        roles = [n for n in (cols.doi, cols.pmid) if n is not None]
        kinds.append(_kinds(engine, f"in{i}", roles))
        if cols.doi is not None:
            expr, listed = sql.values(cols.doi, kinds[-1].get(cols.doi, "VARCHAR"), separator)
            value = f"unnest({expr})" if listed else expr
            rows = engine.fetch(
                f"SELECT v FROM (SELECT {value} AS v FROM in{i}) AS x WHERE v IS NOT NULL"
                f" LIMIT {SAMPLE}"
            )
            check_values(grp, names, cols.doi, [v for (v,) in rows])
        out.append(cols)
    return out, kinds


def _write(engine: Any, statement: str, path: Path) -> None:
    """Write through a temporary name and rename, so a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    engine.write_parquet(statement, tmp)
    if path.is_dir() and not path.is_symlink():  # Spark's earlier output: a folder of parts
        shutil.rmtree(path)
    elif tmp.is_dir() and (path.exists() or path.is_symlink()):  # Spark's, over DuckDB's file
        path.unlink()
    os.replace(tmp, path)


def screen(opts: ScreenOptions) -> ScreenResult:
    """Run the screen; raises InputError/SnapshotError (exit 2) on unreadable inputs."""
    files = expand(opts.inputs)
    spill = opts.temp_dir if opts.temp_dir and opts.temp_dir.is_dir() else None
    with tempfile.TemporaryDirectory(prefix="rwgate-screen-", dir=spill) as tmp:
        csv = CsvOptions(opts.encoding, opts.delimiter, opts.quote, Path(tmp))
        groups = group(files, opts.input_format, csv)
        unnamed = [g.files[0] for g in groups if g.compression == "gzip"]
        if opts.engine == "spark" and unnamed:  # Spark would read its bytes as text
            raise InputError(
                f"{unnamed[0]}: gzipped, but Spark reads gzip only in a file named *.gz"
            )
        # DuckDB counts a CSV's records in the screen's own pass (the file read once); Spark's
        # reader keeps no rejects, so its CSV files are accounted for by DuckDB beforehand.
        one_pass = opts.engine == "duckdb"
        with _timed(opts.timings, "records"):
            records = account(groups, Path(tmp), opts.memory_limit, opts.threads, not one_pass)
        done = _screen(opts, files, groups, records, Path(tmp), one_pass)
        if done is None:  # an unterminated quote: its file's rest is read again, as a group
            with _timed(opts.timings, "records"):
                records = account(groups, Path(tmp), opts.memory_limit, opts.threads)
            done = _screen(opts, files, groups + records.recovered, records, Path(tmp), False)
        assert done is not None
        return done


def _counted(engine: Any, groups: list[InputGroup], records: Accounting, marks: Any) -> bool:
    """The CSV files' records, as the one pass counted and rejected them, added to ``records``
    (:func:`rwgate.frontends.screen.records.from_pass`); False when a file needs its rest read
    again."""
    counts = {int(f): int(n) for f, n in engine.fetch("SELECT file, records FROM file_records")}
    return from_pass(records, groups, counts, pass_rejects(engine.con, marks))


def _screen(
    opts: ScreenOptions,
    files: list[Path],
    groups: list[InputGroup],
    records: Accounting,
    tmp: Path,
    one_pass: bool = False,
) -> ScreenResult | None:
    """The screen proper; None when its one pass found an unterminated quote in a CSV file
    (nothing written: the caller accounts for the CSV files first and screens again)."""
    from rwgate.frontends.screen.report import write_html, write_json

    with _timed(opts.timings, "start"):  # snapshot to verdict table, engine start and load
        table = verdicts(opts.snapshot, opts.cache, tmp)
        opts.out.mkdir(parents=True, exist_ok=True)
        engine = open_engine(
            opts.engine,
            memory_limit=opts.memory_limit,
            threads=opts.threads,
            temp_dir=opts.temp_dir,
            master=opts.master,
            progress=opts.progress,
        )
    try:
        with _timed(opts.timings, "start"):
            groups = split_by_columns(groups, engine.parquet_columns)
            loaded = engine.load(groups, table.file)
        found, kinds = _columns(engine, groups, loaded, opts.columns, opts.list_separator)
        count = one_pass and any(g.container == "csv" for g in groups)
        raw = sql.raw_union(groups, found, kinds, opts.list_separator, count)
        engine.view("refs_raw", raw)
        pmid = any(c is None or c.pmid is not None for c in found)
        date = any(c is None or c.date is not None for c in found)
        marks: dict[int, int] = {}
        for how, name, statement in sql.plan(table.default_status, pmid, date, count):
            if name in sql.COUNTING and isinstance(engine, DuckEngine):
                marks = scans(engine.con, groups)  # the pass's rejects: later scans'
            with _timed(opts.timings, "doi_norm" if how == "step" else name):
                {"step": engine.step, "view": engine.view, "table": engine.table}[how](
                    name, statement
                )
            if name == "file_records":
                with _timed(opts.timings, "records"):
                    if not _counted(engine, groups, records, marks):
                        return None
        outputs = {"flagged": opts.out / "flagged.parquet", "citing": opts.out / "citing.parquet"}
        with _timed(opts.timings, "write flagged.parquet"):
            _write(engine, "SELECT * FROM flagged_out", outputs["flagged"])
        with _timed(opts.timings, "write citing.parquet"):
            _write(engine, verdict_sql.CITING_OUT, outputs["citing"])
        if opts.all_citations:
            outputs["citations"] = opts.out / "citations.parquet"
            every = verdict_sql.screened(table.default_status, pmid, date)
            _write(engine, verdict_sql.ALL_OUT.format(screened=every), outputs["citations"])
        with _timed(opts.timings, "summary"):
            summary = build_summary(engine, table, files, groups, found, records)
    finally:
        engine.close()
    outputs["summary"] = opts.out / "summary.json"
    outputs["html"] = opts.out / "summary.html"
    summary["outputs"] = {k: str(v) for k, v in outputs.items()}
    write_json(summary, outputs["summary"])
    write_html(summary, outputs["html"])
    return ScreenResult(summary, outputs)
