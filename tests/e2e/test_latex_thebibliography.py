"""Issue 28: a document with its own ``thebibliography`` (or one that ``\\input``s its ``.bbl``).

Its citations were ``missing_entry`` warnings and the gate passed, from the sources and after a
build (its ``.aux`` has no ``\\bibdata``), with a retracted work printed and never named. Now its
``\\bibitem``s are the bibliography: every one LaTeX prints is judged (cited or not), in ``rwgate
check``, in MCP's ``rw_check_manuscript`` and in rw-latexmk. Issue 38: rw-latexmk warned that it
could not place a note in the user's own text and exited 0; now LaTeX reads an annotated copy of
the file (``rwgate-notes/``), the PDF carries the note, the user's file stays byte-identical.
The works are the fixture works (Crossref metadata): Wakefield 1998 and LaCour 2014 are
retracted."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from latex_helpers import enter_folder, rwgate_check
from test_latex_build import pdf_text, rw_latexmk
from test_mcp import call, structured

from conftest import require_tool
from fakes.crossref import FakeCrossref

BIBLIOGRAPHY = r"""\begin{thebibliography}{9}
% \bibitem{commented} a commented-out entry is not printed: doi:10.1126/science.1256151
\bibitem{wakefield1998}
A.~J. Wakefield, S.~H. Murch, and A.~Anthony.
\newblock Ileal-lymphoid-nodular hyperplasia.
\newblock \emph{The Lancet}, 1998. doi:10.1016/S0140-6736(97)11096-0.

\bibitem[Kucsko et~al.(2013)]{kucsko2013}
G.~Kucsko. \newblock Nanometre-scale thermometry in a living cell.
\newblock \url{https://doi.org/10.1038/nature12373}.

\bibitem{lacour2014}
M.~J. LaCour and D.~P. Green. \newblock When contact changes minds.
\newblock \emph{Science}, 2014. \url{https://doi.org/10.1126/science.1256151}.
\end{thebibliography}
"""
BODY = "Vaccines \\cite{wakefield1998}; thermometry \\cite{kucsko2013}.\n"
HEAD = "\\documentclass{article}\n\\usepackage{url}\n\\begin{document}\n"
EMBEDDED = HEAD + BODY + BIBLIOGRAPHY + "\\end{document}\n"
INPUT_BBL = HEAD + BODY + "\\input{refs.bbl}\n\\end{document}\n"
STATUS = {"wakefield1998": "retracted", "kucsko2013": "clean", "lacour2014": "retracted"}


@pytest.fixture
def folder(tmp_path: Path, fake_crossref: FakeCrossref, monkeypatch: pytest.MonkeyPatch) -> Path:
    here = tmp_path / "paper"
    here.mkdir()
    return enter_folder(here, fake_crossref, monkeypatch)


def _statuses(*args: str) -> tuple[dict[str, str], int]:
    done = rwgate_check("--format", "json", *args)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    report = json.loads(done.stdout)
    return {c["key"]: c["status"] for c in report["citations"]}, done.returncode


def _built(*args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """rw-latexmk, and the statuses of its JSON report (the wording of its text may change)."""
    report = Path("rwgate-report.json")
    report.unlink(missing_ok=True)
    os.environ["RWGATE_REPORT"] = str(report.resolve())
    try:
        built = rw_latexmk(*args)
    finally:
        del os.environ["RWGATE_REPORT"]
    said = built.stdout + built.stderr
    assert report.is_file(), said[-3000:]
    citations = json.loads(report.read_text(encoding="utf-8"))["citations"]
    return built, {c["key"]: c["status"] for c in citations}


def _notes_in(pdf: Path) -> int:
    """How many notes the PDF prints (pdftotext's layout mode: the raw mode loses the end of an
    overfull line, such as one with a long DOI)."""
    out = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, check=True)
    return "".join(out.stdout.decode("utf-8").split()).count("Retracted20")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_rwgate_check_reads_the_documents_own_bibitems(folder: Path) -> None:
    (folder / "paper.tex").write_text(EMBEDDED, encoding="utf-8")
    status, code = _statuses("paper.tex")
    assert status == STATUS  # the uncited lacour2014 is printed too: judged
    assert code == 0
    strict = rwgate_check("--policy", "strict", "paper.tex")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    said = strict.stdout + strict.stderr
    assert "wakefield1998" in said and "lacour2014" in said and "missing_entry" not in said
    assert "paper.tex:3" not in said and "commented" not in said


def test_rw_latexmk_judges_them_notes_them_and_strict_fails(folder: Path) -> None:
    require_tool("latexmk")
    (folder / "paper.tex").write_text(EMBEDDED, encoding="utf-8")
    before = _digest(folder / "paper.tex")
    built, status = _built("paper.tex")
    said = built.stdout + built.stderr
    assert built.returncode == 0, said[-3000:]
    assert status == STATUS and "missing_entry" not in said
    text = pdf_text(folder / "paper.pdf")
    assert "Ileal-lymphoid-nodular" in text
    assert _notes_in(folder / "paper.pdf") == 2, text  # Wakefield's and LaCour's notes
    assert _digest(folder / "paper.tex") == before
    again, _ = _built("paper.tex")  # a rebuild reads the same copy
    assert again.returncode == 0 and _notes_in(folder / "paper.pdf") == 2
    status, _ = _statuses("paper.tex")  # the .aux is fresh now (no \bibdata in it)
    assert status == STATUS
    strict = rw_latexmk("--policy", "strict", "paper.tex")
    assert strict.returncode == 1, (strict.stdout + strict.stderr)[-3000:]
    assert "wakefield1998" in strict.stderr and "lacour2014" in strict.stderr
    assert not (folder / "paper.pdf").exists() and (folder / "paper.pdf.rejected").is_file()


def test_a_bbl_the_document_inputs_is_read_and_kept(folder: Path) -> None:
    """An arXiv bundle that ``\\input``s its ``refs.bbl`` (no ``\\bibliography``, no .bib)."""
    require_tool("latexmk")
    (folder / "paper.tex").write_text(INPUT_BBL, encoding="utf-8")
    (folder / "refs.bbl").write_text(BIBLIOGRAPHY, encoding="utf-8")
    before = _digest(folder / "refs.bbl")
    status, _ = _statuses("paper.tex")
    assert status == STATUS
    built, status = _built("paper.tex")
    said = built.stdout + built.stderr
    assert built.returncode == 0, said[-3000:]
    assert status == STATUS
    assert _digest(folder / "refs.bbl") == before
    assert "Nanometre-scale" in pdf_text(folder / "paper.pdf")
    assert _notes_in(folder / "paper.pdf") == 2
    strict = rw_latexmk("--policy", "strict", "paper.tex")
    assert strict.returncode == 1 and _digest(folder / "refs.bbl") == before


def test_mcp_reads_the_same_bibitems(folder: Path) -> None:
    (folder / "paper.tex").write_text(EMBEDDED, encoding="utf-8")
    found = structured(call([folder], "rw_check_manuscript", {"path": str(folder / "paper.tex")}))
    flagged = {k: v for k, v in STATUS.items() if v != "clean"}
    assert {c["key"]: c["status"] for c in found["citations"]} == flagged
    assert found["clean"]["keys"] == ["kucsko2013"]  # MCP lists clean works apart


def test_the_latexmkrc_hooks_note_a_documents_own_bibitems(folder: Path) -> None:
    """Issue 38 through ``latexmkrc.example`` alone: no bibliography tool runs, the
    ``before_xlatex`` hook gives LaTeX an annotated copy of ``paper.tex``; strict stops."""
    require_tool("latexmk")
    (folder / "paper.tex").write_text(EMBEDDED, encoding="utf-8")
    before = _digest(folder / "paper.tex")
    rc = Path(__file__).parents[2] / "latexmkrc.example"
    cmd = ["latexmk", "-r", str(rc), "-pdf", "-interaction=nonstopmode", "paper.tex"]
    built = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert built.returncode == 0, (built.stdout + built.stderr)[-3000:]
    assert _notes_in(folder / "paper.pdf") == 2
    assert _digest(folder / "paper.tex") == before
    (folder / "paper.aux").unlink()  # latexmk reruns LaTeX, and the hook, only for a change
    strict = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "RWGATE_POLICY": "strict"},
    )
    assert strict.returncode != 0 and "wakefield1998" in strict.stdout + strict.stderr
