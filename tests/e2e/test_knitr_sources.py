"""`rwgate check` on R Markdown and Quarto sources: chunks are code, project bibliographies count,
and citations that reach no bibliography are "cannot judge" (exit 2). Real CLI, real pandoc,
the loopback fake Crossref (LaCour 2014 is retracted there, Watson & Crick 1953 clean)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rwgate.frontends.cli.main import main

BIB = (
    "@article{lacour2014, title={When contact changes minds}, journal={Science}, year={2014},"
    " doi={10.1126/science.1256151}}\n"
    "@article{watson1953, title={Molecular structure of nucleic acids}, journal={Nature},"
    " year={1953}, doi={10.1038/171737a0}}\n"
)


@pytest.fixture(autouse=True)
def crossref_env(fake_crossref, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    monkeypatch.delenv("QUARTO_PROFILE", raising=False)
    return fake_crossref


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _check(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> tuple[int, dict, str]:
    code = main(["check", "--format", "json", "--no-history", str(path), *args])
    captured = capsys.readouterr()
    report = json.loads(captured.out) if captured.out.strip() else {}
    return code, report, captured.err


def _said(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str]:
    """Exit code and the messages of a check of ``path`` (the report's warnings)."""
    code, report, _ = _check(capsys, path)
    return code, "\n".join(report["warnings"])


def _statuses(report: dict) -> dict[str, str]:
    return {c["key"]: c["status"] for c in report.get("citations", [])}


@pytest.mark.parametrize("suffix", [".qmd", ".Rmd", ".Rmarkdown"])
@pytest.mark.parametrize("header", ["{r}", "{r setup, include=FALSE}"])
def test_a_citation_after_a_chunk_holding_a_blank_line_is_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str, header: str
) -> None:
    # The reproduction (LaCour 2014 in place of Wansink 2012, whose record the fake
    # Crossref has): old code said "0 cited ... gate passed", exit 0, under --policy strict.
    # pandoc 3.x takes no chunk header for a fence; Debian's 2.17 takes ```{r} for one (class
    # "{r}") but not a header with options: either way the closing fence opened a code block.
    _write(tmp_path / "refs.bib", BIB)
    paper = _write(
        tmp_path / f"paper{suffix}",
        f"---\nbibliography: refs.bib\n---\n\n```{header}\nx <- 1\n\ny <- 2\n```\n\n"
        "Canvassers changed minds [@lacour2014].\n\n```{r}\nz <- 3\n```\n",
    )
    code, report, _ = _check(capsys, paper, "--policy", "strict")
    assert _statuses(report) == {"lacour2014": "retracted"}
    assert code == 1


def test_text_inside_chunks_is_never_a_citation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path / "refs.bib", BIB)
    paper = _write(
        tmp_path / "paper.Rmd",
        "---\nbibliography: refs.bib\n---\n\n```{r setup, include=FALSE}\nlibrary(x)\n\n"
        "# see [@lacour2014]\n"
        'x <- "[@lacour2014]"\n```\n\n```{python}\n#| echo: false\nprint("@lacour2014")\n```\n\n'
        "The double helix [@watson1953].\n",
    )
    code, report, _ = _check(capsys, paper, "--policy", "strict")
    assert _statuses(report) == {"watson1953": "clean"}
    assert code == 0


def test_a_bookdown_chapter_takes_its_bibliography_from_index_rmd(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Old code: lacour2014 was a missing_entry warning and the check passed, exit 0.
    _write(tmp_path / "book.bib", BIB)
    _write(tmp_path / "_bookdown.yml", 'book_filename: "book"\n')
    _write(
        tmp_path / "index.Rmd",
        "---\ntitle: A book\nsite: bookdown::bookdown_site\nbibliography: [book.bib]\n---\n\n"
        "# Preface\n",
    )
    chapter = _write(tmp_path / "02-contact.Rmd", "# Contact\n\nMinds changed [@lacour2014].\n")
    code, report, _ = _check(capsys, chapter)
    assert _statuses(report) == {"lacour2014": "retracted"}
    assert report["project_metadata"] == [str((tmp_path / "index.Rmd").resolve())]
    code, report, _ = _check(capsys, chapter, "--policy", "strict")
    assert code == 1


def _text(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    main(["check", "--no-history", str(path)])
    return capsys.readouterr().out


def test_the_report_names_the_project_files_whose_metadata_was_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 36: "say which in the report". Named as the document is (here relative to the
    # working folder); a YAML file the tool does not read, or the document's own, is not named.
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "q" / "references.bib", BIB)
    _write(tmp_path / "q" / "_quarto.yml", "project:\n  type: book\nbibliography: references.bib\n")
    _write(tmp_path / "q" / "chapters" / "_metadata.yml", "nocite: '@watson1953'\n")
    _write(tmp_path / "q" / "chapters" / "_other.yml", "bibliography: unread.bib\n")
    _write(tmp_path / "q" / "chapters" / "two.qmd", "# Two\n\nMinds changed [@lacour2014].\n")
    _, report, _ = _check(capsys, Path("q/chapters/two.qmd"))
    assert _statuses(report) == {"lacour2014": "retracted", "watson1953": "clean"}
    assert report["project_metadata"] == ["q/_quarto.yml", "q/chapters/_metadata.yml"]
    said = _text(capsys, Path("q/chapters/two.qmd"))
    assert "\nrwgate: project metadata: q/_quarto.yml, q/chapters/_metadata.yml\n" in said

    _write(tmp_path / "book" / "book.bib", BIB)
    _write(tmp_path / "book" / "_bookdown.yml", 'book_filename: "book"\n')
    _write(tmp_path / "book" / "index.Rmd", "---\nbibliography: book.bib\n---\n\n# Preface\n")
    rmd = _write(tmp_path / "book" / "02-two.Rmd", "# Two\n\n[@lacour2014]\n")
    said = _text(capsys, Path("book/02-two.Rmd"))
    assert "\nrwgate: project metadata: book/index.Rmd\n" in said
    _, report, _ = _check(capsys, rmd)  # an absolute path: absolute names
    assert report["project_metadata"] == [str(rmd.parent.resolve() / "index.Rmd")]

    plain = _write(
        tmp_path / "paper.md", "---\nbibliography: book/book.bib\n---\n\n[@lacour2014]\n"
    )
    _, report, _ = _check(capsys, plain)
    assert _statuses(report) == {"lacour2014": "retracted"} and "project_metadata" not in report
    assert "project metadata" not in _text(capsys, plain)


def test_a_quarto_chapter_takes_its_bibliography_from_quarto_yml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path / "references.bib", BIB)
    _write(tmp_path / "_quarto.yml", "project:\n  type: book\nbibliography: references.bib\n")
    chapter = _write(
        tmp_path / "chapters" / "two.qmd",
        "# Two\n\n```{r}\n#| label: setup\n\nlibrary(x)\n```\n\nMinds changed [@lacour2014].\n",
    )
    code, report, _ = _check(capsys, chapter, "--policy", "strict")
    assert _statuses(report) == {"lacour2014": "retracted"}
    assert code == 1


def test_citations_that_reach_no_bibliography_cannot_be_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alone = _write(tmp_path / "alone" / "two.qmd", "# Two\n\nMinds changed [@lacour2014].\n")
    code, err = _said(capsys, alone)
    assert code == 2
    assert "cannot judge from the sources" in err and "no bibliography found" in err
    _write(tmp_path / "other" / "refs.bib", "@article{unrelated, doi={10.1038/171737a0}}\n")
    named = _write(
        tmp_path / "other" / "paper.md",
        "---\nbibliography: refs.bib\n---\n\nMinds changed [@lacour2014].\n",
    )
    code, err = _said(capsys, named)
    assert code == 2 and "none of the 1 cited keys is in refs.bib" in err


def test_a_document_that_cites_nothing_or_holds_its_references_is_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = _write(tmp_path / "empty.qmd", "# Nothing cited\n\n```{r}\n# [@lacour2014]\n```\n")
    code, report, _ = _check(capsys, empty, "--policy", "strict")
    assert code == 0 and _statuses(report) == {}
    inline = _write(
        tmp_path / "inline.md",
        "---\nreferences:\n- id: lacour2014\n  DOI: 10.1126/science.1256151\n---\n\n"
        "[@lacour2014]\n",
    )
    code, report, _ = _check(capsys, inline, "--policy", "strict")
    assert _statuses(report) == {"lacour2014": "retracted"} and code == 1


def test_a_bibliography_under_a_format_key_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path / "refs.bib", BIB)
    paper = _write(
        tmp_path / "paper.qmd",
        "---\nformat:\n  pdf:\n    bibliography: refs.bib\n---\n\nMinds changed [@lacour2014].\n",
    )
    code, report, _ = _check(capsys, paper, "--policy", "strict")
    assert _statuses(report) == {"lacour2014": "retracted"} and code == 1


def test_quarto_cross_references_are_not_citations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Quarto's crossref filter takes @fig-..., @sec-... (and crossref: custom: types) before
    # citeproc: a chapter that cites nothing else is judged, not "cannot judge".
    paper = _write(
        tmp_path / "paper.qmd",
        "---\ncrossref:\n  custom:\n    - kind: float\n      key: vid\n---\n\n"
        "# Intro {#sec-intro}\n\nSee @sec-intro, @fig-plot, @Tbl-data and @vid-demo.\n",
    )
    code, report, _ = _check(capsys, paper, "--policy", "strict")
    assert code == 0 and _statuses(report) == {}
    _write(tmp_path / "refs.bib", BIB)
    both = _write(
        tmp_path / "both.qmd",
        "---\nbibliography: refs.bib\n---\n\nAs in @fig-plot [@lacour2014; @sec-x].\n",
    )
    code, report, _ = _check(capsys, both, "--policy", "strict")
    assert _statuses(report) == {"lacour2014": "retracted"} and code == 1


def test_mcp_names_the_project_files_too(tmp_path: Path) -> None:
    from test_mcp import call, structured

    _write(tmp_path / "references.bib", BIB)
    _write(tmp_path / "_quarto.yml", "project:\n  type: book\nbibliography: references.bib\n")
    chapter = _write(tmp_path / "chapters" / "two.qmd", "# Two\n\n[@lacour2014].\n")
    found = structured(call([tmp_path], "rw_check_manuscript", {"path": str(chapter)}))
    assert _statuses(found) == {"lacour2014": "retracted"}
    assert found["project_metadata"] == [str((tmp_path / "_quarto.yml").resolve())]
