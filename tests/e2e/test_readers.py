"""Citation readers are one registry: found by suffix or name, never guessed; RIS is the worked
example of adding one (its module, one line in READERS, this test)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rwgate.errors import UnknownFormat
from rwgate.frontends.cli.main import main
from rwgate.readers import load_bibliography, parse_bibliography
from rwgate.readers.bibliographies.registry import READERS, by_name, reader_for, suffixes
from rwgate.readers.pandoc_exe import pandoc_path

RIS = Path(__file__).parents[1] / "fixtures" / "ris" / "refs.ris"


def test_every_suffix_has_one_reader_of_each_kind() -> None:
    for kind in ("bibliography", "manuscript"):
        claimed = [s for r in READERS if r.kind == kind for s in r.suffixes]
        assert len(claimed) == len(set(claimed)), kind
    assert reader_for("paper.md").name == "markdown"
    assert reader_for("refs.md", ["bibliography"]).name == "csl-yaml"
    assert reader_for("-").name == "doi-list"
    assert reader_for("REFS.RIS").name == "ris"


@pytest.mark.parametrize("name", ["paper.typ", "refs.enl", "README", "notes.docx"])
def test_unknown_suffix_is_an_error_naming_the_file_and_the_known_ones(name: str) -> None:
    with pytest.raises(UnknownFormat) as info:
        reader_for(name)
    message = str(info.value)
    assert message.startswith(f"{name}: no manuscript or bibliography reader for")
    assert ".bib" in message and ".ris" in message and "\n" not in message
    with pytest.raises(UnknownFormat):
        by_name("typst")


def test_rwgate_check_on_a_typst_paper_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paper = tmp_path / "paper.typ"
    paper.write_text('#cite(<wakefield>)\n#bibliography("refs.bib")\n', encoding="utf-8")
    code = main(["check", "--offline", str(paper)])
    captured = capsys.readouterr()
    assert code == 2
    errors = [line for line in captured.out.splitlines() if "no manuscript" in line]
    assert len(errors) == 1 and "paper.typ" in errors[0], captured.out
    assert "gate passed" not in captured.out


def test_ris_keys_and_dois_are_pandocs() -> None:
    """Differential: rwgate's reading of the RIS file is pandoc's own."""
    done = subprocess.run(
        [pandoc_path(), "-f", "ris", "-t", "csljson", str(RIS)],
        capture_output=True,
        check=True,
    )
    pandoc = {item["id"]: item.get("DOI") for item in json.loads(done.stdout)}
    ours = load_bibliography(RIS)
    assert [r.key for r in ours.references] == list(pandoc)
    for ref in ours.references:
        if pandoc[ref.key] is None:
            assert ref.doi is None
        else:
            assert ref.doi is not None and ref.doi in pandoc[ref.key].lower()
    assert not ours.problems


def test_ris_pubmed_ids_and_lines() -> None:
    refs = {r.key: r for r in load_bibliography(RIS).references}
    wakefield = refs["Wakefield_Murch_Anthony_1998"]
    assert (wakefield.pmid, wakefield.doi) == ("9500320", "10.1016/s0140-6736(97)11096-0")
    assert str(wakefield.location).endswith("refs.ris:1")
    assert refs["Hassan_Ali_2021"].pmid == "34938348"  # N1 - PMID: ...
    assert refs["Hassan_Ali_2021"].doi is None
    assert refs["watson1953"].doi == "10.1038/171737a0"
    inline = parse_bibliography(RIS.read_text(encoding="utf-8"), "<text>")
    assert [r.key for r in inline.references] == list(refs)


def test_rwgate_check_judges_a_ris_file(fake_crossref, tmp_path: Path) -> None:
    env = {"RWGATE_CROSSREF_URL": fake_crossref.url, "RWGATE_CACHE_DIR": str(tmp_path / "c")}
    done = subprocess.run(
        [sys.executable, "-m", "rwgate", "check", "--format", "json", str(RIS)],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, **env},
    )
    report = json.loads(done.stdout)
    status = {c["key"]: c["status"] for c in report["citations"]}
    assert status["Wakefield_Murch_Anthony_1998"] == "retracted"
    assert status["watson1953"] == "clean"
    assert done.returncode == 0


def test_doi_list_from_standard_input(fake_crossref, tmp_path: Path) -> None:
    env = {"RWGATE_CROSSREF_URL": fake_crossref.url, "RWGATE_CACHE_DIR": str(tmp_path / "c")}
    done = subprocess.run(
        [sys.executable, "-m", "rwgate", "check", "--format", "json", "-"],
        input="10.1016/S0140-6736(97)11096-0\n",
        capture_output=True,
        text=True,
        env={**__import__("os").environ, **env},
    )
    report = json.loads(done.stdout)
    assert [c["status"] for c in report["citations"]] == ["retracted"]


def test_known_suffixes_are_listed() -> None:
    assert {".bib", ".json", ".yaml", ".ris", ".txt", ".dois"} <= set(suffixes(["bibliography"]))
    assert {".md", ".tex", ".qmd", ".rst", ".org"} <= set(suffixes(["manuscript"]))
