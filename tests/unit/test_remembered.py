"""The one rule of what a front end may remember (rwgate.verdicts.remembered.refusal), reason by
reason.

The end-to-end rows are in tests/e2e/test_memo_matrix.py; here the rule itself, and the two
places where rw-filter and rw-latexmk differ on purpose (a failing verdict, a report).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rwgate.contract.models import Citation
from rwgate.settings.config import Settings, load_settings
from rwgate.settings.policy import Policy
from rwgate.verdicts.remembered import REASONS, refusal
from rwgate.verdicts.result import CheckResult

FILTER = {"replays_failure": True, "replays_report": True}
LATEXMK = {"replays_failure": False, "replays_report": False}


def _settings(tmp_path: Path, **overrides: object) -> Settings:
    return load_settings(tmp_path, overrides={"cache_dir": tmp_path / "cache", **overrides})


def _result(status: str = "clean", action: str = "ignore", complete: bool = True) -> CheckResult:
    citation = Citation(key="k", doi="10.1/x", status=status, action=action)  # type: ignore[arg-type]
    return CheckResult([citation], Policy(), [], complete=complete)


def test_a_clean_complete_run_is_remembered_by_both(tmp_path: Path) -> None:
    settings, base = _settings(tmp_path), tmp_path / "cache"
    assert refusal(settings, _result(), base, **FILTER) is None
    assert refusal(settings, _result(), base, **LATEXMK) is None


@pytest.mark.parametrize(
    ("reason", "overrides", "result", "base"),
    [
        ("memo_off", {}, _result(), None),
        ("memo_off", {"no_memo": True}, _result(), "cache"),
        ("no_cache", {"no_cache": True}, _result(), "cache"),
        ("cache_elsewhere", {}, _result(), "other"),
        ("offline", {"offline": True}, _result(), "cache"),
        ("incomplete", {}, _result(complete=False), "cache"),
        ("unverified", {}, _result("unverified", "warn"), "cache"),
        ("recovery", {"recover_dois": True}, _result(), "cache"),
        ("lockfile", {"lock": "x.lock"}, _result(), "cache"),
        ("lockfile", {"since": "x.lock"}, _result(), "cache"),
    ],
)
def test_each_reason_refuses_for_both_front_ends(
    tmp_path: Path, reason: str, overrides: dict[str, object], result: CheckResult, base: str | None
) -> None:
    settings = _settings(tmp_path, **overrides)
    folder = None if base is None else tmp_path / base
    assert refusal(settings, result, folder, **FILTER) == reason
    assert refusal(settings, result, folder, **LATEXMK) == reason


def test_a_failing_verdict_is_replayed_by_rw_filter_only(tmp_path: Path) -> None:
    """rw-filter replays its ERROR lines and exit status (pandoc writes nothing either way);
    rw-latexmk renames the PDF on a failing gate, which a rebuild must do again."""
    failing = _result("retracted", "fail")
    assert failing.exit_code == 1
    settings, base = _settings(tmp_path), tmp_path / "cache"
    assert refusal(settings, failing, base, **FILTER) is None
    assert refusal(settings, failing, base, **LATEXMK) == "failed"


def test_a_report_is_replayed_by_rw_filter_only(tmp_path: Path) -> None:
    """rw-filter keeps the report's text and writes it again; rw-latexmk keeps what it printed."""
    settings, base = _settings(tmp_path, report=tmp_path / "r.json"), tmp_path / "cache"
    assert refusal(settings, _result(), base, **FILTER) is None
    assert refusal(settings, _result(), base, **LATEXMK) == "report"


@pytest.mark.parametrize("effect", ["build_failed", "success_cmd", "problems"])
def test_effects_a_front_end_saw_refuse(tmp_path: Path, effect: str) -> None:
    settings, base = _settings(tmp_path), tmp_path / "cache"
    assert refusal(settings, _result(), base, effects=[effect], **LATEXMK) == effect


def test_every_reason_says_why() -> None:
    assert all(len(why) > 20 for why in REASONS.values())
