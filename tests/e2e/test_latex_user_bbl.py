"""An arXiv-style bundle: the ``.tex`` and its ``.bbl``, no ``.bib`` (issue 19, finding 1).

rw-latexmk deleted the ``.bbl`` it could not regenerate and reran latexmk, which failed (exit 12)
while rwgate said "gate passed"; the next build had no references at all. Now the ``.bbl`` is the
user's file: never deleted or rewritten, its entries judged as LaTeX prints them (the acmart style
of label, a ``%`` then the key on the next line, included), and strict still fails. Issue 38: a
warning that its flagged entries carried no note, and exit 0, was not enough; LaTeX now reads an
annotated copy (the PDF shows the note, the ``.bbl`` is byte-identical). The bundle's shape is
what arXiv distributes; the entries are the fixture works' (Crossref metadata)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from test_latex_build import doc, pdf_text, rw_latexmk  # noqa: F401 (fixtures)

TEX = r"""\documentclass{article}
\usepackage{natbib}
\usepackage{url}
\begin{document}
Vaccines \cite{wakefield1998}; thermometry \cite{kucsko2013}.
\bibliographystyle{plainnat}
\bibliography{refs}
\end{document}
"""
BBL = r"""\begin{thebibliography}{2}
\providecommand{\natexlab}[1]{#1}

\bibitem[{Wakefield et~al.(1998)Wakefield, Murch, and
  Anthony}]%
        {wakefield1998}
A.~J. Wakefield, S.~H. Murch, and A.~Anthony.
\newblock Ileal-lymphoid-nodular hyperplasia.
\newblock \emph{The Lancet}, 1998.
\newblock doi: 10.1016/S0140-6736(97)11096-0.

\bibitem[Kucsko et~al.(2013)]{kucsko2013}
G.~Kucsko, P.~C. Maurer, and N.~Y. Yao.
\newblock Nanometre-scale thermometry in a living cell.
\newblock \emph{Nature}, 2013.
\newblock \url{https://doi.org/10.1038/nature12373}.

\end{thebibliography}
"""


def _bundle(folder: Path) -> str:
    for old in folder.iterdir():
        if old.is_file():
            old.unlink()
    (folder / "paper.tex").write_text(TEX, encoding="utf-8")
    (folder / "paper.bbl").write_text(BBL, encoding="utf-8")
    return hashlib.sha256(BBL.encode()).hexdigest()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_users_bbl_is_judged_kept_and_strict_still_fails(doc: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    import json

    before = _bundle(doc)
    monkeypatch.setenv("RWGATE_REPORT", str(doc / "report.json"))
    built = rw_latexmk("paper.tex")
    monkeypatch.delenv("RWGATE_REPORT")
    said = built.stdout + built.stderr
    assert built.returncode == 0, said[-3000:]
    assert _digest(doc / "paper.bbl") == before  # never deleted, never rewritten
    report = json.loads((doc / "report.json").read_text(encoding="utf-8"))
    assert {c["key"]: c["status"] for c in report["citations"]}["wakefield1998"] == "retracted"
    assert "gate passed" in said
    text = pdf_text(doc / "paper.pdf")
    assert "Ileal-lymphoid-nodular" in text and "Nanometre-scale" in text  # the references stay
    # Issue 38: LaTeX read an annotated copy, so the PDF carries the note all the same.
    assert "Retracted2010" in text, text  # pdf_text drops white space
    again = rw_latexmk("paper.tex")
    assert again.returncode == 0 and _digest(doc / "paper.bbl") == before
    # The copy did not change: latexmk's first run read it already, and LaTeX is not run again.
    assert "Running 'pdflatex" in said
    assert "Running 'pdflatex" not in again.stdout + again.stderr
    assert "Retracted2010" in pdf_text(doc / "paper.pdf")
    strict = rw_latexmk("--policy", "strict", "paper.tex")
    assert strict.returncode == 1 and "wakefield1998" in strict.stderr
    assert _digest(doc / "paper.bbl") == before


def test_rwgate_check_reads_a_bbl_as_a_bibliography(doc: Path, capsys) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from rwgate.frontends.cli.main import main

    _bundle(doc)
    code = main(["check", "--format", "json", "paper.bbl"])
    import json

    report = json.loads(capsys.readouterr().out)
    status = {c["key"]: c["status"] for c in report["citations"]}
    assert status == {"wakefield1998": "retracted", "kucsko2013": "clean"}
    assert code == 0


def test_a_key_bibtex_matches_case_insensitively_is_judged(doc: Path) -> None:  # noqa: F811
    """Issue 18, finding 3: BibTeX prints the entry `wakefield1998` for \\cite{Wakefield1998};
    rwgate called it missing_entry (a warning) and strict passed with the retracted work in the
    PDF without its note."""
    tex = (doc / "natbib.tex").read_text(encoding="utf-8")
    (doc / "natbib.tex").write_text(tex.replace("{wakefield1998,", "{Wakefield1998,"), "utf-8")
    strict = rw_latexmk("--policy", "strict", "natbib.tex")
    said = strict.stdout + strict.stderr
    assert strict.returncode == 1 and "wakefield1998" in said.lower()
    assert "BibTeX matches keys case-insensitively" in said
    assert "missing_entry" not in said and "missing entry" not in said


def test_the_projects_own_bibtex_command_runs_and_is_annotated(doc: Path) -> None:  # noqa: F811
    """Issue 19, finding 2: a project's $bibtex (options, bibtex8, a wrapper script) ran twice
    under plain latexmk and never under rw-latexmk. It is wrapped now, not replaced."""
    import os

    log = doc / "mybibtex.log"
    script = doc / "mybibtex"
    script.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec bibtex -min-crossrefs=9 "$@"\n')
    script.chmod(0o755)
    (doc / ".latexmkrc").write_text("$bibtex = './mybibtex %O %S';\n", encoding="utf-8")
    built = rw_latexmk("natbib.tex")
    assert built.returncode == 0, (built.stdout + built.stderr)[-3000:]
    assert log.is_file() and "natbib" in log.read_text(encoding="utf-8")
    text = pdf_text(doc / "natbib.pdf")
    assert "Retracted2010" in text  # pdf_text squeezes white space out
    os.utime(doc / "natbib.tex")  # a rebuild after an edit runs the project's command again
    runs = log.read_text(encoding="utf-8").count("\n")
    assert rw_latexmk("natbib.tex").returncode == 0
    assert log.read_text(encoding="utf-8").count("\n") >= runs


def test_default_files_from_the_projects_latexmkrc(doc: Path) -> None:  # noqa: F811
    """Issue 19, finding 4: @default_files was ignored (rw-latexmk insisted on a file)."""
    (doc / ".latexmkrc").write_text("@default_files = ('natb*.tex');\n", encoding="utf-8")
    built = rw_latexmk()
    assert built.returncode == 0, (built.stdout + built.stderr)[-2000:]
    assert (doc / "natbib.pdf").is_file() and not (doc / "biblatex-numeric.pdf").exists()


def test_revtex_prints_the_note_inside_the_entry(doc: Path) -> None:  # noqa: F811
    """Issue 19, finding 4: with revtex/apsrev the note came after \\BibitemShut, which then
    printed a stray "." on its own line. The note now goes before it."""
    import subprocess

    tex = (
        "\\documentclass[aps,prl]{revtex4-2}\n\\begin{document}\n"
        "\\title{T}\\maketitle\nA claim~\\cite{wakefield1998}.\n"
        "\\bibliography{refs}\n\\end{document}\n"
    )
    (doc / "prl.tex").write_text(tex, encoding="utf-8")
    built = rw_latexmk("prl.tex")
    assert built.returncode == 0, (built.stdout + built.stderr)[-3000:]
    bbl = (doc / "prl.bbl").read_text(encoding="utf-8")
    assert bbl.index("Retracted 2010") < bbl.index("\\BibitemShut", bbl.index("wakefield1998"))
    lines = subprocess.run(
        ["pdftotext", "-layout", "prl.pdf", "-"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert not [line for line in lines if line.strip() == "."]
    assert "Retracted2010;noticedoi:10.1016/s0140-6736(10)60175-4." in pdf_text(doc / "prl.pdf")


def test_a_bundle_whose_entries_need_no_note_keeps_its_bbl(doc: Path) -> None:  # noqa: F811
    """Issue 28: when no entry of the user's ``.bbl`` needed a note (every work clean, or
    ``--offline`` with nothing known), rw-latexmk took the ``.bbl`` for a stale build product,
    deleted it and reran latexmk, which failed (exit 12) with no bibliography left; plain latexmk
    exits 0. Now it builds as plain latexmk does, the ``.bbl`` byte-identical, its entries
    judged."""
    import shutil

    before = _bundle(doc)
    plain = doc / "plain"
    plain.mkdir()
    shutil.copy(doc / "paper.tex", plain)
    shutil.copy(doc / "paper.bbl", plain)
    ran = subprocess.run(
        ["latexmk", "-pdf", "-interaction=nonstopmode", "paper.tex"],
        cwd=plain,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert ran.returncode == 0 and (plain / "paper.pdf").is_file()
    built = rw_latexmk("--offline", "paper.tex")  # nothing known: no note is due
    _builds_as_latexmk_does(built, doc, before, "2 cited")
    clean_tex = TEX.replace("Vaccines \\cite{wakefield1998}; t", "T")
    clean_bbl = BBL[: BBL.index("\\bibitem[{Wakefield")] + BBL[BBL.index("\\bibitem[Kucsko") :]
    (doc / "paper.tex").write_text(clean_tex, encoding="utf-8")
    (doc / "paper.bbl").write_text(clean_bbl, encoding="utf-8")
    for stale in doc.glob("paper.*"):
        if stale.suffix not in (".tex", ".bbl"):
            stale.unlink()
    built = rw_latexmk("paper.tex")  # every work clean
    _builds_as_latexmk_does(built, doc, hashlib.sha256(clean_bbl.encode()).hexdigest(), "1 cited")
    assert "kucsko2013" in built.stderr or "1 checked" in built.stderr


def _builds_as_latexmk_does(
    built: subprocess.CompletedProcess[str], folder: Path, before: str, cited: str
) -> None:
    said = built.stdout + built.stderr
    assert built.returncode == 0, said[-3000:]
    assert _digest(folder / "paper.bbl") == before
    assert "rerunning the bibliography" not in said
    assert cited in said  # the .bbl's entries are judged
    assert "Nanometre-scale" in pdf_text(folder / "paper.pdf")


BIBLATEX_TEX = r"""\documentclass{article}
\usepackage[backend=biber]{biblatex}
\addbibresource{refs.bib}
\begin{document}
Vaccines \cite{wakefield1998}; thermometry \cite{kucsko2013}.
\printbibliography
\end{document}
"""
BIBLATEX_BIB = r"""@article{wakefield1998, author = {Wakefield, A. J.},
  title = {Ileal-lymphoid-nodular hyperplasia}, journal = {The Lancet}, year = {1998},
  doi = {10.1016/S0140-6736(97)11096-0}}
@article{kucsko2013, author = {Kucsko, G.}, title = {Nanometre-scale thermometry in a living cell},
  journal = {Nature}, year = {2013}, doi = {10.1038/nature12373}}
"""


def _biblatex_bundle(folder: Path) -> str:
    """A biblatex bundle as arXiv ships it: the .tex and the .bbl biber wrote (by real latexmk
    and biber, in a folder of its own), no .bib."""
    maker = folder.parent / "maker"
    maker.mkdir()
    (maker / "paper.tex").write_text(BIBLATEX_TEX, encoding="utf-8")
    (maker / "refs.bib").write_text(BIBLATEX_BIB, encoding="utf-8")
    made = subprocess.run(
        ["latexmk", "-pdf", "-interaction=nonstopmode", "paper.tex"],
        cwd=maker,
        capture_output=True,
        text=True,
        check=False,
    )
    assert made.returncode == 0, made.stdout[-2000:]
    for old in folder.iterdir():
        if old.is_file():
            old.unlink()
    (folder / "paper.tex").write_text(BIBLATEX_TEX, encoding="utf-8")
    (folder / "paper.bbl").write_bytes((maker / "paper.bbl").read_bytes())
    return _digest(folder / "paper.bbl")


def test_a_biblatex_bundle_gets_its_notes_and_strict_fails(doc: Path) -> None:  # noqa: F811
    """Issue 38 with biber: the .bbl biblatex reads is the user's; LaTeX reads an annotated copy
    (an ``addendum``), the user's file stays byte-identical, strict fails."""
    before = _biblatex_bundle(doc)
    built = rw_latexmk("paper.tex")
    said = built.stdout + built.stderr
    assert built.returncode == 0, said[-3000:]
    assert _digest(doc / "paper.bbl") == before
    assert "Retracted2010" in pdf_text(doc / "paper.pdf")
    strict = rw_latexmk("--policy", "strict", "paper.tex")
    assert strict.returncode == 1 and "wakefield1998" in strict.stderr
    assert _digest(doc / "paper.bbl") == before and not (doc / "paper.pdf").exists()


def test_notes_that_cannot_reach_the_pdf_fail_the_build_under_every_policy(doc: Path) -> None:  # noqa: F811
    """A bibliography file whose name TeX cannot be given safely (a space): no copy can be
    substituted for it, so the build fails, in one line, even under the default policy."""
    _bundle(doc)
    (doc / "paper.bbl").rename(doc / "my refs.bbl")
    tex = TEX.replace("\\bibliographystyle{plainnat}\n\\bibliography{refs}", "\\input{my refs.bbl}")
    (doc / "paper.tex").write_text(tex, encoding="utf-8")
    before = _digest(doc / "my refs.bbl")
    built = rw_latexmk("paper.tex")
    assert built.returncode == 1, (built.stdout + built.stderr)[-3000:]
    (line,) = [ln for ln in built.stderr.splitlines() if "cannot carry their notes" in ln]
    assert "my refs.bbl" in line and "fails under every policy" in line
    assert _digest(doc / "my refs.bbl") == before and not (doc / "paper.pdf").exists()


def test_a_pdf_that_cannot_be_set_aside_is_named(doc: Path) -> None:  # noqa: F811
    """The same failure when the PDF cannot be renamed (a folder holds its ``.rejected`` name):
    rw-latexmk says so, as for any failed gate, instead of leaving the PDF unsaid."""
    _bundle(doc)
    (doc / "paper.bbl").rename(doc / "my refs.bbl")
    tex = TEX.replace("\\bibliographystyle{plainnat}\n\\bibliography{refs}", "\\input{my refs.bbl}")
    (doc / "paper.tex").write_text(tex, encoding="utf-8")
    (doc / "paper.pdf.rejected").mkdir()
    (doc / "paper.pdf.rejected" / "kept").write_text("", encoding="utf-8")
    built = rw_latexmk("paper.tex")
    assert built.returncode == 1, (built.stdout + built.stderr)[-3000:]
    assert "cannot carry their notes" in built.stderr
    (line,) = [ln for ln in built.stderr.splitlines() if "cannot rename" in ln]
    assert "paper.pdf" in line and (doc / "paper.pdf").exists()


def _with_hooks(folder: Path) -> subprocess.CompletedProcess[str]:
    """Plain latexmk with ``latexmkrc.example`` (no rw-latexmk)."""
    rc = Path(__file__).parents[2] / "latexmkrc.example"
    cmd = ["latexmk", "-r", str(rc), "-pdf", "-interaction=nonstopmode", "paper.tex"]
    return subprocess.run(
        cmd, cwd=folder, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=180
    )


def test_the_latexmkrc_hooks_give_a_bundle_its_notes(doc: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """Issue 38 through ``latexmkrc.example``: latexmk runs no bibtex for a bundle, so the
    ``before_xlatex`` hook (``rwgate latex-notes``) gives LaTeX the annotated copy; the user's
    .bbl stays byte-identical, and strict stops the build."""
    before = _bundle(doc)
    built = _with_hooks(doc)
    assert built.returncode == 0, (built.stdout + built.stderr)[-3000:]
    assert "Retracted2010" in pdf_text(doc / "paper.pdf")
    assert _digest(doc / "paper.bbl") == before
    monkeypatch.setenv("RWGATE_POLICY", "strict")
    (doc / "paper.aux").unlink()  # latexmk reruns LaTeX, and the hook, only for a change
    strict = _with_hooks(doc)
    assert strict.returncode != 0 and "wakefield1998" in strict.stdout + strict.stderr
    assert _digest(doc / "paper.bbl") == before


def test_the_latexmkrc_hooks_give_a_biblatex_bundle_its_notes(doc: Path) -> None:  # noqa: F811
    before = _biblatex_bundle(doc)
    built = _with_hooks(doc)
    assert built.returncode == 0, (built.stdout + built.stderr)[-3000:]
    assert "Retracted2010" in pdf_text(doc / "paper.pdf")
    assert _digest(doc / "paper.bbl") == before


def test_an_ungated_pvc_build_gives_a_bundle_its_notes(doc: Path) -> None:  # noqa: F811
    """``rw-latexmk -pvc`` (ungated: each hook gates itself) gives LaTeX the annotated copy too;
    latexmk's own ``-pvctimeout`` ends the watch."""
    before = _bundle(doc)
    watch = ["-pvc", "-pvctimeout", "-pvctimeoutmins=0.02", "-view=none", "paper.tex"]
    built = rw_latexmk(*watch)
    assert built.returncode == 0, (built.stdout + built.stderr)[-3000:]
    assert "Retracted2010" in pdf_text(doc / "paper.pdf")
    assert _digest(doc / "paper.bbl") == before
