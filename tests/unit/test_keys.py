"""Cited ids as filters rename them (rwgate.readers.keys)."""

from __future__ import annotations

import pytest

from rwgate.readers.keys import is_cross_reference, resolve_key

KEYS = {"wakefield1998", "fig-survey2020", "a--b"}


@pytest.mark.parametrize(
    ("cited", "key"),
    [
        ("wakefield1998", "wakefield1998"),
        ("wakefield1998--1", "wakefield1998"),  # section-bibliographies, numbered sections
        ("wakefield1998--2.3", "wakefield1998"),
        ("wakefield1998--" + "0123456789abcdef" * 2 + "01234567", "wakefield1998"),  # sha1
        ("cites:wakefield1998", "wakefield1998"),  # pandoc-ext/cito
        ("usesMethodIn:wakefield1998--4", "wakefield1998"),
        ("fig-survey2020", "fig-survey2020"),  # a key of that shape is a citation
        ("a--b", "a--b"),
        ("wakefield1998--x", None),
        ("nosuchprefix:wakefield1998", None),
        ("wakefield", None),
    ],
)
def test_resolve_key(cited: str, key: str | None) -> None:
    assert resolve_key(cited, KEYS) == key


@pytest.mark.parametrize(
    ("cited", "xref"),
    [("fig-plot", True), ("tbl-1", True), ("exr-a", True), ("sec:intro", True), ("eq:e", True),
     ("figure-x", False), ("smith2020", False), ("fig-", False), ("thm:x", False)],
)  # fmt: skip
def test_cross_references(cited: str, xref: bool) -> None:
    assert is_cross_reference(cited) is xref


@pytest.mark.parametrize(
    ("cited", "named"),
    [("doi:10.7554/eLife.32822", ("doi", "10.7554/eLife.32822")),
     ("pubmed:30718888", ("pmid", "30718888")), ("PMID:1", ("pmid", "1")),
     ("pmc:PMC6103790", ("pmcid", "PMC6103790")), ("arxiv:1706.03762", ("arxiv", "1706.03762")),
     ("url:https://x.org/a", ("url", "https://x.org/a")), ("doi:", None), ("smith2020", None)],
)  # fmt: skip
def test_manubot_identifier_keys(cited: str, named: tuple[str, str] | None) -> None:
    from rwgate.readers.keys import identifier_key

    assert identifier_key(cited) == named
