"""knitr's chunk syntax, read without knitr: every chunk becomes blank lines, line for line, so
pandoc neither swallows the citations after a chunk nor reads a chunk's text as citations."""

from __future__ import annotations

import pytest

from rwgate.readers.manuscripts.knitr import blank_chunks

HEAD = "---\nbibliography: refs.bib\n---\n\n"


def _lines(text: str) -> list[str]:
    return blank_chunks(text).text.split("\n")


@pytest.mark.parametrize(
    "header",
    [
        "```{r}",
        "````{r}",
        "```{r label, echo=FALSE, fig.cap='A plot'}",
        "```{r setup, include=FALSE}",
        "``` {python}",
        "```{ojs}",
        "```{julia}",
        "```{bash}",
        "```{sql, connection=con}",
        "```{r, eval = TRUE}  ",
        "```{r.label}",
    ],
)
def test_every_chunk_header_opens_a_chunk_whose_text_is_blanked(header: str) -> None:
    fence = header[: header.index("{")].rstrip()
    body = '#| echo: false\n# see [@lacour2014]\n\nx <- "[@lacour2014]"'
    text = f"{HEAD}{header}\n{body}\n{fence}\nAfter [@wansink2012].\n"
    out = blank_chunks(text)
    assert out.count == 1
    assert "lacour2014" not in out.text and "[@wansink2012]" in out.text
    assert out.text.count("\n") == text.count("\n")  # pandoc's lines stay the source's


def test_the_issue_reproduction_keeps_the_citation_between_two_chunks() -> None:
    chunk = "```{r}\nx <- 1\n\ny <- 2\n```\n"
    text = f"{HEAD}{chunk}\nElmo stickers [@wansink2012].\n\n```{{r}}\nz <- 3\n```\n"
    lines = _lines(text)
    assert lines[4:9] == ["", "", "", "", ""]
    assert lines[10] == "Elmo stickers [@wansink2012]."
    assert lines[12:15] == ["", "", ""]


def test_a_plain_fence_inside_a_chunk_does_not_end_it() -> None:
    # knitr closes only on the exact opening fence: four backticks inside a three-backtick
    # chunk are code, and a nested three-backtick chunk in a four-backtick one is its text.
    text = "````{r}\n```{r}\n[@a]\n```\n````\n[@b]\n"
    assert _lines(text) == ["", "", "", "", "", "[@b]", ""]


def test_a_header_with_the_same_fence_starts_the_next_chunk() -> None:
    text = "```{r}\n[@a]\n```{r}\n[@b]\n```\n[@c]\n"
    out = blank_chunks(text)
    assert out.count == 2 and out.text.split("\n")[5] == "[@c]"


def test_a_mismatched_closing_fence_ends_the_chunk_when_no_exact_one_follows() -> None:
    out = blank_chunks("```{r}\nx\n````\n[@after]\n")
    assert out.text.split("\n") == ["", "", "", "[@after]", ""]
    assert out.mismatched == [3]


def test_a_mismatched_closing_fence_is_code_when_the_exact_one_follows() -> None:
    out = blank_chunks("```{r}\nx\n````\n[@inside]\n```\n[@after]\n")
    assert out.text.split("\n") == ["", "", "", "", "", "[@after]", ""]
    assert out.mismatched == []


def test_an_unclosed_chunk_runs_to_the_end() -> None:
    assert "[@a]" not in blank_chunks("text\n```{r}\nx\n\n[@a]\n").text


def test_chunks_in_a_blockquote_or_list_keep_their_prefix() -> None:
    lines = _lines("> ```{python}\n> # [@x]\n> ```\n>\n> Quoted [@y].\n")
    assert lines[:3] == [">", ">", ">"] and lines[4] == "> Quoted [@y]."
    lines = _lines("1. Item\n\n    ```{r}\n    # [@x]\n    ```\n\n    More [@y].\n")
    assert lines[2:5] == ["", "", ""] and lines[6] == "    More [@y]."


@pytest.mark.parametrize(
    "text",
    [
        "```{=html}\n<b>[@raw]</b>\n```\n",  # a pandoc raw block, not a chunk
        "```{.r}\n[@a]\n```\n",  # pandoc attributes: an ordinary code block
        "```r\n[@a]\n```\n",
        "~~~{r}\n[@a]\n~~~\n",  # knitr runs no tilde chunk: what pandoc makes of it stands
        "Inline `r 1 + 1` and `{r} x` [@a].\n",  # inline code: already code to pandoc
    ],
)
def test_what_knitr_does_not_run_is_left_to_pandoc(text: str) -> None:
    out = blank_chunks(text)
    assert out.count == 0 and out.text == text


def test_prose_engines_keep_their_markdown() -> None:
    text = "```{asis, echo=knitr::is_html_output()}\nSee [@a].\n```\n```{theorem}\nBy [@b].\n```\n"
    assert _lines(text) == ["", "See [@a].", "", "", "By [@b].", "", ""]


def test_child_documents_are_noticed() -> None:
    out = blank_chunks("```{r, child='appendix.Rmd'}\n```\n```{r}\n#| child: two.qmd\n```\n")
    assert out.children == [("appendix.Rmd", 1), ("two.qmd", 3)]


def test_carriage_returns_count_as_line_ends() -> None:
    out = blank_chunks("```{r}\r\n# [@a]\r\n```\r\n[@b]\r\n")
    assert out.text == "\n\n\n[@b]\n"
