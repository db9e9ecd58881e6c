"""What a person reads (issue 33): one vocabulary (:mod:`rwgate.contract.vocab`) behind every front
end.

A history note fits the severity (a correction accuses no one), the summary counts what the policy
did (the annotated works are the FLAG lines and the notes in the paper), and no human sentence of
any report shows a snake_case status or notice type (machine fields keep them).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rwgate.contract.evidence import status_of_type
from rwgate.contract.models import Added, Citation, Location, Notice, SourceInfo
from rwgate.contract.vocab import (
    FLAGGED_STATUSES,
    NOTICE_LABELS,
    STATUSES,
    history_note,
    notice_label,
    status_label,
)
from rwgate.core import CheckResult
from rwgate.frontends.kit import describe, offline_hint, should_annotate
from rwgate.render.html import render_html
from rwgate.render.markdown import render_markdown
from rwgate.render.report import added_text, render_text, summary_line
from rwgate.render.sarif import render_junit, render_sarif
from rwgate.settings.config import Settings
from rwgate.settings.policy import Policy
from rwgate.sources.cache import OFFLINE

SNAKE = sorted({s for s in STATUSES if "_" in s} | {t for t in NOTICE_LABELS if "_" in t})
_SNAKE = re.compile("|".join(re.escape(s) for s in SNAKE))
# A notice type for each flagged status (the deciding notice of a work of that status).
NOTICE_OF = {
    "retracted": "retraction",
    "withdrawn": "withdrawal",
    "removed": "removal",
    "partially_retracted": "partial_retraction",
    "replaced": "retract_and_replace",
    "expression_of_concern": "expression_of_concern",
    "unknown_notice": "editorial_flag",
    "corrected": "correction",
    "amended": "new_version",
    "reinstated": "reinstatement",
}


def _cite(status: str, action: str = "annotate", n: int = 0) -> Citation:
    notices = []
    if status in NOTICE_OF:
        notices = [
            Notice(type="correction", doi="10.1/c", date=dt.date(2001, 1, 1)),
            Notice(type=NOTICE_OF[status], doi=f"10.1/n{n}", date=dt.date(2015, 6, 23)),
        ]
    return Citation(
        key=f"{status.replace('_', '-')}{n}",  # a key is no sentence: no snake_case in it
        doi=f"10.1/w{n}",
        status=status,  # type: ignore[arg-type]
        action=action,  # type: ignore[arg-type]
        notices=notices,
        location=Location(file="refs.bib", line=n + 1),
        added=Added(date=dt.date(2020, 1, 1), commit="abcdef123456", after_notice=True)
        if notices
        else None,
    )


def _every_status(policy: str = "strict") -> CheckResult:
    p = Policy(preset=policy)  # type: ignore[arg-type]
    citations = [_cite(s, p.action(s), i) for i, s in enumerate(STATUSES)]
    return CheckResult(citations=citations, policy=p, sources=[])


def test_every_status_and_notice_type_has_words() -> None:
    for status in STATUSES:
        assert "_" not in status_label(status)
    for notice_type in [*NOTICE_LABELS, "partial_retraction", "new_edition"]:
        assert "_" not in notice_label(notice_type)
    # Every type the evidence rules know is labelled (none falls back to underscores-as-spaces).
    assert all(status_of_type(t) is None or t in NOTICE_LABELS for t in NOTICE_LABELS)
    assert status_label("replaced") == "retracted and replaced"
    assert notice_label("retract_and_replace") == "retraction and replacement"


@pytest.mark.parametrize(
    ("status", "after", "said"),
    [
        ("retracted", True, "after the retraction of 2015-06-23: likely cited in error"),
        ("retracted", False, "before the retraction of 2015-06-23: needs an update"),
        ("withdrawn", True, "after the withdrawal of 2015-06-23: likely cited in error"),
        ("removed", True, "after the removal of 2015-06-23: likely cited in error"),
        (
            "expression_of_concern",
            True,
            "after the expression of concern of 2015-06-23: check that the claim still stands",
        ),
        (
            "replaced",
            True,
            "after the retraction and replacement of 2015-06-23: cite the replacement",
        ),
        ("corrected", True, "after the correction of 2015-06-23"),
        ("corrected", False, "before the correction of 2015-06-23"),
        ("amended", True, "after the new version of 2015-06-23"),
    ],
)
def test_history_note_fits_the_severity(status: str, after: bool, said: str) -> None:
    assert history_note(status, NOTICE_OF[status], "2015-06-23", after) == said


def test_a_corrected_work_is_not_called_an_error() -> None:
    text = added_text(_cite("corrected", "ignore"))
    assert text == (
        "added to the bibliography 2020-01-01, commit abcdef123456, after the correction of "
        "2015-06-23"
    )


def test_summary_counts_what_the_policy_did() -> None:
    """The demo's shape: six works the default policy annotates, one corrected work it ignores,
    three clean ones. "6 annotated" is the FLAG lines; the correction is counted apart."""
    statuses = [
        "retracted",
        "retracted",
        "retracted",
        "withdrawn",
        "expression_of_concern",
        "replaced",
        "corrected",
    ]
    policy = Policy()
    citations = [_cite(s, policy.action(s), i) for i, s in enumerate(statuses)]
    citations += [_cite("clean", "ignore", 10 + i) for i in range(3)]
    result = CheckResult(citations=citations, policy=policy, sources=[])
    line = summary_line(result)
    assert line == (
        "10 cited, 10 checked: 0 failed, 6 annotated, 0 warned, 0 unverified, "
        "1 with a correction (no action under this policy); policy default"
    )
    text = render_text(result, verbose=True)
    assert text.count("  FLAG  ") == 6 == sum(should_annotate(c) for c in citations)
    assert f"rwgate: {line}\n" in text
    assert "likely cited in error" in text and text.count("likely cited in error") == 4
    corrected = next(x for x in text.splitlines() if x.startswith("  ok    corrected6"))
    assert corrected == "  ok    corrected6: Corrected 2015; notice doi:10.1/n6"


class _Visible(HTMLParser):
    """The text a reader of the page sees (no head, no style, no attributes)."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self._hidden += tag in ("head", "style", "title")

    def handle_endtag(self, tag: str) -> None:
        self._hidden -= tag in ("head", "style", "title")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.text.append(data)


def _human_texts(result: CheckResult) -> dict[str, str]:
    """Every human sentence of every report format (machine fields left out)."""
    sarif = json.loads(render_sarif(result, root=Path.cwd()))["runs"][0]
    junit = ET.fromstring(render_junit(result).encode())
    page = _Visible()
    page.feed(render_html(result))
    return {
        "text": render_text(result, verbose=True),
        "markdown": render_markdown(result),
        "html": " ".join(page.text),
        "sarif": "\n".join(
            [r["message"]["text"] for r in sarif["results"]]
            + [r["shortDescription"]["text"] for r in sarif["tool"]["driver"]["rules"]]
        ),
        "junit": "\n".join(
            [e.get("message") or "" for e in junit.iter("failure")]
            + [e.text or "" for e in junit.iter() if e.tag in ("failure", "system-out")]
        ),
        "describe": "\n".join(describe(c, detail=True) for c in result.citations),
    }


@pytest.mark.parametrize("policy", ["strict", "default"])
def test_no_human_sentence_has_a_snake_case_status_or_notice_type(policy: str) -> None:
    result = _every_status(policy)
    result.warnings.append("a warning")
    for name, text in _human_texts(result).items():
        found = _SNAKE.findall(text)
        # An unrecognised notice type is shown verbatim, as the annotation quotes it.
        assert found == [], (name, found, text)


def test_describe_is_the_annotation_in_words() -> None:
    """The line rw-filter and the LaTeX hooks print for a work."""
    assert describe(_cite("expression_of_concern")) == (
        "expression-of-concern0: expression of concern 2015, notice doi:10.1/n0"
    )
    assert (
        describe(_cite("replaced")) == "replaced0: retracted and replaced 2015, notice doi:10.1/n0"
    )
    assert describe(_cite("unknown_notice")).startswith(
        "unknown-notice0: notice of unrecognised type 'editorial_flag' 2015"
    )


def _offline_result(n: int) -> CheckResult:
    citations = [
        Citation(key=f"k{i}", doi=f"10.1/{i}", status="unverified", action="warn", reason=OFFLINE)
        for i in range(n)
    ]
    crossref = SourceInfo(name="crossref", note="offline: cache only")
    return CheckResult(citations=citations, policy=Policy(), sources=[crossref])


def test_offline_without_a_snapshot_says_the_next_step_once(tmp_path: Path) -> None:
    missing = tmp_path / "none.sqlite3"
    result = _offline_result(10)
    offline_hint(result, Settings(offline=True, snapshot=missing))
    assert result.warnings == [
        f"offline, and no Retraction Watch snapshot at {missing}: 10 works not in the cache "
        "could not be checked; `rwgate data update` downloads the registry once, then checks "
        "run offline"
    ]
    text = render_text(result)
    assert text.count("rwgate data update") == 1
    # Online (sources failed: another story), or with a snapshot, nothing is added.
    online = _offline_result(1)
    offline_hint(online, Settings(offline=False, snapshot=missing))
    assert online.warnings == []
    present = tmp_path / "s.sqlite3"
    present.write_bytes(b"")
    with_file = _offline_result(1)
    offline_hint(with_file, Settings(offline=True, snapshot=present))
    assert with_file.warnings == []


def test_flagged_statuses_cover_the_history_cases() -> None:
    for status in FLAGGED_STATUSES:
        note = history_note(status, NOTICE_OF[status], "2015-06-23", True)
        if status in ("corrected", "amended", "reinstated"):
            assert ":" not in note  # a fact, no advice and no blame
        else:
            assert ": " in note
