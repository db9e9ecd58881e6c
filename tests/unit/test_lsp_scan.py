"""Where ``rwgate lsp`` finds keys in a buffer (the build's readers say which, not where)."""

from __future__ import annotations

from rwgate.frontends.lsp.analysis import key_on_line
from rwgate.readers.manuscripts.citescan import Span, latex_spans, markdown_spans


def _keys(spans: list[Span]) -> list[str]:
    return [s.key for s in spans]


def test_markdown_citations_outside_code() -> None:
    text = (
        "See [@smith2020; @doe:x.1, p. 3] and @jones_2019.\n"
        "Mail me at someone@example.org; `@notacite` in code.\n"
        "```{r}\nx <- '@inchunk'\n```\n"
        "Braced @{weird key?} too.\n"
    )
    spans = markdown_spans(text)
    assert _keys(spans)[:3] == ["smith2020", "doe:x.1", "jones_2019"]
    assert "example" not in _keys(spans) and "notacite" not in _keys(spans)
    assert "inchunk" not in _keys(spans)
    first = spans[0]
    line = text.splitlines()[first.line]
    assert line[first.start : first.end] == "smith2020"


def test_markdown_trailing_punctuation_is_not_part_of_the_key() -> None:
    assert _keys(markdown_spans("As @smith2020. And [@doe2021].")) == ["smith2020", "doe2021"]


def test_latex_cite_family_and_comments() -> None:
    text = (
        "\\citep[see][p.~4]{a2020, b2021} and \\textcite{c}\n"
        "% \\cite{commented}\n"
        "50\\% \\parencite*{d} \\cites[x]{e}[y]{f} \\nocite{*}\n"
    )
    spans = latex_spans(text)
    assert _keys(spans) == ["a2020", "b2021", "c", "d", "e", "f"]
    b = spans[1]
    assert text.splitlines()[b.line][b.start : b.end] == "b2021"


def test_an_entry_key_is_found_on_its_line_or_just_after() -> None:
    lines = ["@article{smith2020,", "  doi = {10.1/x}}", "[", "  {", '    "id": "doe"']
    assert key_on_line(lines, "smith2020", 1) == Span("smith2020", 0, 9, 18)
    assert key_on_line(lines, "doe", 4) == Span("doe", 4, 11, 14)
    assert key_on_line(lines, "nowhere", 2).line == 1
