"""The MCP server as Crossref sees it (issue 16): one rate limit for the whole process, and a
cancelled call stops asking. Against the loopback fake, which advertises Crossref's public pool
(5 requests per second, 1 in flight) and records when each request arrived."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from test_mcp import fake, in_process  # noqa: F401 (fixture)

from fakes.crossref import FakeCrossref


def test_concurrent_calls_share_one_limiter(fake: FakeCrossref, tmp_path: Path) -> None:  # noqa: F811
    """30 calls at once: never more than the advertised one request in flight, never more than
    five starting in any second (each call had its own limiter: 20-40 in flight)."""
    dois = [f"10.5555/share.{i:03d}" for i in range(30)]
    for doi in dois:
        fake.add_synthetic(doi, title=f"Work {doi}")
    fake.latency = 0.05

    async def body(client: Client) -> list[Any]:
        results: list[Any] = []

        async def one(doi: str) -> None:
            results.append(await client.call_tool("rw_check_doi", {"doi": doi}))

        async with anyio.create_task_group() as group:
            for doi in dois:
                group.start_soon(one, doi)
        return results

    results = in_process([tmp_path], body, no_cache=True)
    assert len(results) == 30 and not any(r.is_error for r in results)
    starts = sorted(r.time for r in fake.requests)
    assert len(starts) >= 30
    # One in flight: each request starts only after the one before was answered, which the fake
    # sends a latency after recording its arrival (the fake's own in-flight counter races with a
    # prompt client). Arrival i+1 is recorded after answer i: at least a latency, on any machine.
    assert min(b - a for a, b in itertools.pairwise(starts)) >= fake.latency * 0.999
    # Five per second: 30 requests need at least five seconds after the first five (measured on
    # arrival, which jitters by tens of milliseconds on a busy machine, hence the 10 % slack).
    assert starts[-1] - starts[0] >= 0.9 * (len(starts) - 5) / 5


def test_a_cancelled_call_stops_asking_upstream(fake: FakeCrossref, tmp_path: Path) -> None:  # noqa: F811
    dois = [f"10.5555/cancel.{i:04d}" for i in range(1000)]  # ten batches, one at a time
    fake.latency = 0.4

    async def body(client: Client) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, "rw_check_dois", {"dois": dois})
            # Cancelled once the work has really begun upstream: an event, not a guessed time.
            await anyio.to_thread.run_sync(fake.arrived.wait, 60)
            group.cancel_scope.cancel()

    in_process([tmp_path], body, no_cache=True)
    # Once the workers have ended none can ask again; had the work gone on, they would end only
    # after all ten batches. Waited for, not slept on.
    workers = [t for t in threading.enumerate() if t.name.startswith("rwgate-crossref")]
    for worker in workers:
        worker.join(timeout=60)
    assert not any(w.is_alive() for w in workers)
    assert len(fake.requests) <= 2, f"{len(fake.requests)} requests, cancelled after the first"
