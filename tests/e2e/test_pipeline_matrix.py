"""Every documented pandoc pipeline x every output format: each flagged work's notice is visible
in what the reader gets, or the build fails (issue 28).

The output is read as a reader would read it: HTML without its tags, DOCX through pandoc's own
reader (``-t plain``), LaTeX source as written, PDF through pdftotext. Builds are real (pandoc,
pdflatex, latexmk, bibtex, biber, rw-latexmk). Before: ``suppress-bibliography`` with LaTeX/PDF,
rw-filter before ``--citeproc`` with LaTeX/PDF, and ``--natbib`` output built by plain latexmk with
a style that prints no ``note`` (AAS's aasjournal.bst, as PLOS's plos2015.bst) all printed the
retracted works without a notice and exited 0.

Each cell is one build; a PDF cell builds its PDF once (pandoc -o x.pdf, or the .tex then latexmk).
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pandoc_build import FIXTURES, ROOT, pandoc, rw_filter

from conftest import require_tool
from fakes.crossref import FakeCrossref

NOTICES = {  # flagged work -> the start of its notice (tests/fixtures/crossref records)
    "wakefield1998": "Retracted 2010; notice doi:",
    "lacour2014": "Retracted 2015; notice doi:",
    "njei2011": "Withdrawn 2021; notice doi:",
}
LUA = ["--lua-filter", str(ROOT / "filters" / "rwgate.lua")]
NO_NOTE_BST = "aasjournal"  # texlive-publishers: its styles print no `note` field at all
SUFFIX = {"html": "html", "docx": "docx", "latex": "tex", "pdf": "pdf"}


@dataclass
class Outcome:
    returncode: int
    stderr: str
    text: str | None  # what a reader sees; None when nothing was written


@pytest.fixture(scope="module")
def crossref() -> Iterator[FakeCrossref]:
    with FakeCrossref() as fake:
        yield fake


def _env(fake: FakeCrossref) -> dict[str, str]:
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {**os.environ, "PATH": path, "RWGATE_CROSSREF_URL": fake.url}


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def _read(path: Path, fmt: str, cwd: Path, env: dict[str, str]) -> str | None:
    """The text of an output as its reader sees it (whitespace folded)."""
    if not path.exists():
        return None
    if fmt == "html":
        text = html.unescape(re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8")))
    elif fmt == "docx":
        text = _run([pandoc(), str(path), "-t", "plain", "--wrap=none"], cwd, env).stdout
    elif fmt == "pdf":
        tool = require_tool("pdftotext")
        text = _run([tool, str(path), "-"], cwd, env).stdout
    else:
        text = path.read_text(encoding="utf-8")
    return " ".join(text.split())


def _pandoc(tmp: Path, env: dict[str, str], args: list[str], fmt: str) -> Outcome:
    """``pandoc paper.md ARGS -o out.EXT``: the output format from the file name, as users do."""
    out = f"out.{SUFFIX[fmt]}"
    extra = ["-s", "--pdf-engine=pdflatex"] if fmt == "pdf" else ["-s"]
    proc = _run([pandoc(), "paper.md", "--wrap=none", *args, *extra, "-o", out], tmp, env)
    return Outcome(proc.returncode, proc.stderr, _read(tmp / out, fmt, tmp, env))


def _bibtex_handoff(tmp: Path, env: dict[str, str], method: str, fmt: str, gate: bool) -> Outcome:
    """pandoc --natbib/--biblatex (rw-filter) -> paper.tex, then latexmk or rw-latexmk -> PDF."""
    args = [f"--{method}", "--filter", rw_filter()]
    if method == "natbib":
        args += ["-M", f"biblio-style={NO_NOTE_BST}"]
    first = _pandoc(tmp, env, args, "latex")
    if fmt == "latex" or first.returncode != 0:
        return first
    require_tool("latexmk")
    if method == "biblatex":
        require_tool("biber")
    else:
        require_tool("bibtex")
    maker = str(Path(sys.executable).with_name("rw-latexmk")) if gate else "latexmk"
    proc = _run([maker, "-pdf", "-interaction=nonstopmode", "out.tex"], tmp, env)
    stderr = first.stderr + proc.stdout + proc.stderr
    return Outcome(proc.returncode, stderr, _read(tmp / "out.pdf", "pdf", tmp, env))


def _quarto(tmp: Path, env: dict[str, str], fmt: str) -> Outcome:
    """The Quarto extension under emulated Quarto (tests/fixtures/quarto, as its own test)."""
    quarto = ROOT / "tests" / "fixtures" / "quarto"
    text = (FIXTURES / "paper.md").read_text(encoding="utf-8")
    (tmp / "paper.md").write_text(text.replace("---\n\n", "filters: [rwgate]\n---\n\n", 1))
    defaults = tmp / "quarto-defaults.yaml"
    emulation = quarto / "quarto-emulation.lua"
    defaults.write_text(f"from: markdown\nfilters:\n  - {emulation}\n  - citeproc\n", "utf-8")
    env = {**env, "RWGATE_TEST_EXTENSION": str(ROOT / "_extensions" / "rwgate")}
    return _pandoc(tmp, env, ["-d", str(defaults)], fmt)


CITEPROC = ["--citeproc"]
SUPPRESS = ["-M", "suppress-bibliography=true"]
PIPELINES = {
    "citeproc, then rw-filter": lambda t, e, f: _pandoc(
        t, e, [*CITEPROC, "--filter", rw_filter()], f
    ),
    "rw-filter, then citeproc": lambda t, e, f: _pandoc(
        t, e, ["--filter", rw_filter(), *CITEPROC], f
    ),
    "suppress-bibliography, rw-filter": lambda t, e, f: _pandoc(
        t, e, [*CITEPROC, *SUPPRESS, "--filter", rw_filter()], f
    ),
    "--natbib + latexmk (aasjournal.bst)": lambda t, e, f: _bibtex_handoff(
        t, e, "natbib", f, False
    ),
    "--biblatex + latexmk": lambda t, e, f: _bibtex_handoff(t, e, "biblatex", f, False),
    "--natbib + rw-latexmk": lambda t, e, f: _bibtex_handoff(t, e, "natbib", f, True),
    "Lua filter, then citeproc": lambda t, e, f: _pandoc(t, e, [*LUA, *CITEPROC], f),
    "Lua filter, suppress-bibliography": lambda t, e, f: _pandoc(t, e, [*LUA, *SUPPRESS], f),
    "Lua filter, --natbib": lambda t, e, f: _pandoc(t, e, [*LUA, "--natbib"], f),
    "Quarto extension": lambda t, e, f: _quarto(t, e, f),
}
LATEX_ONLY = {
    "--natbib + latexmk (aasjournal.bst)",
    "--biblatex + latexmk",
    "--natbib + rw-latexmk",
    "Lua filter, --natbib",
}
CELLS = [
    pytest.param(name, fmt, id=f"{name} -> {fmt}")
    for name in PIPELINES
    for fmt in ("html", "docx", "latex", "pdf")
    if name not in LATEX_ONLY or fmt in ("latex", "pdf")
    if not (name == "--natbib + rw-latexmk" and fmt == "latex")  # rw-latexmk builds the PDF
]


@pytest.mark.parametrize(("pipeline", "fmt"), CELLS)
def test_every_flagged_work_shows_its_notice_or_the_build_fails(
    tmp_path: Path, crossref: FakeCrossref, pipeline: str, fmt: str
) -> None:
    if fmt == "pdf":
        require_tool("pdflatex")
    if "aasjournal" in pipeline or "rw-latexmk" in pipeline:
        found = subprocess.run(["kpsewhich", f"{NO_NOTE_BST}.bst"], capture_output=True)
        if found.returncode:
            require_tool(f"{NO_NOTE_BST}.bst (texlive-publishers)")
    shutil.copy(FIXTURES / "paper.md", tmp_path / "paper.md")
    shutil.copy(FIXTURES / "refs.bib", tmp_path / "refs.bib")
    outcome = PIPELINES[pipeline](tmp_path, _env(crossref), fmt)
    assert outcome.returncode == 0, outcome.stderr[-3000:]
    assert outcome.text is not None
    text = outcome.text.replace("- ", "-")  # pdftotext: a line broken after a hyphen
    missing = [key for key, notice in NOTICES.items() if notice not in text]
    assert not missing, f"{pipeline} -> {fmt}: no notice for {missing}\n{outcome.stderr}"
    # The lines say what happened: where each notice went, and no claim about a filter order
    # that citeproc-first pipelines do not have.
    assert "(annotated)" not in outcome.stderr
    if pipeline.startswith(("citeproc", "suppress")):
        assert "ran before --citeproc" not in outcome.stderr
    if pipeline.startswith("suppress"):
        assert "(suppress-bibliography is set)" in outcome.stderr
        assert outcome.stderr.count("(notice after each citation") == len(NOTICES)


NOCITE = "nocite: '@lacour2014'\n"


@pytest.mark.parametrize(
    ("args", "fmt"),
    [
        (["--filter", "RW", *CITEPROC], "html"),
        ([*CITEPROC, *SUPPRESS, "--filter", "RW"], "docx"),
        (["--natbib", "--filter", "RW"], "latex"),
    ],
    ids=["filter first -> html", "suppress-bibliography -> docx", "natbib -> latex"],
)
def test_a_work_only_in_nocite_with_no_place_for_its_notice_stops_the_build(
    tmp_path: Path, crossref: FakeCrossref, args: list[str], fmt: str
) -> None:
    """No citation to follow and no rendered entry: the filter cannot show the notice, so the
    build stops, saying how to get it; an allowed work is said as a warning and never fails."""
    text = (FIXTURES / "paper.md").read_text(encoding="utf-8")
    text = text.replace("@lacour2014", "LaCour and Green").replace("---\n\n", NOCITE + "---\n\n")
    (tmp_path / "paper.md").write_text(text, encoding="utf-8")
    shutil.copy(FIXTURES / "refs.bib", tmp_path / "refs.bib")
    args = [rw_filter() if a == "RW" else a for a in args]
    failed = _pandoc(tmp_path, _env(crossref), args, fmt)
    assert failed.returncode != 0 and failed.text is None
    error = [line for line in failed.stderr.splitlines() if "ERROR" in line]
    assert len(error) == 1 and error[0].startswith("rw-filter: ERROR: lacour2014: retracted")
    assert "without its notice" in error[0]
    assert ("rw-latexmk" if fmt == "latex" else "--citeproc before rw-filter") in error[0]
    allow = "rwgate: {allow: [{key: lacour2014, reason: the subject of this essay}]}\n"
    (tmp_path / "paper.md").write_text(text.replace(NOCITE, NOCITE + allow), encoding="utf-8")
    allowed = _pandoc(tmp_path, _env(crossref), args, fmt)
    assert allowed.returncode == 0, allowed.stderr
    assert "rw-filter: WARNING: lacour2014: retracted" in allowed.stderr
    assert "ERROR" not in allowed.stderr
