"""No input file makes a reader raise a traceback, run away in time or blow up in memory, and
every encoding a .bib is saved in is read (issue 13)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from rwgate.contract import doi
from rwgate.errors import InputError
from rwgate.readers import load_bibliography, parse_bibliography
from rwgate.readers.bibliographies.bibtex import parse_bib
from rwgate.readers.bibliographies.csl import parse_csl_json, parse_csl_yaml
from rwgate.readers.bibliographies.doilist import parse_doi_list
from rwgate.readers.builds.latexaux import parse_aux, parse_bcf

ENTRY = "@article{w, title={Ileal–lymphoid}, doi={10.1016/S0140-6736(97)11096-0}}\n"
BOMS = {
    "utf-8": b"\xef\xbb\xbf",
    "utf-16-le": b"\xff\xfe",
    "utf-16-be": b"\xfe\xff",
    "utf-32-le": b"\xff\xfe\x00\x00",
    "utf-32-be": b"\x00\x00\xfe\xff",
}


@pytest.mark.parametrize("encoding", sorted(BOMS))
@pytest.mark.parametrize("with_bom", [True, False])
def test_every_unicode_encoding_is_read(tmp_path: Path, encoding: str, with_bom: bool) -> None:
    path = tmp_path / "refs.bib"
    path.write_bytes((BOMS[encoding] if with_bom else b"") + ENTRY.encode(encoding))
    result = load_bibliography(path)
    assert [(r.key, r.doi) for r in result.references] == [("w", "10.1016/s0140-6736(97)11096-0")]
    assert result.references[0].title == "Ileal–lymphoid"


def test_undecodable_utf16_is_one_line_naming_file_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    path.write_bytes(b"\xff\xfe" + "@article{a,".encode("utf-16-le") + b"\x00\xd8")
    with pytest.raises(InputError, match=r"refs\.bib: not valid UTF-16-LE at byte 24$"):
        load_bibliography(path)


@pytest.mark.parametrize(
    ("text", "reader"),
    [
        ("[" * 5000 + "]" * 5000, parse_csl_json),
        ("references:\n" + "- " * 3000 + "x\n", parse_csl_yaml),
        ("references:\n- id: a\n  title: \x00bad\x07\n", parse_csl_yaml),
        (
            "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
            "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
            "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
            "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nreferences: [*g]\n",
            parse_csl_yaml,
        ),
    ],
    ids=["deep-json", "deep-yaml", "nul-in-yaml", "alias-bomb"],
)
def test_hostile_csl_is_a_one_line_error(text: str, reader) -> None:  # type: ignore[no-untyped-def]
    start = time.process_time()
    with pytest.raises(InputError) as info:
        reader(text, "refs")
    assert "\n" not in str(info.value) and str(info.value).startswith("refs")
    assert time.process_time() - start < 5


def test_text_given_inline_is_bounded_too() -> None:
    with pytest.raises(InputError):
        parse_bibliography("[" * 5000 + "]" * 5000)


def test_bcf_with_an_unknown_encoding_and_a_deep_aux_chain(tmp_path: Path) -> None:
    bcf = tmp_path / "p.bcf"
    bcf.write_text('<?xml version="1.0" encoding="x-no-such"?><controlfile/>', encoding="utf-8")
    with pytest.raises(InputError, match="malformed biblatex control file"):
        parse_bcf(bcf)
    for i in range(200):
        (tmp_path / f"c{i}.aux").write_text(f"\\@input{{c{i + 1}.aux}}\n\\citation{{k{i}}}\n")
    with pytest.raises(InputError, match="nested more than"):
        parse_aux(tmp_path / "c0.aux")


@pytest.mark.parametrize(
    "run",
    [
        lambda: doi.try_normalize("10.1000/x" + ")" * 200_000),
        lambda: doi.find_in_text("see 10.1000/" + "a" * 140_000 + " 10.1000/" + "b" * 140_000),
        lambda: parse_doi_list("10.1000/x" + " " * 200_000 + "y\n", "t"),
        lambda: parse_csl_json(json.dumps([{"id": "a", "title": "<i" * 300_000}]), "t"),
        lambda: parse_bib("@misc{a, note={" + "10.1000/x " * 100_000 + "}}", "t"),
        lambda: parse_bib(
            "@string{a0={xx}}"
            + "".join(f"@string{{a{i + 1}=a{i}#a{i}}}" for i in range(40))
            + "@misc{k, doi=a40}",
            "t",
        ),
    ],
    ids=["trim-tail", "doi-in-text", "doi-list-space", "csl-tags", "bib-1mb-field", "string-bomb"],
)
def test_no_input_makes_a_reader_slow(run) -> None:  # type: ignore[no-untyped-def]
    start = time.process_time()
    run()
    assert time.process_time() - start < 5


def test_100000_citations_in_an_aux_file(tmp_path: Path) -> None:
    aux = tmp_path / "p.aux"
    aux.write_text("".join(f"\\citation{{k{i}}}\n" for i in range(100_000)) + "\\bibdata{r}\n")
    start = time.process_time()
    assert len(parse_aux(aux).keys) == 100_000
    assert time.process_time() - start < 5
