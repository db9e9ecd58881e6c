"""The keys rwgate reads from a raw R Markdown or Quarto source are the keys pandoc reads from
knitr's output of it (Debian's ``r-cran-knitr``; no chunk evaluated), on real public documents
(tests/fixtures/knitr, provenance beside them). knitr runs through ``knit_unevaluated.R``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import require_tool
from rwgate.readers.manuscripts import pandoc_ast
from rwgate.readers.manuscripts.manuscript import read_source_ast
from rwgate.readers.pandoc_exe import pandoc_path, run_pandoc_json

FIXTURES = Path(__file__).parents[1] / "fixtures" / "knitr"
KNIT = Path(__file__).with_name("knit_unevaluated.R")
SOURCES = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".Rmd", ".qmd"))


@pytest.fixture(scope="module")
def rscript() -> str:
    """Rscript with knitr (Debian: r-cran-knitr); missing, the tests skip, or fail in CI."""
    found = require_tool("Rscript")
    probe = 'quit(status = if (requireNamespace("knitr", quietly = TRUE)) 0 else 3)'
    if subprocess.run([found, "-e", probe], capture_output=True, timeout=120).returncode == 3:
        require_tool("rwgate-no-such-tool: the R package knitr (r-cran-knitr)")
    return found


def _knitr_keys(rscript: str, source: Path, folder: Path) -> list[str]:
    """What pandoc cites in the Markdown knitr writes for ``source``."""
    out = folder / f"{source.stem}.md"
    proc = subprocess.run(
        [rscript, str(KNIT), str(source), str(out)],
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return pandoc_ast.cited_keys(run_pandoc_json(out, "markdown"))


def test_at_least_five_real_documents_are_compared() -> None:
    assert len(SOURCES) >= 5 and any(p.suffix == ".qmd" for p in SOURCES)


@pytest.mark.parametrize("source", SOURCES, ids=[p.name for p in SOURCES])
def test_rwgate_reads_the_keys_knitr_output_cites(
    rscript: str, source: Path, tmp_path: Path
) -> None:
    expected = _knitr_keys(rscript, source, tmp_path)
    ast, chunks = read_source_ast(source, "markdown", [])
    assert chunks is not None and chunks.count > 0
    assert sorted(set(pandoc_ast.cited_keys(ast))) == sorted(set(expected)), pandoc_path()
    assert expected  # each document cites something: an empty comparison proves nothing


RULE3 = Path(__file__).parents[1] / "fixtures" / "knitr-rule3"
KNIT_EVALUATED = Path(__file__).with_name("knit_evaluated.R")


def test_captions_child_documents_and_asis_read_as_knitr_writes_them(
    rscript: str, tmp_path: Path
) -> None:
    """rwgate's own fixture, knitted with its chunks run (figures, so captions; child documents
    knitted in place): the keys pandoc reads in knitr's output are the keys rwgate reads from
    the source, captions written in the header and in ``#|`` lines, children and ``asis`` too;
    a hidden chunk's caption and an R comment are not citations."""
    for source in RULE3.iterdir():
        (tmp_path / source.name).write_bytes(source.read_bytes())
    out = tmp_path / "paper.md"
    proc = subprocess.run(
        [rscript, str(KNIT_EVALUATED), "paper.Rmd", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    expected = pandoc_ast.cited_keys(run_pandoc_json(out, "markdown"))
    ast, staged = read_source_ast(tmp_path / "paper.Rmd", "markdown", [])
    assert staged is not None and not staged.unseen
    assert sorted(pandoc_ast.cited_keys(ast)) == sorted(expected)
    assert {"lacour2014", "green2015", "child2018", "results2017"} <= set(expected)
