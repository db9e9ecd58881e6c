"""Benchmark: what rw-filter adds to ``pandoc --citeproc`` on a 200-citation document.

Runs real pandoc on a generated manuscript that cites 200 works (10 of them retracted), against
the loopback fake Crossref from tests/fakes. Each figure is the median wall time of
``--citeproc --filter rw-filter`` minus that of ``--citeproc`` alone, the two run in alternation
so that a noisy machine slows both alike:

* memo hit: the citations did not change since the last build (the author edited prose), so the
  filter replays its remembered verdict (target: under 150 ms);
* memo miss, warm cache: the cited keys changed, so the check runs, every look-up from the cache;
* cold cache: an empty cache and 100 ms latency on every Crossref request.

The same for the Lua filter (``--lua-filter filters/rwgate.lua``), whose memo hit replays the
verdict without starting Python (target: under 30 ms), and whose miss calls rw-filter once: after
``--citeproc``, and first (no ``--citeproc``: the filter renders the bibliography itself, as in
Quarto, then turns the citations into spans for a later citeproc), both against
``pandoc --citeproc`` alone.

Usage: ``.venv/bin/python benchmarks/filter_bench.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fakes.crossref import FakeCrossref  # noqa: E402
from rwgate.readers.pandoc_exe import pandoc_path  # noqa: E402

N_CITES = 200
N_RETRACTED = 10


def _write_document(folder: Path, fake: FakeCrossref, variants: int) -> None:
    """``bench.md``, plus ``bench-N.md`` variants each leaving out one clean citation."""
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
    clean = [i for i in range(N_CITES) if i % (N_CITES // N_RETRACTED)]
    for name, left_out in [("bench", None), *((f"bench-{v}", clean[v]) for v in range(variants))]:
        kept = [c for i, c in enumerate(cites) if i != left_out]
        body = "\n\n".join(" ".join(kept[j : j + 10]) for j in range(0, len(kept), 10))
        text = f"---\nbibliography: refs.bib\n---\n\n{body}\n"
        (folder / f"{name}.md").write_text(text, "utf-8")


LUA = str(ROOT / "filters" / "rwgate.lua")


def _command(document: str, with_filter: bool, lua: bool, first: bool) -> list[str]:
    cmd = [pandoc_path(), document, "-t", "html", "-o", "out.html"]
    if not (with_filter and first):
        cmd.insert(2, "--citeproc")
    if with_filter and lua:
        cmd += ["--lua-filter", LUA]  # after --citeproc, as rw-filter; or alone (first)
    elif with_filter:
        cmd += ["--filter", str(Path(sys.executable).parent / "rw-filter")]
    return cmd


def _counters(folder: Path, env: dict[str, str], first: bool) -> str:
    """What the Lua filter's memo hit adds to pandoc's own allocation counters (``+RTS -s``):
    unlike the times, these do not move between runs, so a change shows even on a noisy machine."""
    figures = []
    for with_filter in (False, True):
        cmd = [*_command("bench.md", with_filter, True, first), "+RTS", "-s", "-RTS"]
        proc = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, check=False)
        if proc.returncode != 0 and "RTS" in proc.stderr:
            return "(this pandoc does not take +RTS -s)"
        _check(proc, folder, with_filter)
        allocated = re.search(r"([\d,]+) bytes allocated", proc.stderr)
        major = re.search(r"Gen  1\s+(\d+) colls", proc.stderr)
        if allocated is None or major is None:
            raise SystemExit(f"no +RTS -s figures in: {proc.stderr.strip()[-300:]}")
        figures.append((int(allocated.group(1).replace(",", "")), int(major.group(1))))
    (plain, plain_major), (gated, gated_major) = figures
    return f"+{(gated - plain) / 1e6:.1f} MB allocated, {gated_major - plain_major:+d} major GCs"


def _run(
    folder: Path,
    env: dict[str, str],
    with_filter: bool,
    document: str = "bench.md",
    lua: bool = False,
    first: bool = False,
) -> float:
    cmd = _command(document, with_filter, lua, first)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    _check(proc, folder, with_filter)
    return elapsed


def _check(proc: subprocess.CompletedProcess[str], folder: Path, with_filter: bool) -> None:
    """A measured run that failed, or a gated one without every notice, measured nothing."""
    if proc.returncode != 0:
        raise SystemExit(f"pandoc failed: {proc.stderr.strip()}")
    if with_filter:
        count = (folder / "out.html").read_text(encoding="utf-8").count('class="rw-notice')
        if count != N_RETRACTED:
            raise SystemExit(f"expected {N_RETRACTED} annotations, found {count}")


def _added(
    folder: Path,
    runs: int,
    case: Callable[[int], tuple[str, dict[str, str]]],
    lua: bool = False,
    first: bool = False,
) -> float:
    """Median of (pandoc with the filter - pandoc alone), the two interleaved, in ms.

    ``case(i)`` gives run ``i``'s document and environment.
    """
    deltas = []
    for i in range(runs):
        document, env = case(i)
        base = _run(folder, env, False)
        deltas.append(_run(folder, env, True, document, lua, first) - base)
    return statistics.median(deltas) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    cold_runs = max(3, args.runs // 3)
    with tempfile.TemporaryDirectory() as tmp, FakeCrossref() as fake:
        folder = Path(tmp)
        _write_document(folder, fake, 2 * args.runs)
        env = {
            **os.environ,
            "RWGATE_CROSSREF_URL": fake.url,
            "RWGATE_CACHE_DIR": str(folder / "cache"),
            "RWGATE_SNAPSHOT": str(folder / "none.sqlite"),
            "NO_PROXY": "127.0.0.1",
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
        }
        _run(folder, env, True)  # fills the look-up cache and the memo
        base = statistics.median(_run(folder, env, False) for _ in range(args.runs)) * 1000
        hit = _added(folder, args.runs, lambda i: ("bench.md", env))
        miss = _added(folder, args.runs, lambda i: (f"bench-{i}.md", env))
        _run(folder, env, True, lua=True)  # the Lua filter's own memo entry
        lua_hit = _added(folder, args.runs, lambda i: ("bench.md", env), lua=True)
        first_hit = _added(folder, args.runs, lambda i: ("bench.md", env), lua=True, first=True)
        counters = [_counters(folder, env, first) for first in (False, True)]
        runs = args.runs  # the Lua misses use variants no run has seen (no memo of either kind)
        lua_miss = _added(folder, runs, lambda i: (f"bench-{runs + i}.md", env), lua=True)
        fake.latency = 0.1
        before = len(fake.requests)
        cold = _added(
            folder,
            cold_runs,
            lambda i: ("bench.md", {**env, "RWGATE_CACHE_DIR": str(folder / f"cold-{i}")}),
        )
        requests = (len(fake.requests) - before) // cold_runs
    print(f"document: {N_CITES} citations, {N_RETRACTED} retracted; median of {args.runs} runs")
    print(f"pandoc --citeproc alone:                    {base:7.0f} ms")
    print(f"filter adds, memo hit (citations unchanged): {hit:6.0f} ms  (target: under 150 ms)")
    print(f"filter adds, memo miss, warm look-up cache:  {miss:6.0f} ms")
    print(f"filter adds, cold cache, 100 ms RTT:         {cold:6.0f} ms  ({requests} requests)")
    print(f"Lua filter adds, memo hit:                   {lua_hit:6.0f} ms  (target: under 30 ms)")
    print(f"  pandoc's counters: {counters[0]}")
    print(f"Lua filter first (own citeproc), memo hit:   {first_hit:6.0f} ms  (target: 30 ms)")
    print(f"  pandoc's counters: {counters[1]}")
    print(
        f"Lua filter adds, memo miss, warm cache:      {lua_miss:6.0f} ms  (target: under 150 ms)"
    )


if __name__ == "__main__":
    main()
