"""The supported pandoc range: versions read as pandoc prints them, the floor's one line."""

from __future__ import annotations

import pytest

from rwgate.readers.pandoc_exe import FLOOR, PandocTooOld, check_filter_env, parse, shown


def test_versions_are_read_as_pandoc_prints_them() -> None:
    assert parse("pandoc 2.17.1.1") == (2, 17, 1, 1)
    assert parse("3.9") == (3, 9)
    assert parse("pandoc.exe 3.1.12.3\nFeatures: +server") == (3, 1, 12, 3)
    assert parse("") is None
    assert FLOOR <= (2, 17, 1, 1) and FLOOR > (2, 16, 2) and FLOOR > (2, 9)
    assert shown(FLOOR) == "2.17"


def test_rw_filter_refuses_a_pandoc_below_the_floor_in_one_line() -> None:
    with pytest.raises(PandocTooOld) as raised:
        check_filter_env({"PANDOC_VERSION": "2.16.2"})
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("pandoc 2.16.2 is older than 2.17, the oldest rw-filter supports")
    assert "pypandoc-binary" in message


@pytest.mark.parametrize("version", ["2.17.1.1", "2.19.2", "3.9", "", "not a version"])
def test_rw_filter_runs_at_and_above_the_floor(version: str) -> None:
    check_filter_env({"PANDOC_VERSION": version} if version else {})
