"""Project metadata merged as Quarto and bookdown merge it (no pandoc, no Quarto: the files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rwgate.readers.manuscripts.project import cited_in, combined, merge, project_for


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_quarto_merge_concatenates_lists_and_lets_the_later_single_value_win() -> None:
    # quarto-cli src/core/config.ts mergeArrayCustomizer
    assert merge({"bibliography": "a.bib"}, {"bibliography": "b.bib"}) == {"bibliography": "b.bib"}
    assert merge({"bibliography": ["a.bib"]}, {"bibliography": "b.bib"}) == {
        "bibliography": ["a.bib", "b.bib"]
    }
    assert merge({"b": "a.bib"}, {"b": ["a.bib", "c.bib"]}) == {"b": ["a.bib", "c.bib"]}
    assert merge({"rwgate": {"policy": "strict", "x": 1}}, {"rwgate": {"x": 2}}) == {
        "rwgate": {"policy": "strict", "x": 2}
    }


def test_a_quarto_chapter_takes_the_project_bibliography_relative_to_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("QUARTO_PROFILE", raising=False)
    _write(tmp_path / "_quarto.yml", "project:\n  type: book\nbibliography: refs.bib\n")
    _write(tmp_path / "refs.bib", "")
    chapter = _write(tmp_path / "chapters" / "two.qmd", "# Two\n")
    project = project_for(chapter)
    assert project is not None and project.kind == "quarto"
    assert combined(project, {}) == {"bibliography": str(tmp_path / "refs.bib")}
    assert project.files == [tmp_path / "_quarto.yml"]


def test_quarto_profiles_metadata_files_and_directory_metadata_merge_in_quartos_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(
        tmp_path / "_quarto.yml",
        "bibliography: [base.bib]\nmetadata-files: [extra.yml]\nprofile:\n  default: draft\n",
    )
    _write(tmp_path / "extra.yml", "bibliography: extra.bib\nrwgate: {policy: strict}\n")
    _write(tmp_path / "_quarto-draft.yml", "bibliography: draft.bib\n")
    _write(tmp_path / "_quarto-final.yml", "bibliography: final.bib\n")
    _write(tmp_path / "part" / "_metadata.yml", "bibliography: part.bib\nnocite: '@k1 @k2'\n")
    for name in ("base", "extra", "draft", "final", "part/part"):
        _write(tmp_path / f"{name}.bib", "")
    doc = _write(tmp_path / "part" / "ch.qmd", "x\n")
    monkeypatch.delenv("QUARTO_PROFILE", raising=False)
    project = project_for(doc)
    assert project is not None
    merged = combined(project, {"bibliography": "own.bib"})
    assert merged["bibliography"] == [
        str(tmp_path / n) for n in ("base.bib", "extra.bib", "draft.bib", "part/part.bib")
    ] + ["own.bib"]  # not found beside its file: left to the document, as Quarto leaves it
    assert merged["rwgate"] == {"policy": "strict"}
    assert cited_in(merged["nocite"]) == (["k1", "k2"], False)
    assert project.files == [  # what the report names: the files merged, in Quarto's order
        tmp_path / n
        for n in ("_quarto.yml", "extra.yml", "_quarto-draft.yml", "part/_metadata.yml")
    ]
    monkeypatch.setenv("QUARTO_PROFILE", "final")
    project = project_for(doc)
    assert project is not None
    assert str(tmp_path / "final.bib") in combined(project, {})["bibliography"]
    assert str(tmp_path / "draft.bib") not in combined(project, {})["bibliography"]


def test_a_bookdown_chapter_takes_index_rmd_bibliography_unless_it_names_one(
    tmp_path: Path,
) -> None:
    _write(tmp_path / "_bookdown.yml", "book_filename: book\n")
    _write(
        tmp_path / "index.Rmd", "---\ntitle: A book\nbibliography: [book.bib, packages.bib]\n---\n"
    )
    chapter = _write(tmp_path / "02-two.Rmd", "---\nbibliography: own.bib\n---\n# Two\n")
    project = project_for(chapter)
    assert project is not None and project.kind == "bookdown"
    # bookdown puts the chapter (its YAML block too) after index.Rmd, and pandoc takes a field
    # from the last YAML block that sets it
    assert combined(project, {"bibliography": "own.bib"})["bibliography"] == "own.bib"
    assert combined(project, {})["bibliography"] == [
        str(tmp_path / "book.bib"),
        str(tmp_path / "packages.bib"),
    ]
    assert tmp_path / "index.Rmd" in project.files


def test_a_bookdown_site_without_bookdown_yml_is_found_by_its_index(tmp_path: Path) -> None:
    _write(tmp_path / "index.Rmd", "---\nsite: bookdown::bookdown_site\nbibliography: b.bib\n---\n")
    chapter = _write(tmp_path / "01-intro.Rmd", "# Intro\n")
    project = project_for(chapter)
    assert project is not None and combined(project, {}) == {
        "bibliography": str(tmp_path / "b.bib")
    }
    assert project_for(_write(tmp_path / "notes.md", "x\n")) is None  # bookdown reads .Rmd only


def test_output_yml_pandoc_args_name_metadata_files_and_bibliographies(tmp_path: Path) -> None:
    _write(tmp_path / "_bookdown.yml", "")
    _write(
        tmp_path / "_output.yml",
        "bookdown::gitbook:\n  pandoc_args: ['--metadata-file=meta.yaml']\n"
        "bookdown::pdf_book:\n  pandoc_args: ['--bibliography', 'cli.bib']\n",
    )
    _write(tmp_path / "meta.yaml", "bibliography: meta.bib\n")
    chapter = _write(tmp_path / "ch.Rmd", "x\n")
    project = project_for(chapter)
    assert project is not None
    assert combined(project, {})["bibliography"] == [str(tmp_path / "cli.bib")]
    project.command_line.clear()  # without --bibliography: the metadata file's, the doc over it
    assert combined(project, {})["bibliography"] == str(tmp_path / "meta.bib")
    assert combined(project, {"bibliography": "own.bib"})["bibliography"] == "own.bib"
    # the metadata file, and _output.yml for its --bibliography; _bookdown.yml gives no metadata
    assert sorted(project.files) == [tmp_path / "_output.yml", tmp_path / "meta.yaml"]


def test_files_outside_the_allowed_roots_are_not_read(tmp_path: Path) -> None:
    _write(tmp_path / "_quarto.yml", "bibliography: refs.bib\n")
    doc = _write(tmp_path / "inner" / "paper.qmd", "x\n")
    assert project_for(doc, allowed=lambda p: Path(p).is_relative_to(tmp_path / "inner")) is None


def test_bibliographies_under_a_format_are_read_after_the_top_level_ones(tmp_path: Path) -> None:
    _write(
        tmp_path / "_quarto.yml",
        "bibliography: top.bib\nformat:\n  html:\n    bibliography: web.bib\n  pdf: default\n",
    )
    _write(tmp_path / "top.bib", "")
    _write(tmp_path / "web.bib", "")
    project = project_for(_write(tmp_path / "ch.qmd", "x\n"))
    assert project is not None
    assert combined(project, {}) == {
        "bibliography": [str(tmp_path / "top.bib"), str(tmp_path / "web.bib")]
    }


def test_a_lone_r_markdown_document_reads_its_pandoc_args(tmp_path: Path) -> None:
    doc = _write(
        tmp_path / "paper.Rmd",
        "---\noutput:\n  html_document:\n    pandoc_args: ['--metadata-file', 'meta.yaml']\n---\n",
    )
    _write(tmp_path / "meta.yaml", "bibliography: [a.bib]\n")
    project = project_for(doc)
    assert project is not None
    assert combined(project, {}) == {"bibliography": [str(tmp_path / "a.bib")]}
    assert project.files == [tmp_path / "meta.yaml"]
    plain = _write(tmp_path / "other" / "plain.Rmd", "---\noutput: html_document\n---\n")
    assert project_for(plain) is None
