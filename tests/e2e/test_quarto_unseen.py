"""Issue 45, rule 3 for Quarto and R Markdown sources: what Quarto and knitr put in the page is
read (chunk captions, ``{{< include >}}`` files, literal ``child`` documents, Quarto's reader's
code blocks), and what rwgate cannot see (code that prints Markdown, computed paths, files not
found) is a warning under the default policy and "cannot judge" (exit 2) under strict.

Each case was a silent pass before: the citation was never read, or the document passed strict.
Real CLI, real pandoc (the wheel's), the loopback fake Crossref (LaCour 2014 is retracted there,
Watson & Crick 1953 clean)."""

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
HEAD = "---\nbibliography: refs.bib\n---\n\nThe double helix [@watson1953].\n\n"


@pytest.fixture(autouse=True)
def crossref_env(fake_crossref, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    monkeypatch.delenv("QUARTO_PROFILE", raising=False)
    return fake_crossref


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _doc(folder: Path, name: str, body: str) -> Path:
    _write(folder / "refs.bib", BIB)
    return _write(folder / name, HEAD + body)


def _check(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> tuple[int, dict, str]:
    code = main(["check", "--format", "json", "--no-history", str(path), *args])
    captured = capsys.readouterr()
    report = json.loads(captured.out) if captured.out.strip() else {}
    return code, report, captured.err


def _statuses(report: dict) -> dict[str, str]:
    return {c["key"]: c["status"] for c in report.get("citations", [])}


CAPTIONS = {
    "quarto-fig-cap.qmd": '```{r}\n#| label: fig-one\n#| fig-cap: "Replotted from @lacour2014"\n'
    "plot(1)\n```\n",
    "knitr-header.Rmd": '```{r one, fig.cap="Replotted [@lacour2014]"}\nplot(1)\n```\n',
    "knitr-pipe-r-syntax.Rmd": "```{r}\n#| fig.cap = 'After [@lacour2014]'\nplot(1)\n```\n",
    "tbl-cap.qmd": "```{r}\n#| tbl-cap: 'Data of @lacour2014'\nknitr::kable(x)\n```\n",
    "fig-subcap-list.qmd": "```{python}\n#| fig-subcap:\n#|   - 'Left'\n"
    "#|   - 'Right, from [@lacour2014]'\nplot()\n```\n",
    "knitr-c-vector.Rmd": "```{r, fig.cap=c('A', \"B [@lacour2014]\")}\nplot(1); plot(2)\n```\n",
}


@pytest.mark.parametrize("name", sorted(CAPTIONS))
def test_a_caption_written_as_a_chunk_option_is_read_as_markdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    # Before: "1 cited" (watson1953 alone), the gate passed under strict.
    doc = _doc(tmp_path, name, CAPTIONS[name] + "\nThe end.\n")
    code, report, _ = _check(capsys, doc, "--policy", "strict")
    assert _statuses(report) == {"watson1953": "clean", "lacour2014": "retracted"}
    assert code == 1


def test_a_caption_of_a_chunk_that_is_not_shown_is_not_a_citation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = '```{r, include=FALSE, fig.cap="[@lacour2014]"}\nplot(1)\n```\n'
    code, report, _ = _check(capsys, _doc(tmp_path, "hidden.Rmd", body), "--policy", "strict")
    assert _statuses(report) == {"watson1953": "clean"} and code == 0


def test_a_quarto_include_is_read_relative_to_the_rendered_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: no warning at all; the included citation was never judged.
    doc = _doc(tmp_path, "paper.qmd", "{{< include parts/_one.qmd >}}\n\nThe end.\n")
    # quarto-cli resolves a nested include against the rendered document's folder too
    _write(tmp_path / "parts" / "_one.qmd", "One.\n\n{{< include parts/_two.md >}}\n")
    _write(tmp_path / "parts" / "_two.md", "Two [@lacour2014].\n")
    code, report, _ = _check(capsys, doc, "--policy", "strict")
    assert _statuses(report) == {"watson1953": "clean", "lacour2014": "retracted"}
    assert code == 1 and report["warnings"] == []


def test_knitr_child_documents_named_literally_are_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: "child document not read", then "gate passed" under strict.
    body = "```{r, child=c('_a.Rmd', \"_b.Rmd\")}\n```\n\n```{r}\n#| child: _c.Rmd\n```\n"
    doc = _doc(tmp_path, "paper.Rmd", body)
    _write(tmp_path / "_a.Rmd", "A.\n")
    _write(tmp_path / "_b.Rmd", "B [@lacour2014].\n\n```{r}\n# [@notacitation]\n```\n")
    _write(tmp_path / "_c.Rmd", "C.\n")
    code, report, _ = _check(capsys, doc, "--policy", "strict")
    assert _statuses(report) == {"watson1953": "clean", "lacour2014": "retracted"}
    assert code == 1 and report["warnings"] == []


UNSEEN = {
    "missing-include.qmd": ("{{< include _gone.qmd >}}\n", "included file not read"),
    "include-loop.qmd": ("{{< include _loop.qmd >}}\n", "includes itself"),
    "missing-child.Rmd": ("```{r, child='_gone.Rmd'}\n```\n", "child document not read"),
    "computed-child.Rmd": ("```{r, child=kids[1]}\n```\n", "child document named by code"),
    "results-asis.Rmd": (
        "```{r, results='asis'}\ncat('[@lacour2014]')\n```\n",
        "Markdown printed by code",
    ),
    "output-asis.qmd": (
        "```{python}\n#| output: asis\nprint('[@lacour2014]')\n```\n",
        "Markdown printed by code",
    ),
    "computed-caption.qmd": (
        "```{r}\n#| fig-cap: !expr paste('see', cite)\nplot(1)\n```\n",
        "caption computed by code",
    ),
}


@pytest.mark.parametrize("name", sorted(UNSEEN))
def test_what_rwgate_cannot_see_warns_and_strict_cannot_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    body, said = UNSEEN[name]
    doc = _doc(tmp_path, name, body + "\nThe end.\n")
    _write(tmp_path / "_loop.qmd", "Loop.\n\n{{< include _loop.qmd >}}\n")
    code, report, _ = _check(capsys, doc)
    assert code == 0 and any(said in w for w in report["warnings"]), report["warnings"]
    assert main(["check", "--no-history", str(doc)]) == 0
    assert "--policy strict would fail" in capsys.readouterr().out
    code, report, _ = _check(capsys, doc, "--policy", "strict")
    assert code == 2 and report["exit_code"] == 2
    assert main(["check", "--no-history", "--policy", "strict", str(doc)]) == 2
    assert "cannot judge from the sources" in capsys.readouterr().out


def test_a_display_block_of_chunk_syntax_is_code_to_quarto(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # ```{{r}} shows a chunk unexecuted; plain pandoc 3 takes no fence there, and the stray
    # closing fence swallowed the citation up to the next code block.
    body = "```{{r}}\nx <- 1\n\ny\n```\n\nProse [@lacour2014].\n\n```yaml\nk: 1\n```\n"
    code, report, _ = _check(capsys, _doc(tmp_path, "show.qmd", body), "--policy", "strict")
    assert _statuses(report) == {"watson1953": "clean", "lacour2014": "retracted"}
    assert code == 1


def test_a_chunk_in_a_quarto_projects_markdown_file_is_a_code_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path / "refs.bib", BIB)
    _write(tmp_path / "_quarto.yml", "project:\n  type: website\nbibliography: refs.bib\n")
    body = "Show:\n\n```{r}\nx <- 1\n\ny\n```\n\nProse [@lacour2014].\n\n```yaml\nk: 1\n```\n"
    code, report, _ = _check(capsys, _write(tmp_path / "page.md", body), "--policy", "strict")
    assert _statuses(report) == {"lacour2014": "retracted"} and code == 1


def test_an_unclosed_cell_of_a_quarto_document_is_read_as_markdown_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Quarto's Jupyter engine flushes an unclosed cell's text as a Markdown cell.
    body = "```{python}\nx = 1\n\nThe rest [@lacour2014].\n"
    code, report, _ = _check(capsys, _doc(tmp_path, "open.qmd", body), "--policy", "strict")
    assert _statuses(report) == {"watson1953": "clean", "lacour2014": "retracted"}
    assert code == 1


def test_citations_in_a_projects_subtitle_and_abstract_are_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Quarto merges _quarto.yml and _metadata.yml into the document; their Markdown fields print.
    _write(tmp_path / "refs.bib", BIB)
    _write(tmp_path / "_quarto.yml", "project:\n  type: default\nbibliography: refs.bib\n")
    _write(tmp_path / "part" / "_metadata.yml", "subtitle: 'Replotting [@lacour2014]'\n")
    doc = _write(tmp_path / "part" / "paper.qmd", "---\ntitle: A\n---\n\nHelix [@watson1953].\n")
    code, report, _ = _check(capsys, doc, "--policy", "strict")
    assert _statuses(report) == {"watson1953": "clean", "lacour2014": "retracted"}
    assert code == 1
    # the document's own subtitle replaces the project's (Quarto's merge: the later value wins)
    _write(doc, "---\nsubtitle: Mine\n---\n\nHelix [@watson1953].\n")
    code, report, _ = _check(capsys, doc, "--policy", "strict")
    assert _statuses(report) == {"watson1953": "clean"} and code == 0


def test_inline_references_given_by_quarto_yml_are_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: "cannot judge from the sources (no bibliography found)", exit 2.
    _write(
        tmp_path / "_quarto.yml",
        "project:\n  type: default\nreferences:\n  - id: lacour2014\n    type: article-journal\n"
        "    title: When contact changes minds\n    DOI: 10.1126/science.1256151\n",
    )
    doc = _write(tmp_path / "paper.qmd", "# Paper\n\nMinds changed [@lacour2014].\n")
    code, report, _ = _check(capsys, doc, "--policy", "strict")
    assert _statuses(report) == {"lacour2014": "retracted"} and code == 1
