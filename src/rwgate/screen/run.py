"""One screen, start to end: verdict table, inputs, the engine's pass, the outputs.

Outputs land in ``--out DIR`` (created; files replaced atomically where the engine writes one
file): ``flagged.parquet`` (each flagged citation), ``citing.parquet`` (per citing work),
``summary.json`` (``rwgate.screen/1``), ``summary.html``, and with ``all_citations`` the verdict
of every reference (``citations.parquet``).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rwgate.screen import sql
from rwgate.screen.engine import open_engine
from rwgate.screen.inputs import Mapping, expand, group
from rwgate.screen.verdicts import VerdictTable, build, write_jsonl
from rwgate.vocab import FLAGGED_STATUSES, STATUSES


@dataclass
class ScreenOptions:
    """What the invoking user chose (never a document: a screen reads no document)."""

    inputs: list[str]
    out: Path
    snapshot: Path
    input_format: str = "auto"
    mapping: Mapping = field(default_factory=Mapping)
    engine: str = "duckdb"
    master: str | None = None
    memory_limit: str = "3GB"
    threads: int | None = None
    temp_dir: Path | None = None
    all_citations: bool = False
    progress: bool | None = None


@dataclass
class ScreenResult:
    summary: dict[str, Any]
    outputs: dict[str, Path]


def _summary(
    engine: Any, table: VerdictTable, opts: ScreenOptions, files: list[Path]
) -> dict[str, Any]:
    totals = engine.fetch(sql.TOTALS)[0]
    by_status = {s: int(totals[6 + i] or 0) for i, s in enumerate(STATUSES)}
    flagged_by = {s: n for s, n in by_status.items() if s in FLAGGED_STATUSES and n}
    return {
        "schema": "rwgate.screen/1",
        "generated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "tool": {"name": "rwgate", "engine": engine.name, "engine_version": engine.version},
        "sources": [
            {
                "name": "snapshot",
                "path": str(table.snapshot),
                "as_of": table.as_of.isoformat() if table.as_of else None,
                "full_export": table.full_export,
                "works": len(table.rows),
                "unlisted_work_is": table.default_status,
            }
        ],
        "inputs": [str(f) for f in files],
        "summary": {
            "references": int(totals[1] or 0),
            "citing_works": int(totals[0] or 0),
            "citing_works_flagged": int(totals[5] or 0),
            "flagged": int(totals[2] or 0),
            "cited_after_notice": int(totals[3] or 0),
            "unverified": by_status["unverified"],
            "by_status": {s: n for s, n in by_status.items() if n},
            "flagged_by_status": flagged_by,
        },
        "bad_rows": {
            "count": int(totals[4] or 0),
            "sample": [r[0] for r in engine.fetch(sql.BAD_SAMPLE)],
        },
        "flagged_share": [[int(b), int(n)] for b, n in engine.fetch(sql.SHARES)],
        "flagged_by_citing_year": [[int(y), int(n)] for y, n in engine.fetch(sql.BY_YEAR)],
        "most_cited": [
            {"work": w, "status": s, "citations": int(n), "cited_after_notice": int(a)}
            for w, s, n, a in engine.fetch(sql.TOP_CITED)
        ],
        "warnings": []
        if table.full_export
        else [
            "the snapshot holds no full Retraction Watch export: works it does not list are"
            " unverified, not clean (run `rwgate data update`)"
        ],
    }


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
            columns = engine.load(groups, verdict_file)
            raw = sql.raw_union(groups, opts.mapping, columns)
            engine.view("refs_raw", raw)
            for how, name, statement in sql.plan(table.default_status):
                (engine.step if how == "step" else engine.table)(name, statement)
            outputs = {
                "flagged": opts.out / "flagged.parquet",
                "citing": opts.out / "citing.parquet",
            }
            _write(engine, "SELECT * FROM flagged_out", outputs["flagged"])
            _write(engine, sql.CITING_OUT, outputs["citing"])
            if opts.all_citations:
                outputs["citations"] = opts.out / "citations.parquet"
                _write(engine, sql.ALL_OUT.format(screened=sql.screened(table.default_status)),
                       outputs["citations"])  # fmt: skip
            summary = _summary(engine, table, opts, files)
    finally:
        engine.close()
    outputs["summary"] = opts.out / "summary.json"
    outputs["html"] = opts.out / "summary.html"
    summary["outputs"] = {k: str(v) for k, v in outputs.items()}
    write_json(summary, outputs["summary"])
    write_html(summary, outputs["html"])
    return ScreenResult(summary, outputs)
