"""Evidence rules of DESIGN.md on real Crossref records (tests/fixtures/crossref)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from rwgate.contract.evidence import (
    lookup_from_crossref,
    merge_notices,
    normalize_type,
    status_from_notices,
)
from rwgate.contract.models import Notice

FIX = Path(__file__).parents[1] / "fixtures" / "crossref"


def record(name: str) -> dict:
    return json.loads((FIX / name).read_text(encoding="utf-8"))["message"]


def n(type_: str, date: str | None, doi: str | None = None, **kw) -> Notice:
    return Notice(type=type_, doi=doi, date=dt.date.fromisoformat(date) if date else None, **kw)


def test_wakefield_two_notices_in_date_order() -> None:
    lk = lookup_from_crossref(record("wakefield-1998-lancet.json"))
    assert lk.doi == "10.1016/s0140-6736(97)11096-0"
    assert [(x.type, x.date.isoformat(), x.doi, x.record_id) for x in lk.notices] == [
        ("correction", "2004-03-06", "10.1016/s0140-6736(04)15715-2", "17269"),
        ("retraction", "2010-02-06", "10.1016/s0140-6736(10)60175-4", "4036"),
    ]
    assert status_from_notices(lk.notices) == "retracted"
    assert lk.journal == "The Lancet" and lk.year == 1998


def test_retraction_notice_is_not_a_retracted_work() -> None:
    lk = lookup_from_crossref(record("lacour-2014-science-retraction-notice.json"))
    assert lk.notices == []
    assert lk.notice_for == ["10.1126/science.1256151"]
    assert status_from_notices(lk.notices) == "clean"


def test_lacour_retracted_and_cochrane_withdrawn() -> None:
    assert status_from_notices(
        lookup_from_crossref(record("lacour-2014-science.json")).notices
    ) == ("retracted")
    cochrane = lookup_from_crossref(record("withdrawal-cochrane.json"))
    assert status_from_notices(cochrane.notices) == "withdrawn"
    assert cochrane.notices[0].source == ["crossref:publisher"]


@pytest.mark.parametrize("name", ["clean-2013-nature.json", "clean-watson-crick-1953.json"])
def test_clean_controls(name: str) -> None:
    lk = lookup_from_crossref(record(name))
    assert lk.notices == [] and status_from_notices(lk.notices) == "clean"


def test_update_to_counts_only_for_own_doi() -> None:
    items = json.loads((FIX / "worklist-filter-updates.json").read_text())["message"]["items"]
    retraction_notice = next(i for i in items if i["DOI"] == "10.1016/s0140-6736(20)31174-0")
    lk = lookup_from_crossref(retraction_notice)
    # Its update-to entries point at another work: it is not itself retracted by them.
    assert lk.notices == [] and "10.1016/s0140-6736(20)31180-6" in lk.notice_for
    own = dict(
        retraction_notice,
        **{
            "update-to": [
                dict(retraction_notice["update-to"][0], DOI="10.1016/S0140-6736(20)31174-0")
            ]
        },
    )
    assert status_from_notices(lookup_from_crossref(own).notices) == "retracted"


def test_same_notice_from_two_sources_is_one_notice() -> None:
    a = n("correction", "2020-05-30", "10.1/x", source=["crossref:retraction-watch"], record_id="1")
    b = n("erratum", "2020-05-30", "10.1/x", source=["crossref:publisher"])
    c = n("correction", "2020-05-30", "10.1/x", source=["retraction-watch-csv"], record_id="1")
    merged = merge_notices([a, b, c])
    assert len(merged) == 1
    assert merged[0].source == [
        "crossref:retraction-watch",
        "crossref:publisher",
        "retraction-watch-csv",
    ]
    assert merged[0].record_id == "1"


def test_type_spellings() -> None:
    assert normalize_type("Expression of concern") == "expression_of_concern"
    assert normalize_type("expression-of-concern") == "expression_of_concern"
    assert normalize_type("withdrawn") == "withdrawal"
    assert normalize_type("Partial Retraction") == "partial_retraction"
    assert normalize_type("Retraction-and-Replacement") == "retract_and_replace"


def test_unknown_type_kept_and_seen() -> None:
    notices = [n("notice_of_doubt", "2020-01-01")]
    assert merge_notices(notices)[0].type == "notice_of_doubt"
    assert status_from_notices(notices) == "unknown_notice"  # never silent


def test_retract_and_replace_and_a_lifted_concern() -> None:
    assert status_from_notices([n("retract_and_replace", "2023-02-21")]) == "replaced"
    concern = n("expression_of_concern", "2020-01-01")
    lifted = n("correction", "2021-01-01").model_copy(
        update={"reasons": ["Upgrade/Update of Prior Notice(s)"]}
    )
    assert status_from_notices([concern, lifted]) == "corrected"  # the later notice decides
    plain = n("correction", "2021-01-01")
    assert status_from_notices([concern, plain]) == "expression_of_concern"


@pytest.mark.parametrize(
    ("notices", "status"),
    [
        ([n("correction", "2001-01-01"), n("retraction", "2002-01-01")], "retracted"),
        ([n("retraction", "2002-01-01"), n("reinstatement", "2003-01-01")], "reinstated"),
        ([n("reinstatement", "2023-02-21")], "reinstated"),
        (
            [
                n("retraction", "2002-01-01"),
                n("reinstatement", "2003-01-01"),
                n("retraction", "2005-01-01"),
            ],
            "retracted",
        ),
        (
            [
                n("correction", "2001-01-01"),
                n("correction", "2002-01-01"),
                n("correction", "2003-01-01"),
                n("expression_of_concern", "2004-01-01"),
            ],
            "expression_of_concern",
        ),
        ([n("expression_of_concern", "2001-01-01"), n("withdrawal", "2002-01-01")], "withdrawn"),
        ([n("addendum", "2001-01-01"), n("erratum", "2000-01-01")], "corrected"),
        ([n("new_version", None)], "amended"),
        ([n("partial_retraction", "2001-01-01"), n("removal", "2000-01-01")], "removed"),
        ([], "clean"),
        # A reinstatement lifts only what is dated strictly before it, whatever the type's name.
        ([n("retraction", "2010-01-01"), n("reinstatement", "2010-01-01")], "retracted"),
        (
            [n("expression_of_concern", "2010-01-01"), n("reinstatement", "2010-01-01")],
            "expression_of_concern",
        ),
        # An undated notice cannot be shown to precede the reinstatement: it stays in force.
        ([n("retraction", None), n("reinstatement", "2012-01-01")], "retracted"),
        ([n("expression_of_concern", None), n("reinstatement", None)], "expression_of_concern"),
    ],
)
def test_status_rules(notices: list[Notice], status: str) -> None:
    assert status_from_notices(notices) == status
