"""CSL JSON / CSL YAML readers and pandoc-style inline references."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rwgate.readers import ReaderError, load_bibliography, parse_bibliography
from rwgate.readers.bibliographies.csl import references_from_csl_items
from rwgate.readers.bibliographies.registry import by_name

read_csl_json = by_name("csl-json").read
read_csl_yaml = by_name("csl-yaml").read

FIXTURES = Path(__file__).parents[1] / "fixtures" / "bib"
SICI = "10.1002/(SICI)1097-4636(199812)43:4<431::AID-JBM11>3.0.CO;2-Y"


def line_of(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def test_csl_json_fields_and_lines() -> None:
    path = FIXTURES / "refs.json"
    result = read_csl_json(path)
    assert result.problems == []
    refs = {r.key: r for r in result.references}
    assert list(refs) == ["wakefield1998", "lacour2014", "njei2011", "typo2014", "watson1953"]
    for key, ref in refs.items():
        assert ref.location.file == str(path)
        assert ref.location.line == line_of(path, f'"id": "{key}"'), key
    wakefield = refs["wakefield1998"]
    assert wakefield.doi == "10.1016/s0140-6736(97)11096-0"
    assert wakefield.doi_origin == "DOI"
    assert wakefield.title.startswith("RETRACTED: Ileal")  # <i> markup removed
    assert (wakefield.journal, wakefield.year) == ("The Lancet", 1998)
    assert (refs["lacour2014"].doi, refs["lacour2014"].doi_origin) == (
        "10.1126/science.1256151",
        "URL",
    )
    assert refs["lacour2014"].year == 2014  # issued.raw
    assert refs["njei2011"].doi == "10.1002/14651858.cd009522"
    assert refs["njei2011"].year == 2011  # issued.literal
    assert refs["watson1953"].year == 1953  # date-parts given as strings
    assert refs["watson1953"].pmid == "13054692"


def test_csl_json_malformed_doi_is_not_replaced_by_url() -> None:
    refs = {r.key: r for r in read_csl_json(FIXTURES / "refs.json").references}
    assert refs["typo2014"].doi is None
    assert refs["typo2014"].raw_doi == "10.1126science.1256151"


def test_csl_json_object_wrappers(tmp_path: Path) -> None:
    item = {"id": "watson1953", "DOI": "10.1038/171737a0"}
    for wrapper in ("items", "references"):
        path = tmp_path / f"{wrapper}.json"
        path.write_text(json.dumps({wrapper: [item]}, indent=2), encoding="utf-8")
        (ref,) = read_csl_json(path).references
        assert (ref.key, ref.doi, ref.location.line) == ("watson1953", "10.1038/171737a0", 4)


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('[\n  {"id": "a",\n   "DOI": "10.1038/171737a0" "x"}\n]\n', encoding="utf-8")
    with pytest.raises(ReaderError) as info:
        read_csl_json(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3:")
    assert "invalid JSON" in message and "\n" not in message


def test_json_that_is_not_a_list_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "scalar.json"
    path.write_text("42", encoding="utf-8")
    with pytest.raises(ReaderError, match=r"scalar\.json"):
        read_csl_json(path)


def test_csl_yaml_fields_and_lines() -> None:
    path = FIXTURES / "refs.yaml"
    result = read_csl_yaml(path)
    assert result.problems == []
    refs = {r.key: r for r in result.references}
    for key, ref in refs.items():
        assert ref.location.line == line_of(path, f"- id: {key}"), key
    assert refs["wakefield1998"].doi == "10.1016/s0140-6736(97)11096-0"
    assert refs["wakefield1998"].year == 1998
    assert refs["mcnutt2015"].doi == "10.1126/science.aac6638"  # "doi:" prefix
    assert refs["mcnutt2015"].year == 2015  # YAML date
    kucsko = refs["kucsko2013"]
    assert (kucsko.doi, kucsko.raw_doi, kucsko.year) == (None, None, 2013)  # URL holds no DOI
    assert refs["sici1998"].doi == SICI.lower()
    assert refs["sici1998"].year == 1998


def test_markdown_front_matter_references() -> None:
    path = FIXTURES / "manuscript.md"
    result = read_csl_yaml(path)
    refs = {r.key: r for r in result.references}
    assert list(refs) == ["lacour2014", "watson1953"]
    assert refs["lacour2014"].location.line == line_of(path, "- id: lacour2014")
    assert refs["watson1953"].doi == "10.1038/171737a0"
    assert refs["watson1953"].doi_origin == "URL"
    assert load_bibliography(path).references == result.references


def test_bare_yaml_list_and_duplicate_ids(tmp_path: Path) -> None:
    path = tmp_path / "list.yml"
    path.write_text(
        "- id: a\n  DOI: 10.1038/171737a0\n- id: a\n  DOI: 10.1038/nature12373\n",
        encoding="utf-8",
    )
    result = read_csl_yaml(path)
    assert [(r.key, r.doi, r.location.line) for r in result.references] == [
        ("a", "10.1038/171737a0", 1)
    ]
    (problem,) = result.problems
    assert problem.location.line == 3 and "line 1" in problem.message


def test_invalid_yaml_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("references:\n- id: a\n  title: [unclosed\n- id: b\n", encoding="utf-8")
    with pytest.raises(ReaderError) as info:
        read_csl_yaml(path)
    message = str(info.value)
    assert message.startswith(f"{path}:")
    assert "invalid YAML" in message and "\n" not in message
    line = int(message[len(str(path)) + 1 :].split(":", 1)[0])
    assert 3 <= line <= 5


def test_yaml_without_references_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "meta.yaml"
    path.write_text("title: no references here\n", encoding="utf-8")
    result = read_csl_yaml(path)
    assert result.references == []
    assert len(result.problems) == 1 and "references" in result.problems[0].message


def test_inline_items_with_line_map_and_odd_values() -> None:
    items = [
        {"id": "lacour2014", "DOI": ["https://doi.org/10.1126/science.1256151"], "issued": 2014},
        {"id": 1953, "URL": "http://dx.doi.org/10.1038/171737a0", "issued": [{"year": "1953"}]},
        {"title": "no id", "DOI": "10.1038/nature12373"},
        "not a mapping",
    ]
    result = references_from_csl_items(items, "doc.md", {"lacour2014": 7})
    refs = result.references
    assert [(r.key, r.doi) for r in refs] == [
        ("lacour2014", "10.1126/science.1256151"),
        ("1953", "10.1038/171737a0"),
        ("10.1038/nature12373", "10.1038/nature12373"),
    ]
    assert refs[0].location.line == 7 and refs[1].location.line is None
    assert [r.year for r in refs] == [2014, 1953, None]
    messages = [p.message for p in result.problems]
    assert any("no 'id'" in m for m in messages)
    assert any("not a CSL item" in m for m in messages)


def test_load_bibliography_dispatches_on_extension(tmp_path: Path) -> None:
    item = [{"id": "watson1953", "DOI": "10.1038/171737a0"}]
    (tmp_path / "a.csljson").write_text(json.dumps(item), encoding="utf-8")
    (tmp_path / "b.yml").write_text("references:\n- id: watson1953\n  DOI: 10.1038/171737a0\n")
    (tmp_path / "c.biblatex").write_text("@article{watson1953, doi = {10.1038/171737a0}}\n")
    (tmp_path / "d.dois").write_text("10.1038/171737a0\n")
    for name in ("a.csljson", "b.yml", "c.biblatex"):
        (ref,) = load_bibliography(tmp_path / name).references
        assert (ref.key, ref.doi) == ("watson1953", "10.1038/171737a0"), name
    (ref,) = load_bibliography(tmp_path / "d.dois").references
    assert (ref.key, ref.doi, ref.location.line) == ("10.1038/171737a0", "10.1038/171737a0", 1)


@pytest.mark.parametrize(
    "name", ["refs.bib", "half-broken.bib", "refs.json", "refs.yaml", "manuscript.md", "dois.txt"]
)
def test_text_given_inline_reads_like_the_file(name: str) -> None:
    path = FIXTURES / name
    from_file = load_bibliography(path)
    from_text = parse_bibliography(path.read_text(encoding="utf-8"), str(path))
    assert from_text == from_file
    assert from_text.references


def test_text_that_is_broken_json_raises() -> None:
    with pytest.raises(ReaderError, match=r"^tool-arg:1:"):
        parse_bibliography('[{"id": "a",}]', "tool-arg")


def test_json_lines_for_numeric_ids_do_not_match_longer_numbers(tmp_path: Path) -> None:
    path = tmp_path / "num.json"
    path.write_text(
        '[\n {"custom": {"id": 19530},\n  "id": 1953, "DOI": "10.1038/171737a0"}\n]\n',
        encoding="utf-8",
    )
    refs = read_csl_json(path).references
    assert [(r.key, r.location.line) for r in refs] == [("1953", 3)]


def test_authors_are_family_names_else_literal_in_order(tmp_path: Path) -> None:
    item = {
        "id": "k",
        "author": [
            {"family": "LaCour", "given": "Michael J."},
            {"given": "Donald P.", "family": "Green"},
            {"literal": "World Health Organization"},
            {"given": "Nobody"},
            "not a name",
        ],
    }
    path = tmp_path / "a.json"
    path.write_text(json.dumps([item, {"id": "none"}]), encoding="utf-8")
    refs = {r.key: r for r in read_csl_json(path).references}
    assert refs["k"].authors == ["LaCour", "Green", "World Health Organization"]
    assert refs["none"].authors == []
    yaml_text = "references:\n- id: y\n  author:\n  - family: Müller\n    given: Hans\n"
    (ref,) = parse_bibliography(yaml_text, "y.yaml").references
    assert ref.authors == ["Müller"]
    (inline,) = references_from_csl_items(
        [{"id": "p", "author": [{"family": ["Wakefield"]}]}], "doc.md"
    ).references
    assert inline.authors == ["Wakefield"]
