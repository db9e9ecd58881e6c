"""The first line of every human report (issue 40): what the policy did with the findings, what
``--policy strict`` would do, and the severity its colour comes from."""

from __future__ import annotations

from pathlib import Path

from rwgate.contract.models import Citation, SourceInfo
from rwgate.contract.vocab import STATUSES, severity
from rwgate.core import CheckResult
from rwgate.render.html import breakable, code_spans, render_html
from rwgate.render.markdown import render_markdown
from rwgate.render.report import describe_source, headline, render_text
from rwgate.settings.policy import Policy


def _result(*pairs: tuple[str, str], policy: Policy | None = None) -> CheckResult:
    citations = [
        Citation(key=f"k{i}", doi=f"10.1/{i}", status=status, action=action)  # type: ignore[arg-type]
        for i, (status, action) in enumerate(pairs)
    ]
    return CheckResult(citations=citations, policy=policy or Policy(), sources=[])


def test_a_passed_gate_with_retracted_works_says_strict_would_fail() -> None:
    result = _result(
        ("retracted", "annotate"),
        ("retracted", "annotate"),
        ("expression_of_concern", "annotate"),
        ("corrected", "ignore"),
        ("clean", "ignore"),
    )
    said = headline(result, 0)
    assert said.text == (
        "3 works annotated: 2 retracted, 1 expression of concern — the gate passed under the "
        "default policy; --policy strict would fail"
    )
    assert said.severity == "retracted"


def test_a_clean_run_is_green_and_strict_would_pass_too() -> None:
    said = headline(_result(("clean", "ignore"), ("clean", "ignore")), 0)
    assert said.text == (
        "2 works cited, none flagged — the gate passed under the default policy; "
        "--policy strict would pass too"
    )
    assert said.severity == "clean"


def test_a_failed_gate_lists_failures_first_and_is_a_failure() -> None:
    result = _result(
        ("no_doi", "warn"),
        ("withdrawn", "fail"),
        ("corrected", "annotate"),
        policy=Policy(preset="strict"),
    )
    said = headline(result, 1)
    assert said.text == (
        "1 work failed the policy: 1 withdrawn; 1 work annotated: 1 corrected; "
        "1 work with a warning: 1 no DOI — the gate failed under the strict policy"
    )
    assert said.severity is None


def test_an_unreadable_input_and_a_correction_only() -> None:
    assert headline(_result(), 2).text.endswith("the gate failed: an input could not be read")
    corrected = headline(_result(("corrected", "ignore")), 0)
    assert corrected.severity == "correction" and "none flagged" in corrected.text


def test_severity_keeps_retracted_apart_from_concern_correction_unverified() -> None:
    assert {severity(s) for s in ("retracted", "withdrawn", "removed", "replaced")} == {"retracted"}
    assert severity("expression_of_concern") == "concern"
    assert severity("corrected") == "correction"
    assert {severity(s) for s in ("unverified", "no_doi", "missing_entry")} == {"unverified"}
    assert all(severity(s) for s in STATUSES)


def test_every_report_starts_with_the_headline(tmp_path: Path) -> None:
    result = _result(("retracted", "annotate"))
    line = headline(result, 0).text
    assert render_text(result).splitlines()[0] == f"rwgate: {line}"
    assert render_markdown(result).splitlines()[0].startswith("## :red_circle: rwgate: 1 work ")
    page = render_html(result, root=tmp_path)
    assert 'class="sev-retracted" id="verdict">1 work annotated: 1 retracted' in page
    assert "<code>--policy strict</code> would fail</h1>" in page


def test_the_page_shows_code_not_backticks_and_wraps_at_slashes() -> None:
    assert str(code_spans("run `rwgate data update` <now>")) == (
        "run <code>rwgate data update</code> &lt;now&gt;"
    )
    assert str(breakable("examples/refs.bib:22")) == "examples/<wbr>refs.bib:22"
    assert str(breakable("<a>/b")) == "&lt;a&gt;/<wbr>b"


def test_sources_in_plain_words() -> None:
    offline = SourceInfo(
        name="crossref", url="https://api.crossref.org", note="offline: cache only"
    )
    assert describe_source(offline) == (
        "Crossref (https://api.crossref.org): not asked (offline); only answers already in its "
        "cache count"
    )
    snap = SourceInfo(
        name="snapshot",
        path="/s.sqlite3",
        note="local Retraction Watch snapshot: 3 notices from 1 import(s)",
    )
    assert (
        describe_source(snap) == "Retraction Watch snapshot (/s.sqlite3): 3 notices from 1 imports"
    )


def test_against_a_lock_only_what_changed_could_fail_under_strict() -> None:
    result = _result(("retracted", "annotate"), ("clean", "ignore"))
    result.since = "rwgate.lock"  # nothing changed since the lock
    assert headline(result, 0).text.endswith("--policy strict would pass too")
    result.citations[0] = result.citations[0].model_copy(update={"change": "newly retracted"})
    assert headline(result, 0).text.endswith("--policy strict would fail")
