"""scripts/check-test-timing (run by ``make lint``) finds the wall-clock assertions of issue 30.

Each flagged snippet is a pattern the suite held on 483caed (two of them failed under load); each
allowed one is how those tests now bound time: by the run's own budget, by counts, or not at all.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "check-test-timing"


def _checker() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("check_test_timing", str(SCRIPT))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


CHECKER = _checker()

FLAGGED = {
    "hostile-fixed-margin": """
        DEADLINE = 3.0
        def test_fault(run):
            assert float(run["seconds"]) < DEADLINE + 2, run
    """,
    "monotonic-difference": """
        import time
        def test_cancel():
            started = time.monotonic()
            work()
            assert time.monotonic() - started < 2.0 and not cancelled
    """,
    "elapsed-name": """
        from time import perf_counter
        def test_fast():
            t0 = perf_counter()
            work()
            elapsed = perf_counter() - t0
            assert elapsed <= 1.5
    """,
    "helper-gap-lower-bound": """
        def gap(fake, first, second):
            return fake.requests[second].time - fake.requests[first].time
        def test_retry_after(fake):
            assert gap(fake, 0, 1) >= 0.95
    """,
    "window-of-request-times": """
        def test_rate(fake):
            times = sorted(r.time for r in fake.requests)
            assert min(times[i + 4] - times[i] for i in range(len(times) - 4)) >= 0.95
    """,
    "durations-kept-in-a-dict": """
        import time
        def test_off_the_loop(finished, name):
            start = time.monotonic()
            finished[name] = time.monotonic() - start
            assert finished["verify_citation"] > 1.0
    """,
    "constant-on-the-left": """
        import time
        def test_x():
            start = time.time()
            assert 5 > time.time() - start
    """,
}

ALLOWED = {
    "proportional-to-the-budget": """
        import time
        def test_deadline(settings):
            started = time.monotonic()
            work()
            assert time.monotonic() - started < settings.max_total_seconds / 2
    """,
    "large-constant": """
        import time
        def test_slow_reader():
            start = time.monotonic()
            work()
            assert time.monotonic() - start < 30
    """,
    "counts-not-time": """
        def test_drip(slow):
            assert slow.sent < 3 * 0.5 / slow.tick and slow.requests == 1
    """,
    "polling-loop": """
        import time
        def wait_for(check):
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                if check():
                    return
    """,
    "timestamps-not-durations": """
        import time
        def test_expiry(data):
            assert time.time() < data["expires"] <= time.time() + 3600
    """,
}


def _found(tmp_path: Path, source: str) -> list[str]:
    path = tmp_path / "test_sample.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return list(CHECKER.findings(path))


@pytest.mark.parametrize("name", sorted(FLAGGED))
def test_a_duration_against_a_small_constant_is_flagged(name: str, tmp_path: Path) -> None:
    found = _found(tmp_path, FLAGGED[name])
    assert len(found) == 1, found
    assert found[0].startswith(f"{tmp_path / 'test_sample.py'}:")


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_budgets_counts_and_timestamps_are_not(name: str, tmp_path: Path) -> None:
    assert _found(tmp_path, ALLOWED[name]) == []


def test_main_exits_1_and_names_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "test_sample.py"
    path.write_text(textwrap.dedent(FLAGGED["hostile-fixed-margin"]), encoding="utf-8")
    assert CHECKER.main([str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == f'{path}:4: float(run["seconds"]) < DEADLINE + 2\n'
    assert "issue 30" in err
    (tmp_path / "test_sample.py").write_text(textwrap.dedent(ALLOWED["polling-loop"]))
    assert CHECKER.main([str(path)]) == 0
