"""The plain DOI-list reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from rwgate.errors import UnknownFormat
from rwgate.readers import ReaderError, load_bibliography
from rwgate.readers.bibliographies.registry import by_name

read_doi_list = by_name("doi-list").read

FIXTURES = Path(__file__).parents[1] / "fixtures" / "bib"


def test_each_doi_line_becomes_a_reference_keyed_as_written() -> None:
    path = FIXTURES / "dois.txt"
    result = read_doi_list(path)
    assert result.problems == []
    lines = path.read_text(encoding="utf-8").splitlines()
    got = [(r.key, r.doi, r.raw_doi, r.location.line) for r in result.references]
    assert got == [
        ("10.1016/S0140-6736(97)11096-0", "10.1016/s0140-6736(97)11096-0", None, 2),
        ("https://doi.org/10.1126/science.1256151", "10.1126/science.1256151", None, 3),
        ("doi:10.1126/science.aac6638", "10.1126/science.aac6638", None, 5),
        ("http://dx.doi.org/10.1002/14651858.CD009522", "10.1002/14651858.cd009522", None, 6),
        ("10.1038/nature12373.", "10.1038/nature12373", None, 7),
        ("not-a-doi", None, "not-a-doi", 8),
        (
            "10.1002/(SICI)1097-4636(199812)43:4<431::AID-JBM11>3.0.CO;2-Y",
            "10.1002/(sici)1097-4636(199812)43:4<431::aid-jbm11>3.0.co;2-y",
            None,
            9,
        ),
    ]
    for ref in result.references:
        assert ref.key in lines[ref.location.line - 1]
        assert ref.location.file == str(path)


def test_hash_inside_a_sici_doi_is_not_a_comment(tmp_path: Path) -> None:
    path = tmp_path / "list.txt"
    path.write_text(
        "  # indented comment\n10.1002/(SICI)1097-4636(199812)43:4<431::AID-JBM11>3.0.CO;2-#\n"
        "\t10.1038/171737a0\t# trailing comment\n",
        encoding="utf-8",
    )
    refs = read_doi_list(path).references
    assert [(r.doi, r.location.line) for r in refs] == [
        ("10.1002/(sici)1097-4636(199812)43:4<431::aid-jbm11>3.0.co;2-#", 2),
        ("10.1038/171737a0", 3),
    ]
    assert refs[1].key == "10.1038/171737a0"


def test_unknown_extension_is_an_error_and_txt_a_doi_list(tmp_path: Path) -> None:
    data = b"10.1038/171737a0\r\n\r\nhttps://doi.org/10.1038/NATURE12373\r\n"
    (tmp_path / "cited.lst").write_bytes(data)
    with pytest.raises(UnknownFormat, match=r"cited\.lst: no bibliography reader for '\.lst'"):
        load_bibliography(tmp_path / "cited.lst")
    path = tmp_path / "cited.txt"
    path.write_bytes(data)
    result = load_bibliography(path)
    assert [(r.doi, r.location.line) for r in result.references] == [
        ("10.1038/171737a0", 1),
        ("10.1038/nature12373", 3),
    ]


def test_missing_list_raises(tmp_path: Path) -> None:
    with pytest.raises(ReaderError, match=r"gone\.txt"):
        read_doi_list(tmp_path / "gone.txt")
