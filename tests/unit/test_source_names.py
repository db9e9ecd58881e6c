"""Issue 49: the text report names sources as they call themselves (their ``title``), not by the
lower-case ids of the JSON report."""

from __future__ import annotations

import datetime as dt

from rwgate.contract.models import Citation, Notice, SourceInfo
from rwgate.render.provenance import describe_source, display_name
from rwgate.render.report import render_text
from rwgate.settings.policy import Policy
from rwgate.sources import SOURCES
from rwgate.verdicts.result import CheckResult


def test_every_integrity_source_is_shown_by_its_title() -> None:
    for source in SOURCES:
        assert display_name(source.name) == source.title
    assert display_name("arxiv") == "arXiv"
    assert display_name("biorxiv") == "bioRxiv/medRxiv"
    assert display_name("openalex") == "OpenAlex"
    assert display_name("retraction-watch-csv") == "Retraction Watch"
    assert display_name("crossref:retraction-watch") == "Crossref (Retraction Watch)"
    assert display_name("crossref:publisher") == "Crossref (publisher)"
    assert display_name("someone-new") == "someone-new"  # never guessed


def test_the_text_report_names_arxiv_and_its_notices() -> None:
    arxiv = SourceInfo(name="arxiv", url="https://export.arxiv.org/api/query", state="answered")
    assert describe_source(arxiv).startswith("arXiv (https://export.arxiv.org/api/query): ")
    notice = Notice(
        type="withdrawal", date=dt.date(2021, 5, 11), source=["arxiv"], record_id="arXiv:1v2"
    )
    cited = Citation(key="gone", status="withdrawn", action="annotate", notices=[notice])
    text = render_text(CheckResult(citations=[cited], policy=Policy(), sources=[arxiv]))
    assert "  arXiv (https://export.arxiv.org/api/query): asked and answered" in text
    assert "2021-05-11 withdrawal arXiv:1v2 [arXiv]" in text
    assert "[arxiv]" not in text
