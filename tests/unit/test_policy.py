from __future__ import annotations

import datetime as dt

import pytest
from pydantic import ValidationError

from rwgate.settings.policy import AllowEntry, Policy, preset_actions


@pytest.mark.parametrize(
    ("preset", "status", "action"),
    [
        ("default", "retracted", "annotate"),
        ("strict", "retracted", "fail"),
        ("permissive", "retracted", "annotate"),
        ("default", "expression_of_concern", "annotate"),
        ("permissive", "expression_of_concern", "ignore"),
        ("default", "corrected", "ignore"),
        ("strict", "reinstated", "annotate"),
        ("default", "unverified", "warn"),
        ("strict", "invalid_doi", "fail"),
        ("permissive", "unverified", "ignore"),
        ("strict", "missing_entry", "fail"),
        ("default", "clean", "ignore"),
        ("default", "doi_mismatch", "warn"),
        ("strict", "doi_mismatch", "fail"),
        ("permissive", "doi_mismatch", "ignore"),
    ],
)
def test_design_table(preset: str, status: str, action: str) -> None:
    assert preset_actions(preset)[status] == action  # type: ignore[arg-type]


def test_overrides() -> None:
    p = Policy(preset="default", fail_on=["expression_of_concern"], ignore=["unknown_doi"])
    assert p.action("expression_of_concern") == "fail"
    assert p.action("unknown_doi") == "ignore"
    with pytest.raises(ValidationError):
        Policy(fail_on=["retracted"], ignore=["retracted"])
    with pytest.raises(ValidationError):
        Policy(fail_on=["retractd"])  # type: ignore[list-item]


def test_allow_list_never_fails_and_expires() -> None:
    p = Policy(
        preset="strict",
        allow=[
            AllowEntry(key="wakefield", reason="discussed in section 2"),
            AllowEntry(
                doi="https://doi.org/10.1126/SCIENCE.1256151", reason="x", until="2020-01-01"
            ),
        ],
    )
    action, entry, warning = p.decide("wakefield", None, "retracted")
    assert (action, entry is not None, warning) == ("annotate", True, None)
    action, entry, warning = p.decide(
        "lacour", "10.1126/science.1256151", "retracted", today=dt.date(2026, 1, 1)
    )
    assert action == "fail" and entry is None and "expired on 2020-01-01" in warning
    with pytest.raises(ValidationError):
        AllowEntry(reason="no target")


def test_expired_allow_entry_does_not_hide_one_in_force() -> None:
    p = Policy(
        preset="strict",
        allow=[
            AllowEntry(key="lacour", reason="old", until="2020-01-01"),
            AllowEntry(doi="10.1126/science.1256151", reason="discussed in section 3"),
        ],
    )
    action, entry, warning = p.decide(
        "lacour", "10.1126/science.1256151", "retracted", today=dt.date(2026, 1, 1)
    )
    assert action == "annotate"
    assert entry is not None and entry.reason == "discussed in section 3"
    assert warning is not None and "expired on 2020-01-01" in warning


def test_a_remembered_verdict_ends_with_the_first_allowance_in_force() -> None:
    import datetime as dt

    from rwgate.settings.policy import AllowEntry, Policy

    today = dt.date.today()
    entries = [
        AllowEntry(key="a", reason="discussed", until=today + dt.timedelta(days=3)),
        AllowEntry(key="b", reason="discussed", until=today),  # still in force today
        AllowEntry(key="c", reason="discussed", until=today - dt.timedelta(days=1)),  # over
        AllowEntry(key="d", reason="discussed"),  # no end
    ]
    tomorrow = dt.datetime.combine(today + dt.timedelta(days=1), dt.time()).timestamp()
    assert Policy(allow=entries).allow_ends() == tomorrow
    assert Policy(allow=entries[2:]).allow_ends() is None
