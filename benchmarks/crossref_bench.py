"""Benchmark: check 300 DOIs against the loopback fake Crossref answering with 100 ms latency.

Prints requests made and wall time, cold cache and warm cache, beside the one-request-per-DOI floor
(300 x 100 ms = 30 s). Targets (issue 2): at most one request per 100 DOIs, cold < 3 s,
warm < 0.3 s.

Then (issue 14) a first check of 250 DOIs of which 150 Crossref does not hold (100 DataCite DOIs of
arXiv and Zenodo, 50 no agency knows): target at most 5 requests (3 batches of ``/works``, 2 of the
resolver's ``/ra/``), where asking ``/works/{doi}`` for each missing DOI took 153.
Run: .venv/bin/python benchmarks/crossref_bench.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fakes.crossref import FakeCrossref, synthetic_record
from rwgate.core import check
from rwgate.readers.gather import doi_reference
from rwgate.settings.config import load_settings

N = 300
LATENCY = 0.1


def notice(i: int) -> list[dict]:
    if i % 10:
        return []
    return [
        {
            "DOI": f"10.5555/notice.{i}",
            "type": "retraction",
            "label": "Retraction",
            "source": "retraction-watch",
            "updated": {"date-parts": [[2021, 1, 1]]},
            "record-id": str(90000 + i),
        }
    ]


def one_run(fake: FakeCrossref, cache_dir: Path, dois: list[str]) -> tuple[float, int, int]:
    overrides = {"crossref_url": fake.url, "cache_dir": cache_dir, "doi_url": fake.url}
    settings = load_settings(cache_dir, overrides=overrides, env={})
    refs = [doi_reference(d) for d in dois]
    before = len(fake.requests)
    start = time.perf_counter()
    result = check(refs, settings)
    elapsed = time.perf_counter() - start
    flagged = sum(c.status == "retracted" for c in result.citations)
    return elapsed, len(fake.requests) - before, flagged


def main() -> None:
    dois = [f"10.5555/bench.{i:04d}" for i in range(N)]
    with FakeCrossref(latency=LATENCY) as fake, tempfile.TemporaryDirectory() as tmp:
        for i, doi in enumerate(dois):
            fake.add_record(synthetic_record(doi, updated_by=notice(i)))
        cold = one_run(fake, Path(tmp), dois)
        warm = one_run(fake, Path(tmp), dois)
    floor = N * LATENCY
    print(f"{N} DOIs, fake Crossref latency {LATENCY * 1000:.0f} ms per request")
    print(f"one-request-per-DOI floor: {N} requests, {floor:.1f} s")
    for name, (secs, reqs, flagged) in (("cold cache", cold), ("warm cache", warm)):
        print(f"{name}: {reqs} requests, {secs:.3f} s wall, {flagged} retracted found")
    mixed_run()


def mixed_run() -> None:
    held = [f"10.5555/held.{i:03d}" for i in range(100)]
    datacite = [f"10.48550/arxiv.2401.{i:05d}" for i in range(50)]
    datacite += [f"10.5281/zenodo.{100000 + i}" for i in range(50)]
    nowhere = [f"10.5555/nowhere.{i:03d}" for i in range(50)]
    with FakeCrossref(latency=LATENCY) as fake, tempfile.TemporaryDirectory() as tmp:
        for i, doi in enumerate(held):
            fake.add_record(synthetic_record(doi, updated_by=notice(i)))
        secs, reqs, _ = one_run(fake, Path(tmp), held + datacite + nowhere)
        to_ra = sum(r.path.startswith("/ra/") for r in fake.requests)
    print(
        f"250 DOIs, 150 not Crossref's (100 DataCite, 50 unknown): {reqs} requests "
        f"({to_ra} to /ra/), {secs:.3f} s wall  [target <= 5 requests]"
    )


if __name__ == "__main__":
    main()
