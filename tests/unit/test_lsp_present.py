"""What a hover says, and when a replacement can be cited."""

from __future__ import annotations

import datetime as dt

from rwgate.contract.models import Citation, Notice, SourceInfo
from rwgate.frontends.lsp.protocol import age, hover_text, replacement_doi


def _replaced(*notices: Notice) -> Citation:
    return Citation(
        key="k", doi="10.1/old", status="replaced", action="annotate", notices=list(notices)
    )


def test_the_replacement_is_cited_only_when_a_notice_names_it() -> None:
    notice = Notice(type="retract_and_replace", doi="10.1/notice")
    assert replacement_doi(_replaced(notice)) is None
    new = Notice(type="new_version", doi="10.1/new")
    assert replacement_doi(_replaced(notice, new)) == "10.1/new"
    retracted = Citation(key="k", doi="10.1/old", status="retracted", action="fail", notices=[new])
    assert replacement_doi(retracted) is None


def test_hover_escapes_outside_text_and_says_the_sources_age() -> None:
    notice = Notice(type="retraction", doi="10.1/n", date=dt.date(2010, 2, 6), source=["crossref"])
    citation = Citation(
        key="k",
        status="retracted",
        action="fail",
        title="[click](javascript:x) <b>",
        notices=[notice],
        basis=["snapshot"],
    )
    when = dt.datetime.now(dt.UTC) - dt.timedelta(days=3)
    text = hover_text(citation, "Retracted 2010", [SourceInfo(name="snapshot", as_of=when)])
    assert "the build fails" in text and "2010-02-06" in text
    assert "<b>" not in text and "](javascript" not in text
    assert "snapshot, as of" in text and "(3 days ago)" in text
    assert age(None) == "age unknown"
