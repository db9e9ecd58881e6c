"""Issue 48: the user's settings stay few places in rw-filter (benchmarks/settings_walk.py).

A real ``pandoc --citeproc --filter rw-filter`` run on the bundled example, offline against the
bundled sample snapshot, under the benchmark's profiler. Inside ``rwgate.frontends.pandoc`` only the
phases that use the settings (or the verdict, which holds the policy) receive them: on 74ac5de the
walk also went through ``_payload``, ``_placed`` and ``notices.announce``, which only passed the
run or the verdict on, and the Lua mode travelled as a parameter (``tests/unit/test_filter_mode``).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from settings_walk import measure, read_layers  # noqa: E402

ALLOWED = {
    "rwgate.frontends.pandoc.filter:Filter.judge",
    "rwgate.frontends.pandoc.filter:Filter.finalize",
    "rwgate.frontends.pandoc.filter:Filter._verdict",
    "rwgate.frontends.pandoc.filter:report_messages",
    "rwgate.frontends.pandoc.filter:verify_printed",
}


def test_rw_filter_hands_the_settings_only_to_the_phases_that_use_them() -> None:
    walk = measure(["rw-filter"])["rw-filter"]
    assert walk.processes == 1  # the filter ran, profiled (no resident worker took it)
    assert "rwgate.frontends.kit:judge_document" in walk.stays  # a full run, not a memo hit
    pandoc = {stay for stay in walk.stays if stay.startswith("rwgate.frontends.pandoc.")}
    assert pandoc <= ALLOWED, sorted(pandoc - ALLOWED)
    assert walk.climbs(read_layers(ROOT / "pyproject.toml")) == []
