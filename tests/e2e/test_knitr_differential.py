"""The keys rwgate reads from a raw R Markdown or Quarto source are the keys pandoc reads from
knitr's output of it (Debian's ``r-cran-knitr``; no chunk evaluated), on real public documents
(tests/fixtures/knitr, provenance beside them). knitr runs through ``knit_unevaluated.R``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import require_tool
from rwgate.pandoc_exe import pandoc_path, run_pandoc_json
from rwgate.references import pandoc_ast
from rwgate.references.manuscript import read_source_ast

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
