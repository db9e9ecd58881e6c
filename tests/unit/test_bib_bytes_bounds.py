"""Issue 28's bounds: finding a DOI in free text and TeX-decoding a title are linear. Each input is
1 MB; the bound is CPU time (``time.process_time``), far above what the linear code takes (well
under a second) and far below what the quadratic code took (50 s for 140 kB)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest

from rwgate.contract.doi import find_in_text
from rwgate.readers.bibliographies.bibtex import parse_bib
from rwgate.readers.bibliographies.csl import parse_csl_json

MB = 1024 * 1024
BOUND = 5.0  # CPU seconds


def _cpu(work: Callable[[], object]) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


@pytest.mark.parametrize(
    "text",
    [
        "10.1234" * (MB // 7),  # a "10." at every 7th character, no "/"
        "10.1234/</" * (MB // 10),  # a DOI start before every HTML closing tag
        ("10.1234/" + ")" * 990 + " ") * (MB // 1000),  # suffixes trimmed to nothing
        "1/" * (MB // 2),
    ],
)
def test_doi_search_in_free_text_is_linear(text: str) -> None:
    assert _cpu(lambda: find_in_text(text)) < BOUND
    assert find_in_text(text + " doi:10.1126/science.1256151.") == "10.1126/science.1256151"


def test_a_bib_note_and_a_csl_url_of_a_megabyte_are_read_in_linear_time() -> None:
    note = "10.1234" * (MB // 7)
    bib = f"@misc{{n, note={{{note}}}}}"
    csl = json.dumps([{"id": "n", "URL": "https://example.org/" + note}])
    assert _cpu(lambda: parse_bib(bib, "t.bib")) < BOUND
    assert _cpu(lambda: parse_csl_json(csl, "t.json")) < BOUND


@pytest.mark.parametrize("title", ["\\" * MB, "\\\\\\x" * (MB // 4), "{\\'e}t\\'e " * (MB // 10)])
def test_tex_decoding_a_megabyte_title_is_linear(title: str) -> None:
    bib = f"@misc{{t, title={{{title}}}, author={{{title}}}}}"
    assert _cpu(lambda: parse_bib(bib, "t.bib")) < BOUND
