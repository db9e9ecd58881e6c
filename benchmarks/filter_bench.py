"""Benchmark: what rw-filter adds to ``pandoc --citeproc`` on a 200-citation document.

Runs real pandoc on a generated manuscript that cites 200 works (10 of them retracted), against
the loopback fake Crossref from tests/fakes:

* warm cache: median wall time of ``--citeproc --filter rw-filter`` minus ``--citeproc`` alone
  (target: under 150 ms);
* cold cache: the same with an empty cache and 100 ms latency on every Crossref request.

Usage: ``.venv/bin/python benchmarks/filter_bench.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fakes.crossref import FakeCrossref  # noqa: E402
from rwgate.pandoc_exe import pandoc_path  # noqa: E402

N_CITES = 200
N_RETRACTED = 10


def _write_document(folder: Path, fake: FakeCrossref) -> None:
    entries, cites = [], []
    for i in range(N_CITES):
        doi = f"10.5555/bench.{i:04d}"
        notices = None
        if i % (N_CITES // N_RETRACTED) == 0:
            notices = [
                {
                    "DOI": f"10.5555/bench.notice.{i:04d}",
                    "type": "retraction",
                    "source": "retraction-watch",
                    "updated": {"date-parts": [[2022, 1, 1]]},
                }
            ]
        fake.add_synthetic(doi, updated_by=notices, title=f"Work number {i}")
        entries.append(
            f"@article{{w{i},\n  author = {{Author{i}, A.}},\n  title = {{Work number {i}}},\n"
            f"  journal = {{Journal of Benchmarks}},\n  year = {{2020}},\n  doi = {{{doi}}}\n}}\n"
        )
        cites.append(f"Claim {i} [@w{i}].")
    (folder / "refs.bib").write_text("\n".join(entries), encoding="utf-8")
    body = "\n\n".join(" ".join(cites[j : j + 10]) for j in range(0, N_CITES, 10))
    (folder / "bench.md").write_text(f"---\nbibliography: refs.bib\n---\n\n{body}\n", "utf-8")


def _run(folder: Path, env: dict[str, str], with_filter: bool) -> float:
    script = str(Path(sys.executable).parent / "rw-filter")
    cmd = [pandoc_path(), "bench.md", "--citeproc", "-t", "html", "-o", "out.html"]
    if with_filter:
        cmd += ["--filter", script]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"pandoc failed: {proc.stderr.strip()}")
    if with_filter:
        count = (folder / "out.html").read_text(encoding="utf-8").count('class="rw-notice')
        if count != N_RETRACTED:
            raise SystemExit(f"expected {N_RETRACTED} annotations, found {count}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeCrossref() as fake:
        folder = Path(tmp)
        _write_document(folder, fake)
        env = {
            **os.environ,
            "RWGATE_CROSSREF_URL": fake.url,
            "RWGATE_CACHE_DIR": str(folder / "cache"),
            "RWGATE_SNAPSHOT": str(folder / "none.sqlite"),
            "NO_PROXY": "127.0.0.1",
        }
        _run(folder, env, True)  # fills the cache
        base = [_run(folder, env, False) for _ in range(args.runs)]
        warm = [_run(folder, env, True) for _ in range(args.runs)]
        fake.latency = 0.1
        cold = []
        for i in range(max(3, args.runs // 3)):
            cold_env = {**env, "RWGATE_CACHE_DIR": str(folder / f"cold-{i}")}
            before = len(fake.requests)
            cold.append(_run(folder, cold_env, True))
            requests = len(fake.requests) - before
    b, w, c = (statistics.median(x) * 1000 for x in (base, warm, cold))
    print(f"document: {N_CITES} citations, {N_RETRACTED} retracted; median of {args.runs} runs")
    print(f"pandoc --citeproc alone:            {b:7.0f} ms")
    print(f"+ rw-filter, warm cache:            {w:7.0f} ms  (filter adds {w - b:.0f} ms)")
    print(f"+ rw-filter, cold cache, 100 ms RTT: {c:7.0f} ms  ({requests} Crossref requests)")


if __name__ == "__main__":
    main()
