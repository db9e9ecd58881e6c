"""The LaTeX front end's pieces without TeX: escaping, .bbl editing, argument handling."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rwgate.frontends.latex.bbl import MARK, annotate_biblatex, annotate_bibtex, is_biblatex
from rwgate.frontends.latex.gate import build_from_latexmk
from rwgate.frontends.latex.hooks import locate_biber, locate_bibtex, own_options, split_hook_args
from rwgate.frontends.latex.latexmk_run import split_args
from rwgate.render.latex import doi_markup, escape_text

BIBTEX_BBL = r"""\begin{thebibliography}{2}
\providecommand{\natexlab}[1]{#1}

\bibitem[{Wakefield} et~al.(1998)Wakefield, Murch, and
  Anthony [x]]{Wakefield1998}
A.~J. Wakefield.
\newblock \emph{The Lancet}, 1998.

\bibitem[Kucsko(2013)]{kucsko2013}
G.~Kucsko.
\newblock \emph{Nature}, 2013.

\end{thebibliography}
"""

BIBLATEX_BBL = r"""% $ biblatex auxiliary file $
\refsection{0}
  \datalist[entry]{nty/global//global/global}
    \entry{lacour2014}{article}{}
      \field{addendum}{Discussed in section 2}
      \field{title}{When contact changes minds}
      \verb{url}
      \verb https://example.org/\entry{fake}\endentry
      \endverb
    \endentry
    \entry{kucsko2013}{article}{}
      \field{title}{Nanometre-scale thermometry}
    \endentry
  \enddatalist
\endrefsection
"""


def test_escape_text_prints_every_special_character() -> None:
    hostile = r"\input{/etc/passwd}\write18{x}%#_&~^$<>|" + "\x1b[31m\nend"
    escaped = escape_text(hostile)
    without_commands = re.sub(r"\\[A-Za-z]+\{\}|\\[{}$&#_%]", "", escaped)
    assert not set(without_commands) & set("\\{}$&#^_~%<>|")
    assert "\x1b" not in escaped and "\n" not in escaped
    assert escaped.startswith(r"\textbackslash{}input\textbraceleft{}/etc/passwd\textbraceright{}")
    assert escaped.count("{") == escaped.count("}")  # BibTeX and biber count every brace


def test_doi_markup_links_only_plain_dois() -> None:
    assert r"\href{https://doi.org/10.1016/s0140-6736(10)60175-4}" in doi_markup(
        "10.1016/s0140-6736(10)60175-4"
    )
    odd = doi_markup("10.5555/a_b%c{")
    assert odd == r"\texttt{10.5555/a\_b\%c\textbraceleft{}}"


def test_bibtex_bbl_note_follows_multiline_label_and_is_idempotent() -> None:
    text, done = annotate_bibtex(BIBTEX_BBL, {"wakefield1998": "Retracted 2010"})
    assert done == ["Wakefield1998"]  # BibTeX keys match case-insensitively
    block = text[text.index(r"\bibitem[{Wakefield}") : text.index(r"\bibitem[Kucsko")]
    assert block.endswith("\\newblock \\textbf{Retracted 2010}" + MARK + "\n\n")
    assert text.count("Retracted") == 1
    assert text.endswith("\\end{thebibliography}\n")
    again, done_again = annotate_bibtex(text, {"wakefield1998": "Retracted 2010"})
    assert again == text and done_again == []


def test_biblatex_bbl_appends_to_existing_addendum_and_skips_verb() -> None:
    notes = {"lacour2014": "Retracted 2015", "fake": "never", "kucsko2013": "Corrected"}
    text, done = annotate_biblatex(BIBLATEX_BBL, notes)
    assert done == ["lacour2014", "kucsko2013"]
    assert r"\field{addendum}{Discussed in section 2\adddot\space\textbf{Retracted 2015}}" in text
    kucsko = text[text.index(r"\entry{kucsko2013}") :]
    assert kucsko.index(r"\field{addendum}{\textbf{Corrected}}") < kucsko.index(r"\endentry")
    assert "never" not in text
    assert is_biblatex(BIBLATEX_BBL) and not is_biblatex(BIBTEX_BBL)


def test_hook_arguments_split_and_locate(tmp_path: Path) -> None:
    opts, rest = split_hook_args(["--policy", "strict", "--offline", "-terse", "paper"])
    assert opts.policy == "strict" and opts.offline is True
    assert rest == ["-terse", "paper"]
    opts, rest = split_hook_args(["--", "--policy"])
    assert opts.policy is None and rest == ["--policy"]
    assert locate_bibtex(["-min-crossrefs=3", "out/paper"]) == (
        Path("out/paper.aux"),
        Path("out/paper.bbl"),
    )
    (tmp_path / "paper.bcf").write_text("<bcf/>")
    bcf, bbl = locate_biber(["--output-directory", str(tmp_path), "paper"])
    assert (bcf, bbl) == (tmp_path / "paper.bcf", tmp_path / "paper.bbl")


def test_rw_latexmk_arguments() -> None:
    names = {k: v for k, v in own_options().items() if k.startswith("--") and k != "--tex"}
    inv = split_args(
        ["-pdf", "--policy=strict", "-e", "$x=1;", "paper", "--fail-on", "corrected", "-f"], names
    )
    assert inv.own == ["--policy=strict", "--fail-on", "corrected"]
    assert inv.latexmk == ["-pdf", "-e", "$x=1;", "-f"]
    assert inv.files == ["paper"] and inv.gate
    assert not split_args(["-C", "paper.tex"], names).gate


def test_build_dirs_from_latexmk(tmp_path: Path) -> None:
    tex = tmp_path / "src" / "paper.tex"
    build = build_from_latexmk(tex, tmp_path, "out\n\n0\n%A-v2\n")
    assert build.out_dir == build.aux_dir == tmp_path / "out"
    assert build.bbl == tmp_path / "out" / "paper-v2.bbl"
    cd = build_from_latexmk(tex, tmp_path, "out\naux\n1\n\n")
    assert (cd.out_dir, cd.aux_dir, cd.job) == (tex.parent / "out", tex.parent / "aux", "paper")


def test_hook_reports_missing_tool_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RWGATE_BIBTEX", "/nonexistent/bibtex")
    run = subprocess.run(
        [sys.executable, "-m", "rwgate", "bibtex", "paper"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2
    assert run.stderr.strip().count("\n") == 0
    assert "cannot run /nonexistent/bibtex" in run.stderr


def test_rw_latexmk_needs_a_file() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "rwgate", "latexmk", "-pdf"], capture_output=True, text=True
    )
    assert run.returncode == 2
    assert "give the .tex file" in run.stderr


def test_the_aux_lines_bibtex_reads_ignore_bibcite_lines_but_not_citations(tmp_path) -> None:
    from rwgate.frontends.latex.memo import aux_cites

    aux = tmp_path / "paper.aux"
    chapter = tmp_path / "chap.aux"
    chapter.write_text("\\relax\n\\citation{b}\n")
    aux.write_text("\\relax\n\\citation{a}\n\\@input{chap.aux}\n\\bibdata{refs}\n")
    first = aux_cites(str(aux))
    aux.write_text(aux.read_text() + "\\bibcite{a}{1}\n\\gdef \\@abspage@last{1}\n")
    assert aux_cites(str(aux)) == first
    chapter.write_text("\\relax\n\\citation{b}\n\\citation{c}\n")
    assert aux_cites(str(aux)) != first
    assert aux_cites(str(tmp_path / "none.aux")) is None


def test_bibtex_entry_that_itself_says_rwgate_is_still_annotated() -> None:
    bbl = BIBTEX_BBL.replace("G.~Kucsko.", "G.~Kucsko. 100\\% rwgate")
    text, done = annotate_bibtex(bbl, {"kucsko2013": "Retracted 2020"})
    assert done == ["kucsko2013"] and "\\textbf{Retracted 2020}" + MARK in text


def test_biblatex_bbl_is_annotated_once_and_keys_are_case_sensitive() -> None:
    notes = {"lacour2014": "Retracted 2015", "Kucsko2013": "Corrected"}
    text, done = annotate_biblatex(BIBLATEX_BBL, notes)
    assert done == ["lacour2014"]  # biber: Kucsko2013 is not kucsko2013
    assert "Corrected" not in text
    again, done_again = annotate_biblatex(text, notes)
    assert again == text and done_again == []
    assert text.count("Retracted 2015") == 1


def test_a_pass_memo_that_is_not_a_record_is_not_replayed(tmp_path, monkeypatch) -> None:
    from rwgate.frontends.latex.memo import ENV_BUILD, pass_door
    from rwgate.verdicts.remembered import through

    monkeypatch.setenv("RWGATE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RWGATE_LATEX_GATE", "0")
    monkeypatch.setenv(ENV_BUILD, "one")
    entry = pass_door("bibtex", tmp_path / "paper.aux", tmp_path / "paper.bbl")
    assert entry is not None
    entry.path.parent.mkdir(parents=True)
    for junk in ("[1, 2]", '"build"', "null", '{"layout": "rwgate-record/1", "payload": 1}'):
        entry.path.write_text(junk)
        assert through(entry, lambda payload: "replayed", lambda: ("judged", None)) == "judged"
    monkeypatch.setenv("RWGATE_LATEX_OVERRIDES", '{"no_cache": true}')
    assert pass_door("bibtex", tmp_path / "paper.aux", tmp_path / "paper.bbl") is None


def test_ungated_latexmk_lets_each_hook_gate_and_judge(tmp_path, monkeypatch) -> None:
    """-pvc never returns to rw-latexmk: the hooks must not skip their gate or reuse a verdict."""
    from rwgate.frontends.latex.hooks import ENV_GATE
    from rwgate.frontends.latex.latexmk_run import latexmk_env
    from rwgate.frontends.latex.memo import ENV_BUILD

    monkeypatch.setenv(ENV_GATE, "0")
    monkeypatch.setenv(ENV_BUILD, "leaked")
    ungated = latexmk_env(tmp_path / "paper.tex", {}, None)
    assert ENV_GATE not in ungated and ENV_BUILD not in ungated
    gated = latexmk_env(tmp_path / "paper.tex", {}, tmp_path / "dirs")
    assert gated[ENV_GATE] == "0" and gated[ENV_BUILD] not in ("", "leaked")


def test_rejecting_an_output_that_cannot_be_moved_names_it(tmp_path: Path) -> None:
    from rwgate.frontends.latex.gate import reject_outputs

    build = build_from_latexmk(tmp_path / "paper.tex", tmp_path, "\n\n0\n\n")
    (tmp_path / "paper.pdf").write_bytes(b"%PDF")
    (tmp_path / "paper.dvi").write_bytes(b"dvi")
    (tmp_path / "paper.pdf.rejected").mkdir()
    (tmp_path / "paper.pdf.rejected" / "x").write_text("x")
    moved = dict(reject_outputs(build))
    assert isinstance(moved[tmp_path / "paper.pdf"], str)
    assert moved[tmp_path / "paper.dvi"] == tmp_path / "paper.dvi.rejected"


def test_hook_report_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "paper.aux").write_text("\\citation{a}\n\\bibdata{refs}\n")
    (tmp_path / "refs.bib").write_text("@article{a, title={A}, doi={10.5555/a}}\n")
    (tmp_path / "paper.bbl").write_text(
        "\\begin{thebibliography}{1}\n\\bibitem{a} A.\n\\end{thebibliography}\n"
    )
    (tmp_path / "blocker").write_text("a file, not a folder")
    env = {
        **os.environ,
        "RWGATE_BIBTEX": "true",
        "RWGATE_OFFLINE": "1",
        "RWGATE_NO_CACHE": "1",
        "RWGATE_SNAPSHOT": str(tmp_path / "none.sqlite"),
        "RWGATE_REPORT": str(tmp_path / "blocker" / "report.json"),
    }
    run = subprocess.run(
        [sys.executable, "-m", "rwgate", "bibtex", "paper"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env=env,
    )
    assert run.returncode == 2, run.stderr
    error = run.stderr.strip().splitlines()[-1]
    assert error.startswith("rwgate bibtex: error:") and "cannot write report" in error
    assert "Traceback" not in run.stderr


def test_hook_and_check_agree_on_a_remote_bibliography() -> None:
    """The hooks read the .bcf through the same resolver as ``rwgate check``: a URL is a
    warning (never fetched), not a missing file."""
    from rwgate.readers.builds.latexdoc import bcf_document

    folder = Path(__file__).parents[1] / "fixtures" / "manuscripts" / "biblatex"
    doc = bcf_document(folder / "paper.bcf", [folder])
    assert doc.bibliographies == [
        str((folder / "refs.bib").resolve()),
        str((folder / "more.bib").resolve()),
    ]
    (remote,) = doc.problems
    assert remote.severity == "warning" and "remote bibliography not checked" in remote.message


def _hook_pass(folder: Path, build: str | None) -> tuple[str, str]:
    """``rwgate bibtex paper`` as rw-latexmk's gated build runs it (the real tool's part is
    ``true``): whether Pydantic was loaded, and what the hook printed."""
    env = {
        **os.environ,
        "RWGATE_LATEX_GATE": "0",
        "RWGATE_BIBTEX": "true",
        "RWGATE_OFFLINE": "1",
        "RWGATE_CACHE_DIR": str(folder / "cache"),
        "RWGATE_SNAPSHOT": str(folder / "none.sqlite3"),
    }
    env.pop("RWGATE_LATEX_BUILD", None)
    if build is not None:
        env["RWGATE_LATEX_BUILD"] = build
    probe = (
        "import sys; from rwgate.frontends.cli.main import main; code = main(['bibtex', 'paper']);"
        "print('PYDANTIC' if 'pydantic' in sys.modules else 'LIGHT', code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=folder, env=env, capture_output=True, text=True
    )
    assert done.stdout.split()[1:] == ["0"], done.stderr
    return done.stdout.split()[0], done.stderr


def test_a_later_pass_of_the_same_build_replays_without_pydantic(tmp_path) -> None:
    """The point of the pass memo is start-up cost: no models on that path. It replays only in
    the same build, for the same cite lines (not the \\bibcite lines a pass adds) and .bib."""
    aux, bib = tmp_path / "paper.aux", tmp_path / "refs.bib"
    aux.write_text("\\citation{a}\n\\bibdata{refs}\n")
    bib.write_text("@article{a, title={A}, doi={10.5555/a}}\n")
    (tmp_path / "paper.bbl").write_text(
        "\\begin{thebibliography}{1}\n\\bibitem{a} A.\n\\end{thebibliography}\n"
    )
    reused = "this build's verdict reused"
    assert reused not in _hook_pass(tmp_path, "b1")[1]
    aux.write_text(aux.read_text() + "\\bibcite{a}{1}\n")
    loaded, said = _hook_pass(tmp_path, "b1")
    assert loaded == "LIGHT" and reused in said
    assert reused not in _hook_pass(tmp_path, "b2")[1]  # another build
    assert reused not in _hook_pass(tmp_path, None)[1]  # plain latexmk: never
    aux.write_text("\\citation{a}\n\\citation{z}\n\\bibdata{refs}\n")
    assert reused not in _hook_pass(tmp_path, "b2")[1]  # the citations moved: judge again
    assert reused in _hook_pass(tmp_path, "b2")[1]
    bib.write_text(bib.read_text() + "@article{z, title={Z}}\n")
    assert reused not in _hook_pass(tmp_path, "b2")[1]  # the .bib is in the record
