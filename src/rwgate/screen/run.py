"""One screen, start to end: verdict table, inputs, the engine's pass, the outputs.

Outputs land in ``--out DIR`` (created; files replaced atomically where the engine writes one
file): ``flagged.parquet`` (each flagged citation), ``citing.parquet`` (per citing work),
``summary.json`` (``rwgate.screen/2``), ``summary.html``, and with ``all_citations`` the verdict
of every reference (``citations.parquet``).
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

from rwgate.screen import sql
from rwgate.screen.columns import SAMPLE, Columns, check_values, resolve
from rwgate.screen.engine import open_engine
from rwgate.screen.inputs import InputGroup, expand, group, split_by_columns
from rwgate.screen.summary import build as build_summary
from rwgate.screen.verdicts import build, write_jsonl


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
    progress: bool | None = None
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


def _columns(
    engine: Any, groups: list[InputGroup], read: list[list[str]], given: dict[str, str | None]
) -> list[Columns | None]:
    """Each generic table's columns (:func:`resolve`), its DOI column's first values looked at:
    a table the screen cannot read as references is an error before any row is screened."""
    out: list[Columns | None] = []
    for i, (grp, names) in enumerate(zip(groups, read, strict=True)):
        if grp.shape != "table":
            out.append(None)
            continue
        names = [n for n in (grp.columns or names) if n not in (sql.FILE, "file_row_number")]
        cols = resolve(grp, names, given)
        if cols.doi is not None:
            col = sql.ident(cols.doi)
            values = engine.fetch(
                f"SELECT CAST({col} AS VARCHAR) FROM in{i} WHERE {col} IS NOT NULL LIMIT {SAMPLE}"
            )
            check_values(grp, names, cols.doi, [v for (v,) in values])
        out.append(cols)
    return out


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
    from rwgate.screen.report import write_html, write_json

    files = expand(opts.inputs)
    groups = group(files, opts.input_format)
    table = build(opts.snapshot)
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
        with tempfile.TemporaryDirectory(prefix="rwgate-screen-") as tmp:
            verdict_file = Path(tmp) / "verdicts.jsonl"
            write_jsonl(table, verdict_file)
            groups = split_by_columns(groups, engine.parquet_columns)
            found = _columns(engine, groups, engine.load(groups, verdict_file), opts.columns)
            raw = sql.raw_union(groups, found)
            engine.view("refs_raw", raw)
            pmid = any(c is None or c.pmid is not None for c in found)
            date = any(c is None or c.date is not None for c in found)
            for how, name, statement in sql.plan(table.default_status, pmid, date):
                with _timed(opts.timings, name if how == "table" else "doi_norm"):
                    (engine.step if how == "step" else engine.table)(name, statement)
            outputs = {
                "flagged": opts.out / "flagged.parquet",
                "citing": opts.out / "citing.parquet",
            }
            with _timed(opts.timings, "write flagged.parquet"):
                _write(engine, "SELECT * FROM flagged_out", outputs["flagged"])
            with _timed(opts.timings, "write citing.parquet"):
                _write(engine, sql.CITING_OUT, outputs["citing"])
            if opts.all_citations:
                outputs["citations"] = opts.out / "citations.parquet"
                every = sql.screened(table.default_status, pmid, date)
                _write(engine, sql.ALL_OUT.format(screened=every), outputs["citations"])
            with _timed(opts.timings, "summary"):
                summary = build_summary(engine, table, files, groups, found)
    finally:
        engine.close()
    outputs["summary"] = opts.out / "summary.json"
    outputs["html"] = opts.out / "summary.html"
    summary["outputs"] = {k: str(v) for k, v in outputs.items()}
    write_json(summary, outputs["summary"])
    write_html(summary, outputs["html"])
    return ScreenResult(summary, outputs)
