"""Benchmark of `rwgate screen` beside DuckDB's own floor: 10^6, 10^7 and 10^8 references.

Targets (issue 37), on a 2-core, 24 GB machine: the screen within 1.5x of the floor on 10^8 rows,
4 GB peak memory or less, cost linear in rows. The *floor* is the least a screen must do in
DuckDB, on the same Parquet file in the same run: one scan of the cited-DOI column, lower-cased
and the resolver prefix stripped, a join against the verdict table, counts per status.

Cited DOIs are drawn from the real Retraction Watch DOIs of tests/fixtures/rw (1 % of rows: the
flagged share) and from unlisted DOIs (99 %, about 20 M distinct), in the spellings a corpus has:
bare, upper case behind a resolver URL (1 row in 7), and 1 row in 1,000 written so that the whole
normalisation chain runs (``(doi: 10.x/REF.n).``); 30 references per citing work, dates over 26
years. Each size is generated once as Parquet (by DuckDB, outside the timing; ``--folder`` keeps
them for the next run), then the floor and the screen run alternately, each in a child process
whose peak RSS (``ru_maxrss``, DuckDB's memory included) is its own. The load average is printed
beside each run: the figures are wall-clock times on a shared machine. Under each screen a line
says where its time went (see ``PARTS``). ``--engine spark`` times
the same screen on Spark in local mode (``local[*]``) instead, without a floor. ``--input csv``
screens the same rows written as CSV by DuckDB (with a header), without a floor (the floor reads
Parquet); the breakdown's *records* is the CSV's accounting before the screen, where it has one.

    .venv/bin/python benchmarks/screen_bench.py [--sizes 1e6 1e7 1e8] [--repeat 3] [--folder DIR]
    .venv/bin/python benchmarks/screen_bench.py --sizes 1e7 --threads 1 2 --repeat 3   # speed-ups
    .venv/bin/python benchmarks/screen_bench.py --sizes 1e7 --engine spark
    .venv/bin/python benchmarks/screen_bench.py --sizes 1e6 1e7 --input csv --repeat 3
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
                   THEN '(doi: 10.' || (1000 + i % 9000) || '/REF.' || (i % 20000000) || ').'
                 WHEN i % 7 = 0
                   THEN 'https://doi.org/10.' || (1000 + i % 9000) || '/REF.' || (i % 20000000)
                 ELSE '10.' || (1000 + i % 9000) || '/ref.' || (i % 20000000) END AS cited_doi,
            CAST(2000 + i % 26 AS VARCHAR) || '-06-15' AS citing_date
          FROM range({rows}) t(i)) TO '{tmp}' (FORMAT parquet, ROW_GROUP_SIZE 1000000)"""
    )
    con.close()
    tmp.rename(path)


def as_csv(parquet: Path) -> Path:
    """The rows of ``parquet`` as a CSV file beside it (written once, by DuckDB, with a header)."""
    import duckdb

    path = parquet.with_suffix(".csv")
    if not path.exists():
        tmp = path.with_name(path.name + ".part")
        con = duckdb.connect()
        con.execute("SET enable_progress_bar = false")
        con.execute(f"COPY (FROM read_parquet('{parquet}')) TO '{tmp}' (FORMAT csv, HEADER)")
        con.close()
        tmp.rename(path)
    return path


def snapshot(folder: Path) -> Path:
    from rwgate.sources.snapshot.source import import_files

    path = folder / "snapshot.sqlite"
    if not path.exists():
        import_files(path, [RW], allow_shrink=True)
    return path


FLOOR = """SELECT v.status, count(*) FROM read_parquet('{refs}') AS r
LEFT JOIN (SELECT id, status FROM read_parquet('{verdicts}') WHERE kind = 'doi') AS v
ON v.id = lower(regexp_replace(r.cited_doi, '^https?://(dx\\.)?doi\\.org/', ''))
GROUP BY 1"""


def verdicts(folder: Path, snap: Path) -> Path:
    """The verdict table of the snapshot as Parquet, for the floor (the screen builds its own)."""
    from rwgate.frontends.screen.verdicts import build, write_parquet

    path = folder / "verdicts.parquet"
    if not path.exists():
        write_parquet(build(snap), path)
    return path


def child(
    what: str, refs: str, snap: str, out: str, memory: str, engine: str, threads: str, cache: str
) -> None:
    """One timed run (in its own process, so ``ru_maxrss`` is its own): the floor or a screen;
    ``threads`` '0': DuckDB's default (all cores)."""
    start = time.perf_counter()
    if what == "warm":  # the snapshot's verdict table kept in the cache, as a user's first screen
        from rwgate.frontends.screen.verdict_cache import verdicts as kept

        with tempfile.TemporaryDirectory() as scratch:
            kept(Path(snap), Path(cache), Path(scratch))
        print(json.dumps({"seconds": time.perf_counter() - start}))
        return
    if what == "floor":
        import duckdb

        con = duckdb.connect(config={"memory_limit": memory})
        con.execute("SET preserve_insertion_order = false")
        if int(threads):
            con.execute(f"SET threads = {int(threads)}")
        rows = con.execute(FLOOR.format(refs=refs, verdicts=out)).fetchall()
        result = {
            "references": sum(n for _, n in rows),
            "flagged": None,
            "version": duckdb.__version__,
        }
    else:
        from rwgate.frontends.screen.run import ScreenOptions, screen

        timings: dict[str, float] = {}
        opts = ScreenOptions([refs], Path(out), Path(snap), memory_limit=memory, engine=engine,
                             threads=int(threads) or None, cache=Path(cache),
                             progress=False, timings=timings)  # fmt: skip
        s = screen(opts).summary
        result = {"references": s["summary"]["references"], "flagged": s["summary"]["flagged"],
                  "version": s["tool"]["engine_version"], "timings": timings}  # fmt: skip
    took = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if engine == "spark":  # the JVM is a child not yet reaped: its memory is not measured
        peak_mb = float("nan")
    print(json.dumps({"seconds": took, "peak_mb": peak_mb, **result}))


PARTS = {
    "start": "start",
    "date_map": "dates",
    "date_sets": "dates",
    "grouped": "main pass",
    "grouped_sets": "main pass",
    "file_records": "main pass",
    "rare_rows": "rare rows",
    "keys": "rare rows",
    "doi_norm": "rare rows",
    "doi_map": "rare rows",
    "pmid_map": "rare rows",
    "rare": "rare rows",
    "per_citing": "fold",
    "flagged_out": "outputs",
    "write flagged.parquet": "outputs",
    "write citing.parquet": "outputs",
    "summary": "outputs",
}
"""The screen's statements (``rwgate.frontends.screen.sql.plan``) by what they are for: *dates*
reads the
distinct citing dates; the *main pass* reads every row once, tests and looks up its DOI, counts
per citing work and keeps the rare rows (all but a plain unlisted DOI); *rare rows*: the full DOI,
PubMed id and date rules, verdicts and counts per verdict on those alone; the *fold* makes one row
per citing work (``citing.parquet``); *outputs*: files and summary; *start*: the snapshot's
verdict table (kept in the cache folder: read) and the engine started with the table loaded;
*records*: a CSV's records accounted for beyond the main pass (its rejects read; before the
screen, a pass of its own where the screen has one)."""


def breakdown(timings: dict[str, float], total: float) -> str:
    """The parts of one screen; *other* is the rest (Python's imports, the columns found and
    checked)."""
    parts: dict[str, float] = {"other": total - sum(timings.values())}
    for name, seconds in timings.items():
        part = PARTS.get(name, name)
        parts[part] = parts.get(part, 0.0) + seconds
    return ", ".join(f"{k} {v:.1f} s" for k, v in parts.items())


def _run(
    what: str, refs: Path, snap: Path, out: Path, args: argparse.Namespace, threads: int = 0
) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--child", what, str(refs), str(snap), str(out),
         args.memory_limit, args.engine, str(threads), str(args.folder / "cache")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e6, 1e7, 1e8])
    parser.add_argument("--folder", type=Path, default=None)
    parser.add_argument("--memory-limit", default="3GB")
    parser.add_argument("--engine", choices=["duckdb", "spark"], default="duckdb")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size (median printed)")
    parser.add_argument("--input", choices=["parquet", "csv"], default="parquet")
    parser.add_argument(
        "--threads",
        nargs="+",
        type=int,
        default=[0],
        help="DuckDB threads, each timed (e.g. 1 2: the speed-up from 1 to 2; 0: all cores)",
    )
    parser.add_argument("--child", nargs=8, help=argparse.SUPPRESS)
    parser.add_argument("--generate", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.generate:
        generate(Path(args.generate[0]), int(args.generate[1]), rw_dois())
        return
    args.folder = folder = args.folder or Path(tempfile.mkdtemp(prefix="rwgate-screen-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    snap = snapshot(folder)
    table = verdicts(folder, snap)
    warm = _run("warm", snap, snap, folder, args)
    print(f"verdict table kept in {folder / 'cache'} ({warm['seconds']:.1f} s)")
    kinds = ["screen"] if args.engine == "spark" or args.input == "csv" else ["floor", "screen"]
    print(
        f"{'rows':>12} {'thr':>3} {'run':>6} {'seconds':>8} {'rows/s':>12} {'peak MB':>8}"
        f" {'load':>5}"
    )
    for size in args.sizes:
        rows = int(size)
        refs = folder / f"refs-{rows}.parquet"
        if not refs.exists():  # in a child: Linux keeps ru_maxrss across exec, and the
            # runs are children of this process
            subprocess.run(
                [sys.executable, __file__, "--generate", str(refs), str(rows)], check=True
            )
        if args.input == "csv":
            refs = as_csv(refs)
        medians = {n: _size(rows, refs, snap, table, kinds, n, args) for n in args.threads}
        if len(args.threads) > 1:
            one, many = args.threads[0], args.threads[-1]
            ups = {k: medians[one][k] / medians[many][k] for k in kinds}
            text = ", ".join(f"{k} {v:.2f}x" for k, v in ups.items())
            if "floor" in ups:
                text += (
                    f"; the screen's speed-up is {ups['screen'] / ups['floor']:.0%} of the floor's"
                )
            print(f"{rows:>12} speed-up from {one} to {many} threads: {text}", flush=True)


def _size(
    rows: int,
    refs: Path,
    snap: Path,
    table: Path,
    kinds: list[str],
    threads: int,
    args: argparse.Namespace,
) -> dict[str, float]:
    """``args.repeat`` runs of each kind on one size and thread count; their medians."""
    times: dict[str, list[float]] = {k: [] for k in kinds}
    for _ in range(args.repeat):
        for kind in kinds:
            load = os.getloadavg()[0]
            out = table if kind == "floor" else args.folder / f"out-{rows}"
            got = _run(kind, refs, snap, out, args, threads)
            assert got["references"] == rows, got
            times[kind].append(got["seconds"])
            rate = rows / got["seconds"]
            line = (
                f"{rows:>12} {threads or 'all':>3} {kind:>6} {got['seconds']:>8.1f} {rate:>12,.0f}"
            )
            tail = f"{got['peak_mb']:>8.0f} {load:>5.1f}   ({args.engine} {got['version']})"
            print(f"{line} {tail}", flush=True)
            if got.get("timings"):
                print(f"{'':>23}{breakdown(got['timings'], got['seconds'])}", flush=True)
    medians = {k: statistics.median(v) for k, v in times.items()}
    summary = " ".join(f"{k} {v:.1f} s" for k, v in medians.items())
    if "floor" in medians:
        summary += f", ratio {medians['screen'] / medians['floor']:.2f}"
    print(f"{rows:>12} {threads or 'all':>3} median of {args.repeat}: {summary}", flush=True)
    return medians


if __name__ == "__main__":
    main()
