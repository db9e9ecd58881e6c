"""Issue 49: rw_check_doi/rw_check_dois read an arXiv id as ``rwgate check`` reads an entry's
``eprint`` (or arxiv.org ``url``); anything else stays a DOI as written."""

from __future__ import annotations

import pytest

from rwgate.frontends.mcp.tools import work_reference
from rwgate.identify.ids import read_ids


@pytest.mark.parametrize(
    ("written", "key", "doi"),
    [
        ("1706.03762", "arXiv:1706.03762", "10.48550/arxiv.1706.03762"),
        (" arXiv:1706.03762v2 ", "arXiv:1706.03762", "10.48550/arxiv.1706.03762"),
        ("hep-th/9901001", "arXiv:hep-th/9901001", "10.48550/arxiv.hep-th/9901001"),
        ("https://arxiv.org/abs/1706.03762v3", "arXiv:1706.03762", "10.48550/arxiv.1706.03762"),
        ("10.48550/arXiv.1706.03762", "10.48550/arxiv.1706.03762", "10.48550/arxiv.1706.03762"),
        ("https://doi.org/10.1038/nature12373", "10.1038/nature12373", "10.1038/nature12373"),
    ],
)
def test_an_arxiv_id_or_a_doi_names_the_work_check_would_ask_about(
    written: str, key: str, doi: str
) -> None:
    ref = work_reference(written, "rw_check_doi")
    assert ref.key == key
    assert read_ids(ref)[0].doi == doi


def test_anything_else_is_an_invalid_doi_never_dropped() -> None:
    ref = work_reference("not a work", "rw_check_dois[0]")
    assert (ref.doi, ref.raw_doi, ref.arxiv_id) == (None, "not a work", None)
