"""Upstream control and bidi characters never reach a rendered format (issue 12)."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from rwgate.contract.models import Citation, Notice
from rwgate.core import CheckResult
from rwgate.render.annotate import annotate
from rwgate.render.latex import annotation_latex
from rwgate.render.report import render_text
from rwgate.render.sarif import render_junit, render_sarif
from rwgate.settings.policy import Policy

UNWANTED = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
HOSTILE = ["\x00", "\x1b[2J", "\x07", "\x85", "\u200f", "\u202e", "\u2066", "\u2028", "\x9b31m"]


@pytest.mark.parametrize("bad", HOSTILE)
def test_no_unwanted_character_in_any_rendering(bad: str) -> None:
    notice = Notice(
        type=f"retraction{bad}",
        doi=f"10.5555/n{bad}x",
        date=dt.date(2021, 5, 1),
        source=[f"crossref:{bad}"],
        label=f"Retraction{bad}",
    )
    citation = Citation(
        key=f"k{bad}",
        doi=f"10.5555/w{bad}",
        status="retracted",
        action="fail",
        notices=[notice],
        title=f"Title {bad} end",
        reason=f"why{bad}",
    )
    result = CheckResult(citations=[citation], policy=Policy(), sources=[])
    note = annotate(citation)
    rendered = {
        "annotation": note.text,
        "latex": annotation_latex(note),
        "text": render_text(result),
        "sarif": json.loads(render_sarif(result)),
        "junit": render_junit(result),
    }
    for name, value in rendered.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        assert not UNWANTED.search(text), (name, text)
