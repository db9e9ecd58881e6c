"""Readers on large inputs (issue 13): 100,000 \\citation lines, a 1 MB .bib field, a 1 MB DOI
line, a 1 MB CSL title, and 5,000 entries of a BibTeX file. Median of 5 runs each."""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rwgate.readers.bibliographies.bibtex import parse_bib
from rwgate.readers.bibliographies.csl import parse_csl_json
from rwgate.readers.bibliographies.doilist import parse_doi_list
from rwgate.readers.builds.latexaux import parse_aux


def median_seconds(run: Callable[[], object], times: int = 5) -> float:
    spans = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        spans.append(time.perf_counter() - start)
    return statistics.median(spans)


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    aux = folder / "paper.aux"
    aux.write_text("".join(f"\\citation{{k{i}}}\n" for i in range(100_000)) + "\\bibdata{r}\n")
    field = "@misc{a, note={" + "see 10.1000/x " * 75_000 + "}, doi={10.1/a}}\n"
    line = "10.1000/x" + " " * 1_000_000 + "y\n"
    title = json.dumps([{"id": "a", "title": "<i>" + "word " * 200_000}])
    bib = "".join(
        f"@article{{k{i}, author={{A. Author and B. Author}}, title={{Title {i}}},"
        f" journal={{J}}, year=2020, doi={{10.1000/{i}}}}}\n"
        for i in range(5_000)
    )
    cases = {
        "100,000 \\citation lines (.aux)": lambda: parse_aux(aux),
        "a 1 MB .bib field": lambda: parse_bib(field, "t.bib"),
        "a 1 MB DOI-list line": lambda: parse_doi_list(line, "t.txt"),
        "a 1 MB CSL title": lambda: parse_csl_json(title, "t.json"),
        "5,000 .bib entries": lambda: parse_bib(bib, "t.bib"),
    }
    for name, run in cases.items():
        print(f"{name:34} {median_seconds(run):7.3f} s")


if __name__ == "__main__":
    main()
