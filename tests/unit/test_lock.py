"""The lockfile's comparison rules (rwgate.verdicts.lock) and the Markdown escaping of the job
summary."""

from __future__ import annotations

import datetime as dt

import pytest

from rwgate.contract.models import Citation, Notice
from rwgate.render.safe import md_safe
from rwgate.verdicts.lock import change


def cite(status: str, *notices: str, action: str = "fail") -> Citation:
    return Citation(
        key="k",
        doi="10.1000/x",
        status=status,
        action=action,
        notices=[Notice(type="retraction", doi=d, date=dt.date(2020, 1, 1)) for d in notices],
    )


@pytest.mark.parametrize(
    ("now", "before", "said"),
    [
        (cite("retracted", "10.1/n"), None, "cited since the lock, already retracted"),
        (cite("clean", action="ignore"), None, None),
        (cite("unverified"), None, "cited since the lock, unverified"),
        (cite("unverified", action="warn"), None, None),
        (cite("retracted", "10.1/n"), {"status": "clean"}, "newly retracted (was clean)"),
        (
            cite("expression_of_concern"),
            {"status": "corrected"},
            "newly expression of concern (was corrected)",
        ),
        (cite("reinstated"), {"status": "retracted"}, "newly reinstated (was retracted)"),
        (
            cite("clean", action="ignore"),
            {"status": "retracted"},
            "no notice in force now (was retracted)",
        ),
        (
            cite("unverified"),
            {"status": "retracted"},
            "unverified now (was retracted): could not be checked again",
        ),
        (cite("retracted", "10.1/n"), {"status": "retracted", "notices": ["10.1/n"]}, None),
        # Fail closed: unjudged and failing is never unchanged, whatever the lock recorded.
        (
            cite("unverified"),
            {"status": "unverified"},
            "still unverified: not judged, so never unchanged",
        ),
        (
            cite("missing_entry"),
            {"status": "missing_entry"},
            "still missing entry: not judged, so never unchanged",
        ),
        (cite("unverified", action="warn"), {"status": "unverified"}, None),
        (
            cite("retracted", "10.1/n", "10.1/m"),
            {"status": "retracted", "notices": ["10.1/n"]},
            "new notice doi:10.1/m",
        ),
    ],
)
def test_change(now: Citation, before: dict | None, said: str | None) -> None:
    assert change(now, before) == said


def test_md_safe_leaves_no_markdown_or_html() -> None:
    hostile = "a|b <img src=x> [t](javascript:x) **b** `c` \u202eevil\n# h"
    safe = md_safe(hostile)
    assert "<" not in safe and "|" not in safe.replace("\\|", "")
    assert "](" not in safe.replace("\\]\\(", "") and "\u202e" not in safe and "\n" not in safe


def test_markdown_keys_are_code_spans_without_escapes() -> None:
    """Backslash escapes show inside a code span: `smith_2020` must not read `smith\\_2020`."""
    from rwgate.render.markdown import _code

    assert _code("smith_2020") == "`smith_2020`"
    assert _code("a|b`c") == md_safe("a|b`c")  # cannot be a code span in a table: escaped text
