"""Benchmark: 100 arXiv ids, cold, against the loopback fake arXiv, with arXiv's real pace.

arXiv asks for one request every 3 s on one connection, so what counts is requests, not
threads: 100 ids (10 of them withdrawn) must cost one batched Atom ``id_list`` request, plus one
``arXivRaw`` look-up per withdrawal hint, each started at least 3 s after the one before. The
pacer's clock is real here (the benchmark waits as a user would); it prints the requests made,
the smallest gap between two request starts, and the wall time beside the floor
(requests - 1) x 3 s. Target: 1 Atom request for the 100 ids, every gap >= 3.0 s.
Run: .venv/bin/python benchmarks/preprint_bench.py
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fakes.arxiv import FakeArxiv
from rwgate.sources.arxiv import ArxivSource
from rwgate.sources.arxiv_pace import INTERVAL, Pacer

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


def main() -> int:
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
    ok = atom == 1 and withdrawn == N // WITHDRAWN_EVERY and all(g >= INTERVAL for g in gaps)
    print("target met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
