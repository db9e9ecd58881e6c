"""Benchmark: `rwgate mcp` over stdio, the way an MCP client runs it.

Measures (1) start-up: spawning `rwgate mcp` and completing the MCP handshake plus `tools/list`,
and (2) per-call latency of each tool with a warm cache (every Crossref answer already cached),
against the loopback fake Crossref. Prints the median and 90th percentile of each.
Run: .venv/bin/python benchmarks/mcp_bench.py
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakes.crossref import FakeCrossref  # noqa: E402

RWGATE = str(Path(sys.executable).with_name("rwgate"))
STARTS = 5
CALLS = 20
WAKEFIELD = "https://doi.org/10.1016/S0140-6736(97)11096-0"
EXAMPLE_DOIS = [
    "10.1016/s0140-6736(97)11096-0",
    "10.1126/science.1256151",
    "10.1126/science.aac6638",
    "10.1002/14651858.cd009522",
    "10.1038/nature12373",
    "10.1038/171737a0",
]
CASES: list[tuple[str, dict[str, Any]]] = [
    ("rw_check_doi", {"doi": WAKEFIELD}),
    ("rw_check_dois", {"dois": EXAMPLE_DOIS}),
    ("rw_check_author", {"name": "A. J. Wakefield"}),
    ("rw_search", {"update_types": ["retraction"], "limit": 20}),
    ("rw_recent_retractions", {"limit": 20}),
    ("rw_get_record", {"doi": "10.1126/science.aac6638"}),
    ("rw_check_bibliography", {"path": "refs.bib"}),
    ("rw_check_manuscript", {"path": "paper.md"}),
    ("rw_data_status", {}),
]


def _quantiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered) * 1000:7.1f} ms   p90 {p90 * 1000:7.1f} ms"


async def _timed(client: Client, name: str, args: dict[str, Any]) -> float:
    start = time.perf_counter()
    await client.call_tool(name, args)
    return time.perf_counter() - start


async def bench(params: StdioServerParameters) -> None:
    starts = []
    for _ in range(STARTS):
        start = time.perf_counter()
        async with Client(params) as client:
            await client.list_tools()
            starts.append(time.perf_counter() - start)
    print(f"start-up (spawn + handshake + tools/list), {STARTS} runs: {_quantiles(starts)}")
    async with Client(params) as client:
        for name, args in CASES:
            first = await client.call_tool(name, args)  # fills the cache
            if first.is_error:
                raise SystemExit(f"{name} failed: {first.content}")
            samples = [await _timed(client, name, args) for _ in range(CALLS)]
            print(f"  {name:24s} warm, {CALLS} calls: {_quantiles(samples)}")


def main() -> None:
    with FakeCrossref(notices=True) as fake, tempfile.TemporaryDirectory() as home:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": os.environ.get("HOME", home),
            "NO_PROXY": "127.0.0.1,localhost",
            "RWGATE_CROSSREF_URL": fake.url,
            "RWGATE_CACHE_DIR": str(Path(home) / "cache"),
            "RWGATE_SNAPSHOT": str(Path(home) / "none.sqlite"),
        }
        args = ["mcp", "--root", str(ROOT / "examples")]
        params = StdioServerParameters(command=RWGATE, args=args, env=env)
        anyio.run(bench, params)
        print(f"requests to the fake Crossref: {len(fake.requests)}")


if __name__ == "__main__":
    main()
