"""Chunk options read without R (captions, child paths, asis output) and Quarto's staging rules:
include lines and its reader's fence rule (issue 45, rule 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rwgate.readers.manuscripts.knitr import Computed, blank_chunks, chunk_options, r_value
from rwgate.readers.manuscripts.staged import include_target, quarto_fences, stage


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('"a, [@b]"', ["a, [@b]"]),
        ("'it\\'s'", ["it's"]),
        ("c(\"a.Rmd\", 'b.Rmd')", ["a.Rmd", "b.Rmd"]),
        ("FALSE", False),
        ("12", None),
        ("captions[1]", Computed("captions[1]")),
        ('paste0("a", x)', Computed('paste0("a", x)')),
    ],
)
def test_r_values_are_literal_or_code(text: str, value: object) -> None:
    assert r_value(text) == value


def test_header_and_pipe_options_merge_the_pipe_lines_winning() -> None:
    header = ' one, fig.cap="Head [@a]", echo=c(1, 2), child="x.Rmd"'
    body = ["#| fig-cap: 'Pipe [@b]'", "#| fig-subcap: !expr caps", "plot(1)"]
    options = chunk_options(header, body)
    assert options["fig.cap"] == ["Head [@a]"] and options["fig-cap"] == ["Pipe [@b]"]
    assert options["fig-subcap"] == Computed("caps") and options["child"] == ["x.Rmd"]


def test_captions_take_the_chunks_place_and_code_that_prints_is_unseen() -> None:
    text = '```{r, fig.cap="[@a]"}\nplot(1)\n```\n```{r, results="asis"}\ncat(x)\n```\n'
    out = blank_chunks(text)
    assert "[@a]" in out.text and "plot" not in out.text
    assert out.unseen == [("a chunk whose output is Markdown printed by code (asis)", 4)]


def test_include_lines_are_quartos_block_shortcodes() -> None:
    assert include_target("{{< include _a.qmd >}}") == "_a.qmd"
    assert include_target('  {{< include "b c.md" >}}  ') == "b c.md"
    assert include_target("{{</* include _a.qmd */>}}") is None  # escaped: shown, not included
    assert include_target("Text {{< include _a.qmd >}}") is None
    assert include_target("{{< meta title >}}") is None


def test_quartos_reader_makes_braced_fences_code_blocks() -> None:
    lines = ["```{{r}}", "```{r}", "```{.python}", "``` {r, echo=FALSE}", "text"]
    assert quarto_fences(lines) == ["```qqqqq", "```qqq", "```{.python}", lines[3], "text"]


def test_includes_nest_from_the_documents_folder_and_loops_stop(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "_a.qmd").write_text("A\n{{< include sub/_b.qmd >}}\n", encoding="utf-8")
    (tmp_path / "sub" / "_b.qmd").write_text("B\n{{< include sub/_a.qmd >}}\n", encoding="utf-8")
    doc = tmp_path / "doc.qmd"
    out = stage(doc, "{{< include sub/_a.qmd >}}\n", quarto=True, knitr=True)
    assert out.text.split("\n")[:2] == ["A", "B"]
    assert len(out.unseen) == 1 and "includes itself" in out.unseen[0][0]


def test_inline_code_that_may_print_a_citation_is_unseen() -> None:
    """knitcitations' `r citep(...)` / RefManageR's `r Citet(...)` print a citation rwgate cannot
    read without running R: unseen (strict cannot judge). Inline code printing numbers is not."""
    text = "We have `r nrow(x)` rows.\n\nAs `r citep(\"@wk\")` and `r Citet(bib, 'wk')` showed.\n"
    unseen = blank_chunks(text).unseen
    assert [line for _, line in unseen] == [3, 3], unseen
    assert all("inline code that may print a citation" in said for said, _ in unseen)
    inside = "```{r}\nx <- '`r citep(1)`'\n```\n"
    assert blank_chunks(inside).unseen == []
