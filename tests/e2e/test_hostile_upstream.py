"""A hostile or broken upstream never makes a retracted or unknown work clean (issue 12).

Each fault of :mod:`fakes.hostile` is served to a real ``rwgate check`` process: no cited work that
is retracted or unknown comes out ``clean``, the run ends within the deadline plus 2 s, peak memory
stays under 300 MB (a gzip bomb included), and nothing wrong is cached: a rerun against a healthy
Crossref with the same cache gives the right verdicts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fakes.crossref import FakeCrossref
from fakes.hostile import FAULTS, WAKEFIELD, HostileCrossref

UNKNOWN = "10.5555/no-such-work-rwgate"
DEADLINE = 3.0
PROBE = """
import json, resource, sys, time
from rwgate.cli import main
start = time.monotonic()
code = main(["check", "--format", "json", "--output", sys.argv[1],
             "--doi", sys.argv[2], "--doi", sys.argv[3]])
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"code": code, "seconds": time.monotonic() - start, "rss_mb": rss}))
"""
# Valid records that say something unusual: a right answer, rightly cached.
VALID = {"duplicates": "retracted", "notice_without_type": "unknown_notice"}


def _check(url: str, cache: Path, out: Path) -> tuple[dict[str, object], dict[str, str]]:
    env = {
        **os.environ,
        "RWGATE_CROSSREF_URL": url,
        "RWGATE_CACHE_DIR": str(cache),
        "RWGATE_MAX_SECONDS": str(DEADLINE),
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(out), WAKEFIELD, UNKNOWN],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert "Traceback" not in done.stderr, done.stderr
    run = json.loads(done.stdout.strip().splitlines()[-1])
    report = json.loads(out.read_text(encoding="utf-8"))
    return run, {c["doi"]: c["status"] for c in report["citations"]}


@pytest.mark.parametrize("fault", FAULTS)
def test_fault_never_makes_a_retracted_or_unknown_work_clean(fault: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with HostileCrossref(fault) as bad:
        run, status = _check(bad.url, cache, tmp_path / "bad.json")
    assert status[WAKEFIELD] == VALID.get(fault, status[WAKEFIELD])
    assert status[WAKEFIELD] in ("retracted", "unverified", "unknown_notice"), status
    assert status[UNKNOWN] in ("unknown_doi", "unverified"), status
    assert float(run["seconds"]) < DEADLINE + 2, run  # type: ignore[arg-type]
    assert float(run["rss_mb"]) < 300, run  # type: ignore[arg-type]
    if fault in VALID:
        return
    with FakeCrossref() as good:
        _, healed = _check(good.url, cache, tmp_path / "good.json")
    assert healed == {WAKEFIELD: "retracted", UNKNOWN: "unknown_doi"}, healed
