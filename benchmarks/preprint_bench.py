"""Benchmark: 100 arXiv ids, cold, against the loopback fake arXiv, with arXiv's real pace.

arXiv asks for one request every 3 s on one connection, so what counts is requests, not
threads: 100 ids (10 of them withdrawn) must cost one batched Atom ``id_list`` request, plus one
``arXivRaw`` look-up per withdrawal hint, each started at least 3 s after the one before. The
pacer's clock is real here (the benchmark waits as a user would); it prints the requests made,
the smallest gap between two request starts, and the wall time beside the floor
(requests - 1) x 3 s. Target: 1 Atom request for the 100 ids, every gap >= 3.0 s.

Second part: the rebuild. ``rwgate check`` (a fresh process each run, no resident worker) of a
bibliography of 100 arXiv-only entries (``eprint``/``archivePrefix``), cold (an empty look-up
cache: arXiv's pace decides) and again with the cache warm, beside the same for 100 DOI-cited
entries (the fake Crossref). Median of 5 runs each. Target: the warm arXiv rebuild asks no server
and is as fast as the warm DOI rebuild (within 10 %, or 50 ms on a loaded machine).
Run: .venv/bin/python benchmarks/preprint_bench.py [--runs 5] [--cold-runs 5]
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fakes.arxiv import FakeArxiv
from fakes.crossref import FakeCrossref
from rwgate.sources.arxiv import ArxivSource
from rwgate.sources.net.ratelimit import INTERVAL, Pacer

N = 100
WITHDRAWN_EVERY = 10


def paper(i: int) -> dict:
    ident = f"2301.{i:05d}"
    withdrawn = i % WITHDRAWN_EVERY == 0
    versions = [{"date": "Mon, 2 Jan 2023 10:00:00 GMT", "size": "100kb", "source_type": "D"}]
    if withdrawn:
        versions.append({"date": "Tue, 3 Jan 2023 10:00:00 GMT", "size": "0kb", "source_type": "I"})
    return {
        "id": ident,
        "title": f"Paper {i}",
        "authors": "A. Author",
        "comments": "This paper has been withdrawn by the author" if withdrawn else "10 pages",
        "doi": None,
        "journal_ref": None,
        "datestamp": "2023-01-03",
        "versions": versions,
    }


def pace() -> bool:
    """The first part: 100 ids through the source, cold, at arXiv's real pace."""
    papers = {p["id"]: p for p in (paper(i) for i in range(1, N + 1))}
    starts: list[float] = []
    with FakeArxiv(papers=papers) as fake:
        source = ArxivSource(fake.api_url, fake.oai_url, pacer=Pacer(on_start=starts.append))
        began = time.monotonic()
        got = source.query_all(list(papers))
        wall = time.monotonic() - began
    atom = len(fake.requests_to("/api/query"))
    raw = len(fake.requests_to("/oai"))
    withdrawn = sum(1 for lookup in got.values() if lookup.notices)
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    floor = (len(starts) - 1) * INTERVAL
    print(f"{N} arXiv ids cold: {atom} Atom request(s), {raw} arXivRaw look-up(s)")
    print(f"withdrawals found: {withdrawn} (expected {N // WITHDRAWN_EVERY})")
    print(f"smallest gap between request starts: {min(gaps, default=0):.2f} s (arXiv: >= 3 s)")
    print(f"wall time {wall:.1f} s (floor {floor:.0f} s = {len(starts) - 1} gaps x {INTERVAL:g} s)")
    return atom == 1 and withdrawn == N // WITHDRAWN_EVERY and all(g >= INTERVAL for g in gaps)


def _bib(path: Path, field: str) -> Path:
    """100 entries: ``eprint`` (arXiv) or ``doi`` (Crossref), one per paper."""
    entries = []
    for i in range(1, N + 1):
        ident = f"eprint = {{2301.{i:05d}}}, archivePrefix = {{arXiv}}"
        if field == "doi":
            ident = f"doi = {{10.5555/bench.{i}}}"
        entries.append(
            f"@misc{{w{i},\n  title = {{Paper {i}}},\n  year = {{2023}},\n  {ident}\n}}\n"
        )
    path.write_text("".join(entries), encoding="utf-8")
    return path


def _check(bib: Path, env: dict[str, str]) -> float:
    """One ``rwgate check`` in a fresh process, its wall time (exit 0 or 1: a gate, not a fault)."""
    cmd = [sys.executable, "-m", "rwgate", "check", "--no-history", "--format", "json", str(bib)]
    began = time.monotonic()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - began
    if done.returncode not in (0, 1):
        raise SystemExit(f"rwgate check failed ({done.returncode}): {done.stderr[-500:]}")
    return wall


def rebuild(runs: int, cold_runs: int) -> bool:
    """The second part: ``rwgate check`` cold and warm, arXiv-cited beside DOI-cited."""
    papers = {p["id"]: p for p in (paper(i) for i in range(1, N + 1))}
    with (
        FakeArxiv(papers=papers) as arxiv,
        FakeCrossref() as crossref,
        tempfile.TemporaryDirectory() as tmp,
    ):
        for i in range(1, N + 1):
            crossref.add_synthetic(f"10.5555/bench.{i}", title=f"Paper {i}")
        home = Path(tmp)
        env = {
            **os.environ,
            "RWGATE_CROSSREF_URL": crossref.url,
            "RWGATE_DOI_URL": crossref.url,
            "RWGATE_ARXIV_URL": arxiv.api_url,
            "RWGATE_ARXIV_OAI_URL": arxiv.oai_url,
            "RWGATE_BIORXIV_URL": crossref.url,  # never asked: no 10.1101 DOI here
            "RWGATE_SNAPSHOT": str(home / "no-snapshot.sqlite3"),
            "RWGATE_RESIDENT": "0",
            "XDG_CONFIG_HOME": str(home / "config"),
            "NO_PROXY": "127.0.0.1",
            "no_proxy": "127.0.0.1",
        }
        results: dict[str, tuple[list[float], list[float], int]] = {}
        for kind in ("arxiv", "doi"):
            bib = _bib(home / f"{kind}.bib", kind)
            cache = home / f"cache-{kind}"
            run_env = {**env, "RWGATE_CACHE_DIR": str(cache)}
            cold = []
            for _ in range(cold_runs):
                shutil.rmtree(cache, ignore_errors=True)
                cold.append(_check(bib, run_env))
            asked = len(arxiv.requests) + len(crossref.requests)
            warm = [_check(bib, run_env) for _ in range(runs)]
            again = len(arxiv.requests) + len(crossref.requests) - asked
            results[kind] = (cold, warm, again)
    for kind, (cold, warm, again) in results.items():
        label = "arXiv-cited" if kind == "arxiv" else "DOI-cited  "
        print(
            f"{N} {label} entries: cold median {statistics.median(cold):.2f} s "
            f"({', '.join(f'{t:.2f}' for t in cold)}); warm median {statistics.median(warm):.3f} s "
            f"({', '.join(f'{t:.3f}' for t in warm)}); requests on the warm runs: {again}"
        )
    arxiv_warm = statistics.median(results["arxiv"][1])
    doi_warm = statistics.median(results["doi"][1])
    print(f"warm rebuild, arXiv / DOI: {arxiv_warm / doi_warm:.2f}")
    quiet = results["arxiv"][2] == 0 and results["doi"][2] == 0
    return quiet and arxiv_warm <= max(doi_warm * 1.10, doi_warm + 0.05)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="warm runs (median)")
    parser.add_argument("--cold-runs", type=int, default=5, help="cold runs (median)")
    args = parser.parse_args()
    ok = pace()
    print("target met" if ok else "TARGET MISSED")
    warm_ok = rebuild(args.runs, args.cold_runs)
    print("target met" if warm_ok else "TARGET MISSED")
    return 0 if ok and warm_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
