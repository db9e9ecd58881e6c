"""Added time of rw-latexmk over plain latexmk, with a warm cache (issue 5).

Builds tests/fixtures/latex/natbib.tex (BibTeX) and biblatex-numeric.tex (biber) in a temporary
folder against the loopback fake Crossref: a full build with plain latexmk, the same with
rw-latexmk (cache warmed first), and a no-change rebuild of each, plain and gated run in
alternation. Prints the medians in seconds ("added": the median of the paired differences).

    .venv/bin/python benchmarks/latex_bench.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fakes.crossref import FakeCrossref  # noqa: E402

BIN = Path(sys.executable).parent
DOCS = ("natbib.tex", "biblatex-numeric.tex", "big.tex")
BIG_ENTRIES = 1_300


def _write_big(folder: Path) -> None:
    """``big.tex``: IEEEtran-like, citing all of a 1,300-entry ``big.bib`` (issue 18's large
    bibliography: real papers of that size were not found in the public material searched)."""
    entries = []
    for i in range(BIG_ENTRIES):
        doi = "10.1016/S0140-6736(97)11096-0" if i == 7 else f"10.5555/bench.big.{i}"
        entries.append(
            f"@article{{ref{i},\n  author = {{Author, A. and Writer, B. {i} and Third, C.}},\n"
            f"  title = {{A study of topic {i}: {{M}}ethods and \\emph{{results}}}},\n"
            f"  journal = {{IEEE Trans. Synth.}}, volume = {i % 40 + 1}, number = {i % 12 + 1},\n"
            f"  pages = {{{i}--{i + 9}}}, year = {2000 + i % 25},\n  doi = {{{doi}}}\n}}\n"
        )
    (folder / "big.bib").write_text("\n".join(entries), encoding="utf-8")
    (folder / "big.tex").write_text(
        "\\documentclass{article}\\begin{document}\\nocite{*}Text.\n"
        "\\bibliographystyle{plain}\\bibliography{big}\\end{document}\n",
        encoding="utf-8",
    )


STDIN: int = subprocess.DEVNULL  # --terminal: a pseudo-terminal, as an author's shell gives


def _run(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, stdin=STDIN)
    return time.perf_counter() - start


def _clean(folder: Path) -> None:
    for path in folder.iterdir():
        if path.suffix not in (".tex", ".bib", ".md"):
            path.unlink()


def _paired(
    repeat: int, prepare: Callable[[], None], plain: list[str], gated: list[str], cwd: Path
) -> tuple[float, float, float]:
    """Medians of plain latexmk, rw-latexmk and their difference, the two run in alternation so
    that a machine whose speed drifts slows both alike."""
    times: list[tuple[float, float]] = []
    for _ in range(repeat):
        prepare()
        alone = _run(plain, cwd)
        prepare()
        times.append((alone, _run(gated, cwd)))
    med = statistics.median
    return med(a for a, _ in times), med(g for _, g in times), med(g - a for a, g in times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", help="one of " + ", ".join(DOCS))
    parser.add_argument(
        "--terminal",
        action="store_true",
        help="a terminal on standard input: rw-latexmk runs in its own process (its hooks do not)",
    )
    args = parser.parse_args()
    if args.terminal:
        import pty

        global STDIN
        _parent, STDIN = pty.openpty()
    with tempfile.TemporaryDirectory() as tmp, FakeCrossref() as fake:
        folder = Path(tmp) / "doc"
        shutil.copytree(ROOT / "tests" / "fixtures" / "latex", folder)
        _write_big(folder)
        for i in range(BIG_ENTRIES):  # works Crossref holds (unknown ones are never cached)
            if i != 7:
                fake.add_synthetic(f"10.5555/bench.big.{i}", title=f"A study of topic {i}")
        os.environ.update(RWGATE_CROSSREF_URL=fake.url, RWGATE_CACHE_DIR=str(Path(tmp) / "cache"))
        os.environ["NO_PROXY"] = "127.0.0.1"
        plain = ["latexmk", "-pdf", "-interaction=nonstopmode"]
        gated = [str(BIN / "rw-latexmk"), "-pdf", "-interaction=nonstopmode"]
        print(f"{'document':24} {'latexmk':>9} {'rw-latexmk':>11} {'added':>7}   no-change rebuild")
        for doc in [args.only] if args.only else DOCS:
            _run([*gated, doc], folder)  # warm the cache
            full = _paired(
                args.repeat, lambda: _clean(folder), [*plain, doc], [*gated, doc], folder
            )
            _run([*plain, doc], folder)
            _run([*gated, doc], folder)
            again = _paired(args.repeat, lambda: None, [*plain, doc], [*gated, doc], folder)
            print(
                f"{doc:24} {full[0]:9.2f} {full[1]:11.2f} {full[2]:+7.2f}"
                f"   {again[0]:.2f} -> {again[1]:.2f} ({again[2]:+.2f})"
            )


if __name__ == "__main__":
    main()
