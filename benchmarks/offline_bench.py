"""Benchmark: ``rwgate check --offline`` on 100,000 DOIs against a 70,000-row snapshot (issue 14).

Target: under 3 s and under 300 MB peak RSS for the whole command (a child process, so its peak
RSS is its own). The snapshot is built once from :func:`snapshot_bench.generate`'s synthetic
export (the real format and quirks); half of the 100,000 DOIs are listed in it (the worst case:
each listed DOI carries notices into the report). Median of ``--runs`` runs.

    .venv/bin/python benchmarks/offline_bench.py [--rows 70000] [--dois 100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from snapshot_bench import generate, work_doi

RWGATE = Path(sys.executable).with_name("rwgate")


def _run_once(snapshot: Path, dois: Path, report: Path, home: Path) -> tuple[float, float, int]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(home), "XDG_CACHE_HOME": str(home)}
    argv = [str(RWGATE), "check", "--offline", "--no-cache", "--snapshot", str(snapshot)]
    argv += ["--format", "json", "--output", str(report), str(dois)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    code = subprocess.run(argv, env=env, capture_output=True, check=False).returncode
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) / 1024, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=70_000)
    parser.add_argument("--dois", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from rwgate.sources.snapshot.source import import_files

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        export, snapshot = base / "export.csv", base / "snapshot.sqlite3"
        generate(export, args.rows)
        import_files(snapshot, [export], allow_shrink=True)
        listed = [work_doi(i) for i in range(0, args.rows, 2)][: args.dois // 2]
        absent = [f"10.9999/absent.{i}" for i in range(args.dois - len(listed))]
        dois = base / "dois.txt"
        dois.write_text("\n".join(listed + absent) + "\n", encoding="utf-8")
        runs = [_run_once(snapshot, dois, base / "report.json", base) for _ in range(args.runs)]
    wall = statistics.median(r[0] for r in runs)
    # ru_maxrss of children is the largest child so far: the peak over the runs.
    peak = max(r[1] for r in runs)
    print(
        f"rwgate check --offline: {args.dois} DOIs ({len(listed)} listed) against {args.rows} rows:"
        f" median {wall:.2f} s over {args.runs} runs, peak RSS {peak:.0f} MB, exit {runs[0][2]}"
        "  [target < 3 s, < 300 MB]"
    )


if __name__ == "__main__":
    main()
