"""Benchmark of `rwgate screen` on DuckDB: 10^6, 10^7 and 10^8 reference rows from Parquet.

Targets (issue 32), on a 2-core, 24 GB machine: 10^8 rows in 60 s or less and 4 GB peak memory
or less, cost linear in rows (10^7 within 12 % of a tenth of 10^8).

Cited DOIs are drawn from the real Retraction Watch DOIs of tests/fixtures/rw (1 % of rows: the
flagged share) and from unlisted DOIs (99 %, about 20 M distinct), in the spellings a corpus has:
bare, upper case behind a resolver URL (1 row in 7), and 1 row in 1,000 written so that the whole
normalisation chain runs (``doi: 10.x/REF.n.``); 30 references per citing work, dates over 26
years. Each size is generated once as Parquet (by DuckDB, outside the timing), then screened in a
child process whose peak RSS (``ru_maxrss``, DuckDB's memory included) is its own. The load
average is printed beside each run: the figures are wall-clock times on a shared machine.

    .venv/bin/python benchmarks/screen_bench.py [--sizes 1e6 1e7 1e8] [--repeat 3] [--folder DIR]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RW = ROOT / "tests" / "fixtures" / "rw" / "rw-extract-2025.csv"


def rw_dois() -> list[str]:
    with RW.open(encoding="utf-8-sig", newline="") as handle:
        dois = {r["OriginalPaperDOI"].strip() for r in csv.DictReader(handle)}
    return sorted(d for d in dois if d.startswith("10."))


def generate(path: Path, rows: int, dois: list[str]) -> None:
    import duckdb

    tmp = path.with_name(path.name + ".part")
    listed = "[" + ", ".join("'" + d.replace("'", "''") + "'" for d in dois) + "]"
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute(
        f"""COPY (SELECT 'citing.' || (i // 30) AS citing,
            CASE WHEN i % 100 = 0 THEN {listed}[1 + (i // 100) % {len(dois)}]
                 WHEN i % 1000 = 3
                   THEN 'doi: 10.' || (1000 + i % 9000) || '/REF.' || (i % 20000000) || '.'
                 WHEN i % 7 = 0
                   THEN 'https://doi.org/10.' || (1000 + i % 9000) || '/REF.' || (i % 20000000)
                 ELSE '10.' || (1000 + i % 9000) || '/ref.' || (i % 20000000) END AS cited_doi,
            CAST(2000 + i % 26 AS VARCHAR) || '-06-15' AS citing_date
          FROM range({rows}) t(i)) TO '{tmp}' (FORMAT parquet, ROW_GROUP_SIZE 1000000)"""
    )
    con.close()
    tmp.rename(path)


def snapshot(folder: Path) -> Path:
    from rwgate.sources.snapshot import import_files

    path = folder / "snapshot.sqlite"
    if not path.exists():
        import_files(path, [RW], allow_shrink=True)
    return path


def child(refs: str, snap: str, out: str, memory: str) -> None:
    """One timed screen (in its own process, so ``ru_maxrss`` is the screen's own)."""
    from rwgate.screen.run import ScreenOptions, screen

    start = time.perf_counter()
    result = screen(
        ScreenOptions([refs], Path(out), Path(snap), memory_limit=memory, progress=False)
    )
    took = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    s = result.summary
    print(json.dumps({"seconds": took, "peak_mb": peak_mb, "flagged": s["summary"]["flagged"],
                      "references": s["summary"]["references"],
                      "duckdb": s["tool"]["engine_version"]}))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e6, 1e7, 1e8])
    parser.add_argument("--folder", type=Path, default=None)
    parser.add_argument("--memory-limit", default="3GB")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size (median printed)")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    folder = args.folder or Path(tempfile.mkdtemp(prefix="rwgate-screen-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    dois = rw_dois()
    snap = snapshot(folder)
    print(f"{'rows':>12} {'seconds':>8} {'rows/s':>12} {'peak MB':>8} {'flagged':>9} {'load':>5}")
    for size in args.sizes:
        rows = int(size)
        refs = folder / f"refs-{rows}.parquet"
        if not refs.exists():
            generate(refs, rows, dois)
        times = []
        for _ in range(args.repeat):
            load = os.getloadavg()[0]
            done = subprocess.run(
                [sys.executable, __file__, "--child", str(refs), str(snap),
                 str(folder / f"out-{rows}"), args.memory_limit],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            got = json.loads(done.stdout.strip().splitlines()[-1])
            assert got["references"] == rows
            times.append(got["seconds"])
            rate = rows / got["seconds"]
            line = f"{rows:>12} {got['seconds']:>8.1f} {rate:>12,.0f} {got['peak_mb']:>8.0f}"
            print(f"{line} {got['flagged']:>9} {load:>5.1f}   (DuckDB {got['duckdb']})", flush=True)
        if args.repeat > 1:
            print(f"{rows:>12} {statistics.median(times):>8.1f} median of {args.repeat}")


if __name__ == "__main__":
    main()
