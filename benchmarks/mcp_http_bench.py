"""Benchmark: 50 concurrent `rw_check_doi` calls to one `rwgate mcp` over streamable HTTP.

Each call asks a different DOI with no cache, so every call goes to the loopback fake Crossref,
which advertises the public pool (5 requests per second, 1 in flight) and records when each
request arrives and how many were in flight at once. Target (issue 16): the advertised rate and
concurrency hold for the whole server (before: 20-40 in flight, 26-60 per second).
Run: .venv/bin/python benchmarks/mcp_http_bench.py
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp import Client

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakes.crossref import FakeCrossref  # noqa: E402

RWGATE = str(Path(sys.executable).with_name("rwgate"))
CALLS = 50


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> None:
    with FakeCrossref() as fake:
        dois = [f"10.5555/http.{i:03d}" for i in range(CALLS)]
        for doi in dois:
            fake.add_synthetic(doi, title=f"Work {doi}")
        fake.latency = 0.05
        port = _port()
        env = {**os.environ, "RWGATE_CROSSREF_URL": fake.url, "RWGATE_NO_CACHE": "1"}
        args = ["mcp", "--transport", "streamable-http", "--port", str(port)]
        server = subprocess.Popen([RWGATE, *args], env=env, stderr=subprocess.DEVNULL)
        try:
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.05)
            url = f"http://127.0.0.1:{port}/mcp"

            async def one(doi: str) -> None:
                async with Client(url) as client:
                    await client.call_tool("rw_check_doi", {"doi": doi})

            async def run_all() -> None:
                async with anyio.create_task_group() as group:
                    for doi in dois:
                        group.start_soon(one, doi)

            start = time.perf_counter()
            anyio.run(run_all)
            wall = time.perf_counter() - start
        finally:
            server.terminate()
            server.wait(timeout=10)
        arrivals = sorted(r.time for r in fake.requests)
        per_second = max(sum(1 for t in arrivals if s <= t < s + 1.0) for s in arrivals)
    print(
        f"{CALLS} concurrent HTTP calls: {wall:.1f} s wall, {len(arrivals)} Crossref requests, "
        f"peak {fake.peak_in_flight} in flight (advertised 1), at most {per_second} starting "
        "in any second (advertised 5; arrival times jitter)"
    )


if __name__ == "__main__":
    main()
