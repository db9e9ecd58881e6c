"""A hostile or broken upstream never makes a retracted or unknown work clean (issue 12).

Each fault of :mod:`fakes.hostile` is served to a real ``rwgate check`` process: no cited work that
is retracted or unknown comes out ``clean``, peak memory stays under 300 MB (a gzip bomb included),
and nothing wrong is cached: a rerun against a healthy Crossref with the same cache gives the right
verdicts. A fault that only wastes time (a stall, headers or a body dripped a byte at a time) is
tested by what the run's deadline causes (issues 28 and 30): the run gives up and says so in the
report, both works are ``unverified``, it made one request and no retry, and how long it
listened is counted in the bytes the server dripped, held to the configured budget with a
proportional margin. No fault makes the run ask more than its retry policy allows (requests
counted by the server). No assertion reads a clock: on a busy machine 5.2 s was seen for a 3 s
deadline; the subprocess timeout only catches a hang.
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
import json, resource, sys
from rwgate.frontends.cli.main import main
code = main(["check", "--format", "json", "--output", sys.argv[1],
             "--doi", sys.argv[2], "--doi", sys.argv[3]])
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"code": code, "rss_mb": rss}))
"""
# Valid records that say something unusual: a right answer, rightly cached.
VALID = {"duplicates": "retracted", "notice_without_type": "unknown_notice"}
SLOW = ("drip", "drip_headers", "stall")
MARGIN = 4  # times the deadline's worth of dripped bytes: a busy machine still reads no more
# At most one batch and one confirmation per cited DOI, each tried at most Crossref's max_attempts.
MAX_REQUESTS = 3 * 5


def _check(
    url: str, cache: Path, out: Path
) -> tuple[dict[str, object], dict[str, str], dict[str, str]]:
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
    reasons = {c["doi"]: c.get("reason") or "" for c in report["citations"]}
    return run, {c["doi"]: c["status"] for c in report["citations"]}, reasons


@pytest.mark.parametrize("fault", FAULTS)
def test_fault_never_makes_a_retracted_or_unknown_work_clean(fault: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with HostileCrossref(fault) as bad:
        run, status, reasons = _check(bad.url, cache, tmp_path / "bad.json")
        dripped, tick, requests = bad.sent, bad.tick, bad.requests
    assert status[WAKEFIELD] == VALID.get(fault, status[WAKEFIELD])
    assert status[WAKEFIELD] in ("retracted", "unverified", "unknown_notice"), status
    assert status[UNKNOWN] in ("unknown_doi", "unverified"), status
    assert float(run["rss_mb"]) < 300, run  # type: ignore[arg-type]
    if fault in SLOW:  # what the deadline causes
        assert set(status.values()) == {"unverified"}, (status, reasons)
        assert all(f"gave up at the {DEADLINE:g}s deadline" in r for r in reasons.values()), reasons
        assert dripped < MARGIN * DEADLINE / tick, dripped
        assert requests == 1, requests  # the deadline ended it: no second attempt
    assert 1 <= requests <= MAX_REQUESTS, requests
    if fault in VALID:
        return
    with FakeCrossref() as good:
        _, healed, _ = _check(good.url, cache, tmp_path / "good.json")
    assert healed == {WAKEFIELD: "retracted", UNKNOWN: "unknown_doi"}, healed
