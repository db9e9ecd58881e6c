"""Fuzz every reader through its file entry point: no traceback, no run over 10 s (issue 13).

Inputs are built from the characters that matter to each syntax (braces, quotes, ``@``, ``#``,
``%``, commas, NUL and control characters, non-ASCII) and fragments of real syntax, written as
bytes in several encodings. Only :class:`~rwgate.errors.InputError` (one line) may come out.
"""

from __future__ import annotations

import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rwgate.errors import InputError
from rwgate.readers import load_bibliography
from rwgate.readers.builds.latexaux import parse_aux, parse_bcf

FRAGMENTS = [
    "@article{",
    "@ misc(",
    "@string{m = ",
    "@comment{",
    "@preamble{",
    "doi = ",
    "crossref = {p}",
    "xdata = {x}",
    "}",
    "{",
    '"',
    " # ",
    ",",
    "=",
    "10.1016/S0140-6736(97)11096-0",
    "\n",
    "%",
    "- id: a\n",
    "references:\n",
    "&a ",
    "*a",
    "[",
    "]",
    '{"id": ',
    "TY  - JOUR\n",
    "\\citation{",
    "\\@input{x.aux}",
    "\\bibdata{",
    "<citekey>",
    "\x00",
    "\x1b",
    "\u202e",
    "é",
    "\ufeff",
]
pieces = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=40)
FIXTURE_OK = [HealthCheck.function_scoped_fixture]  # tmp_path is reused: each file is rewritten
ENCODINGS = ["utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "latin-1"]


def _write(tmp: Path, name: str, parts: list[str], encoding: str) -> Path:
    path = tmp / name
    path.write_bytes("".join(parts).encode(encoding, errors="replace"))
    return path


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    parts=pieces,
    encoding=st.sampled_from(ENCODINGS),
    suffix=st.sampled_from([".bib", ".json", ".yaml", ".txt"]),
)
def test_bibliography_readers(tmp_path: Path, parts: list[str], encoding: str, suffix: str) -> None:
    path = _write(tmp_path, f"refs{suffix}", parts, encoding)
    start = time.process_time()
    try:
        result = load_bibliography(path)
    except InputError as exc:
        assert "\n" not in str(exc)
    else:
        assert all("\n" not in str(p) for p in result.problems)
    assert time.process_time() - start < 10


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(parts=pieces)
def test_aux_and_bcf_readers(tmp_path: Path, parts: list[str]) -> None:
    aux = _write(tmp_path, "p.aux", parts, "utf-8")
    bcf = _write(tmp_path, "p.bcf", ["<?xml version='1.0'?><controlfile>", *parts], "utf-8")
    for read, path in ((parse_aux, aux), (parse_bcf, bcf)):
        start = time.process_time()
        try:
            read(path)
        except InputError as exc:
            assert "\n" not in str(exc)
        assert time.process_time() - start < 10
