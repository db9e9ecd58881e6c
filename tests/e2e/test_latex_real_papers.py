"""Issue 19 on real public material (tests/fixtures/real-latex/README.md says where from): a real
revtex4-2 paper as an arXiv-style bundle and rebuilt from its own .bib, and a real project
latexmkrc (``@default_files``, ``$jobname``, ``$out_dir``, ``$success_cmd``), through rw-latexmk,
default and strict. The user's files stay byte-identical; the notes are in the PDF."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pytest
from test_latex_build import pdf_text, rw_latexmk

from conftest import require_tool

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "fixtures" / "real-latex"
EXAMPLES = ROOT / "examples"
WAKEFIELD = "10.1016/S0140-6736(97)11096-0"  # retracted 2010 (Retraction Watch record 4036)
VICTIM = "10.1126/science.1166767"  # the paper's own citation of Mühlbauer et al., Science 2009


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_crossref) -> Path:
    """The fake Crossref knows every DOI of the paper (clean) and the fixture works."""
    for name in ("main.bbl", "ref.bib"):
        text = (REAL / "aps-3he-nsf" / name).read_text(encoding="utf-8")
        for doi in re.findall(r"(?:doi\.org/|doi = \{)(10\.[^}\s]+)\}", text):
            if doi.lower() != VICTIM:
                fake_crossref.add_synthetic(doi.lower(), title="A work of the paper")
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    require_tool("latexmk")
    return tmp_path


def _paper(folder: Path, with_bib: bool) -> dict[str, str]:
    """The paper in ``folder`` (figures blank, mhchem dropped); the hashes of the user's files."""
    folder.mkdir()
    tex = (REAL / "aps-3he-nsf" / "main.tex").read_text(encoding="utf-8")
    tex = tex.replace("\\usepackage[version=4]{mhchem}", "\\providecommand{\\ce}[1]{#1}")
    (folder / "main.tex").write_text(tex, encoding="utf-8")
    for figure in set(re.findall(r"\\includegraphics(?:\[[^\]]*\])?\{([^}]+)\}", tex)):
        (folder / figure).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REAL / "blank.pdf", folder / figure)
    if with_bib:
        bib = (REAL / "aps-3he-nsf" / "ref.bib").read_text(encoding="utf-8")
        field = "doi = {" + VICTIM + "}"
        assert bib.count(field) == 2  # the .bib holds the work twice, under two keys
        bib = bib.replace(field, "doi = {" + WAKEFIELD + "}")
        (folder / "ref.bib").write_text(bib, encoding="utf-8")
    else:
        bbl = (REAL / "aps-3he-nsf" / "main.bbl").read_text(encoding="utf-8")
        assert bbl.count(f"https://doi.org/{VICTIM}") == 1
        (folder / "main.bbl").write_text(bbl.replace(VICTIM, WAKEFIELD), encoding="utf-8")
    return _hashes(folder)


def _hashes(folder: Path) -> dict[str, str]:
    """The user's files (revtex writes its own mainNotes.bib: not the user's)."""
    names = ["main.tex", "ref.bib" if (folder / "ref.bib").exists() else "main.bbl"]
    return {n: hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in names}


def test_real_revtex_paper_as_an_arxiv_bundle(offline: Path, monkeypatch) -> None:
    folder = offline / "bundle"
    before = _paper(folder, with_bib=False)
    monkeypatch.chdir(folder)
    built = rw_latexmk("main.tex")
    said = built.stdout + built.stderr
    assert built.returncode == 0, said[-3000:]
    assert _hashes(folder) == before  # the user's .bbl: never deleted, never rewritten
    assert "muhlbauer_skyrmion_2009: retracted" in said.lower()
    assert "18 cited" in said  # the .tex cites 18 of the 21 entries of its committed .bbl
    text = pdf_text(folder / "main.pdf")
    assert "Polarizedneutronscattering" in text
    assert "Retracted" in text  # issue 38: LaTeX read an annotated copy of the user's .bbl
    strict = rw_latexmk("--policy", "strict", "main.tex")
    assert strict.returncode == 1
    failing = [
        ln for ln in strict.stderr.splitlines() if ln.startswith("  ") and "; published" in ln
    ]
    assert [ln.split(":")[0].strip() for ln in failing] == ["muhlbauer_skyrmion_2009"]
    assert _hashes(folder) == before and (folder / "main.pdf.rejected").exists()


def test_real_revtex_paper_rebuilt_from_its_bib(offline: Path, monkeypatch) -> None:
    folder = offline / "rebuilt"
    before = _paper(folder, with_bib=True)
    monkeypatch.chdir(folder)
    built = rw_latexmk("main.tex")
    assert built.returncode == 0, (built.stdout + built.stderr)[-3000:]
    assert _hashes(folder) == before
    bbl = (folder / "main.bbl").read_text(encoding="utf-8")
    start = bbl.index("{muhlbauer_skyrmion_2009}")
    assert start < bbl.index("Retracted 2010", start) < bbl.index("\\BibitemShut", start)
    assert bbl.count("Retracted 2010") == 1  # the flagged entry only
    text = pdf_text(folder / "main.pdf")
    assert "Retracted2010;noticedoi:10.1016/s0140-6736(10)60175-4" in text
    strict = rw_latexmk("--policy", "strict", "main.tex")
    assert strict.returncode == 1 and "muhlbauer_skyrmion_2009" in strict.stderr
    assert not (folder / "main.pdf").exists()


def _project(folder: Path, latexmkrc: str) -> Path:
    """A small paper citing two example works, built with a real project's latexmkrc."""
    folder.mkdir()
    shutil.copy(REAL / latexmkrc / "latexmkrc", folder / ".latexmkrc")
    shutil.copy(EXAMPLES / "refs.bib", folder / "refs.bib")
    (folder / "main.tex").write_text(
        "\\documentclass{article}\n\\usepackage{url}\n\\begin{document}\n"
        "Vaccines \\cite{wakefield1998}; DNA \\cite{watson1953}.\n"
        "\\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}\n",
        encoding="utf-8",
    )
    return folder


def test_real_project_latexmkrc(offline: Path, monkeypatch) -> None:
    """No file argument (@default_files), jobname `build` in ./build, and the project's
    $success_cmd, which copies the PDF: it runs after a passing gate, never after a failing one."""
    folder = _project(offline / "thesis", "dparo-master-thesis")
    monkeypatch.chdir(folder)
    strict = rw_latexmk("--policy", "strict")
    said = strict.stdout + strict.stderr
    assert strict.returncode == 1, said[-3000:]
    assert "wakefield1998: retracted" in said.lower()
    assert "the project's $success_cmd was not run: the gate failed" in said
    assert (folder / "build" / "build.pdf.rejected").exists()
    assert not (folder / "build" / "main.pdf").exists()  # the copy the project makes
    built = rw_latexmk()
    assert built.returncode == 0, (built.stdout + built.stderr)[-3000:]
    copy = folder / "build" / "main.pdf"
    assert copy.exists() and "Retracted2010" in pdf_text(copy)


def test_real_project_bibtex_command_without_placeholders(offline: Path, monkeypatch) -> None:
    """The project's `$bibtex = 'bibtex -min-crossrefs=99';` has no %O/%S: latexmk appends
    " %O %B" itself, and the wrapped command must too (it ran `bibtex -min-crossrefs=99` with no
    file, wrote no .bbl, and the build failed, exit 12)."""
    folder = _project(offline / "die", "fuyu0425-die")
    monkeypatch.chdir(folder)
    built = rw_latexmk("main.tex")
    said = built.stdout + built.stderr
    assert built.returncode == 0, said[-3000:]
    assert "Running 'bibtex -min-crossrefs=99" in said and '"main"' in said
    assert "Retracted2010" in pdf_text(folder / "main.pdf")
    strict = rw_latexmk("--policy", "strict", "main.tex")
    assert strict.returncode == 1 and "wakefield1998" in strict.stderr


ZOTERO = REAL / "zotero-shortdoi" / "zotero.bib"
SHORT = {"10/ggsxh2": "10.1063/1.5109741", "10/ggn9hw": "10.1609/aimag.v29i3.2157"}
# The works' own titles and years (as the Zotero export gives them): the DOI must name the entry.
WORKS = {
    "10.1063/1.5109741": (
        "An adaptive stair-ascending gait generation approach based on depth camera for lower"
        " limb exoskeleton",
        2019,
    ),
    "10.1609/aimag.v29i3.2157": ("Collective Classification in Network Data", 2008),
}


@pytest.fixture
def zotero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_crossref) -> Path:
    """Two real Zotero exports that carry shortDOIs, and a retracted work, cited by a paper."""
    require_tool("latexmk")
    from example_data import entry

    (tmp_path / "zotero.bib").write_bytes(ZOTERO.read_bytes())
    (tmp_path / "refs.bib").write_text(entry("wakefield1998"), encoding="utf-8")
    (tmp_path / "paper.tex").write_text(
        "\\documentclass{article}\\begin{document}\n"
        "\\cite{zhao_adaptive_2019,senCollectiveClassificationNetwork2008,wakefield1998}\n"
        "\\bibliographystyle{plain}\\bibliography{zotero,refs}\n\\end{document}\n",
        encoding="utf-8",
    )
    for short, doi in SHORT.items():
        fake_crossref.short_dois[short] = doi
        title, year = WORKS[doi]
        fake_crossref.add_synthetic(doi, title=title, year=year)
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    monkeypatch.setenv("RWGATE_DOI_URL", fake_crossref.url)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_real_zotero_short_dois_are_resolved_not_refused(zotero: Path) -> None:
    offline = rw_latexmk("--offline", "--no-cache", "--policy", "strict", "paper.tex")
    assert offline.returncode == 1  # offline a shortDOI is unverified, with its value
    assert "shortDOI '10/ggsxh2'" in offline.stderr and "invalid" not in offline.stderr.lower()

    built = rw_latexmk("paper.tex")
    assert built.returncode == 0, built.stderr[-3000:]
    assert "3 cited, 3 checked: 0 failed, 1 annotated" in built.stderr, built.stderr[-2000:]
    assert pdf_text(zotero / "paper.pdf").count("Retracted2010") == 1

    strict = rw_latexmk("--policy", "strict", "paper.tex")
    assert strict.returncode == 1
    failing = strict.stderr.split("gate FAILED for paper.tex")[-1]
    assert "wakefield1998" in failing and "zhao_adaptive_2019" not in failing
    assert (zotero / "zotero.bib").read_bytes() == ZOTERO.read_bytes()
