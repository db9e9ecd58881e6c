"""rw-latexmk and the bibtex/biber hooks with the real latexmk, pdflatex, bibtex and biber.

Each test builds small documents from tests/fixtures/latex in a temporary folder against the fake
Crossref, then reads the typeset PDF with pdftotext. Set RWGATE_REQUIRE_TOOLS=1 (CI does) to make
a missing TeX tool a failure instead of a skip.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.crossref import FakeCrossref

FIXTURES = Path(__file__).parents[1] / "fixtures" / "latex"
TOOLS = ("latexmk", "pdflatex", "bibtex", "biber", "pdftotext", "kpsewhich")
BIN = Path(sys.executable).parent
HOSTILE = r"\input{/etc/passwd}\write18{touch${IFS}pwned}%#_&~^$<>|{"
HOSTILE_NOTICE = "10.5555/rw" + HOSTILE.replace("<>|{", "")


@pytest.fixture(autouse=True)
def _tools() -> None:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing and os.environ.get("RWGATE_REQUIRE_TOOLS") == "1":
        pytest.fail(f"TeX tools missing: {', '.join(missing)}")
    if missing:
        pytest.skip(f"TeX tools missing: {', '.join(missing)}")


@pytest.fixture
def doc(tmp_path: Path, fake_crossref: FakeCrossref, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the LaTeX fixtures, built against the fake Crossref."""
    folder = tmp_path / "doc"
    shutil.copytree(FIXTURES, folder)
    fake_crossref.add_synthetic("10.5555/rwgate.later", title="A later work")
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def unchanged(doc: Path) -> Iterator[None]:
    """The user's .tex and .bib files are byte-identical after every build of the test."""
    before = _hashes(doc)
    yield
    assert _hashes(doc) == before


def _hashes(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.suffix in (".tex", ".bib")
    }


def rw_latexmk(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [str(BIN / "rw-latexmk"), "-pdf", "-interaction=nonstopmode", "-halt-on-error", *args]
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        errors="replace",
        stdin=subprocess.DEVNULL,
        timeout=180,
        check=False,
    )


def squeeze(text: str) -> str:
    """Text without whitespace: line breaks inside DOIs and URLs do not matter."""
    return "".join(text.split())


def pdf_text(path: Path) -> str:
    """The typeset text of a PDF, whitespace removed (compare with :func:`squeeze`d strings)."""
    out = subprocess.run(["pdftotext", "-raw", str(path), "-"], capture_output=True, check=True)
    return squeeze(out.stdout.decode("utf-8"))


def entry_text(text: str, start: str, stop: str | None = None) -> str:
    """The typeset text from ``start`` up to ``stop`` (or the end)."""
    start, stop = squeeze(start), squeeze(stop) if stop else None
    tail = text[text.index(start) :]
    return tail[: tail.index(stop)] if stop and stop in tail else tail


def contains(text: str, expected: str) -> bool:
    return squeeze(expected) in text


def test_natbib_include_outdir_then_strict_rejects(doc: Path, unchanged: None) -> None:
    run = rw_latexmk("-outdir=out", "natbib.tex")
    assert run.returncode == 0, run.stderr + run.stdout
    text = pdf_text(doc / "out" / "natbib.pdf")
    assert contains(text, "Retracted 2010; notice doi:10.1016/s0140-6736(10)60175-4")
    assert contains(
        text, "Retracted 2015; notice doi:10.1126/science.aac6638"
    )  # from \include{chapter}
    assert contains(text, "Nanometre-scale thermometry in a living cell")
    assert text.count("Retracted") == 2  # clean works (both .bib files) carry no note
    assert not contains(text, "Watson")  # more.bib is searched, but only cited works are typeset

    strict = rw_latexmk("--policy", "strict", "-outdir=out", "natbib.tex")
    assert strict.returncode == 1
    failed = strict.stderr[strict.stderr.index("gate FAILED for") :]
    assert re.search(r"wakefield1998: retracted 2010, notice doi:.*refs\.bib:3", failed)
    assert re.search(r"lacour2014: retracted 2015, notice doi:.*refs\.bib:12", failed)
    assert "kucsko2013" not in failed
    assert not (doc / "out" / "natbib.pdf").exists()
    assert (doc / "out" / "natbib.pdf.rejected").is_file()

    again = rw_latexmk("-outdir=out", "natbib.tex")
    assert again.returncode == 0, again.stderr
    assert (doc / "out" / "natbib.pdf").is_file()
    assert not (doc / "out" / "natbib.pdf.rejected").exists()


def test_verdict_change_reruns_bibtex(doc: Path, fake_crossref: FakeCrossref) -> None:
    first = rw_latexmk("--no-cache", "natbib.tex")
    assert first.returncode == 0, first.stderr
    assert contains(pdf_text(doc / "natbib.pdf"), "A work that is retracted")
    assert not contains(pdf_text(doc / "natbib.pdf"), "Retracted 2024")

    notice = {
        "DOI": "10.5555/rwgate.later-retraction",
        "type": "retraction",
        "label": "Retraction",
        "source": "retraction-watch",
        "updated": {"date-parts": [[2024, 5, 1]]},
        "record-id": "99999",
    }
    fake_crossref.add_synthetic("10.5555/rwgate.later", updated_by=[notice])
    second = rw_latexmk("--no-cache", "natbib.tex")
    assert second.returncode == 0, second.stderr
    assert "verdict changed" in second.stderr
    assert "rwgate bibtex: annotated later2020" in second.stdout + second.stderr
    later = entry_text(pdf_text(doc / "natbib.pdf"), "A work that is retracted")
    assert contains(later, "Retracted 2024; notice doi:10.5555/rwgate.later-retraction")

    third = rw_latexmk("--no-cache", "natbib.tex")  # nothing changed: latexmk does nothing
    assert third.returncode == 0
    assert "verdict changed" not in third.stderr
    assert "rwgate bibtex" not in third.stdout + third.stderr


def test_biblatex_numeric_nocite_all_two_resources(doc: Path, unchanged: None) -> None:
    run = rw_latexmk("biblatex-numeric.tex")
    assert run.returncode == 0, run.stderr + run.stdout
    text = pdf_text(doc / "biblatex-numeric.pdf")
    assert contains(text, "Molecular Structure of Nucleic Acids")  # \nocite{*} over more.bib
    wakefield = entry_text(text, "Ileal-lymphoid", "Watson")
    assert contains(wakefield, "Retracted 2010; notice doi:10.1016/s0140-6736(10)60175-4")
    lacour = entry_text(text, "LaCour", "Synthetic")
    # the entry's own addendum is kept and the note follows it
    assert contains(
        lacour, "Discussed in section 2. Retracted 2015; notice doi:10.1126/science.aac6638"
    )
    assert text.count("Retracted") == 2


def test_biblatex_authoryear_with_hyperref(doc: Path, unchanged: None) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "rwgate", "latexmk", "-pdf", "-outdir=build", "biblatex-authoryear"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=180,
        check=False,
    )
    assert run.returncode == 0, run.stderr + run.stdout
    text = pdf_text(doc / "build" / "biblatex-authoryear.pdf")
    assert contains(text, "LaCour and Green")
    assert contains(text, "Retracted 2015; notice doi:10.1126/science.aac6638")
    assert not contains(text, "Retracted 2010")  # wakefield1998 is not cited here
    raw = (doc / "build" / "biblatex-authoryear.pdf").read_bytes()
    assert b"https://doi.org/10.1126/science.aac6638" in raw  # the notice DOI is a link


@pytest.mark.parametrize("name", ["hostile", "hostile-biblatex"])
def test_hostile_upstream_strings_typeset_literally(
    name: str, doc: Path, fake_crossref: FakeCrossref, unchanged: None
) -> None:
    notice = {
        "DOI": HOSTILE_NOTICE,
        "type": "retraction",
        "source": "retraction-watch",
        "updated": {"date-parts": [[2021, 1, 2]]},
    }
    fake_crossref.add_synthetic(
        "10.5555/rwgate.hostile", updated_by=[notice], title=f"Title {HOSTILE}"
    )
    (doc / "rwgate.toml").write_text(
        'template = "{{ label }} {{ year }}; notice doi:{{ notice_doi }}; title: {{ title }}"\n'
    )
    run = rw_latexmk(f"{name}.tex")
    assert run.returncode == 0, run.stderr + run.stdout
    assert not (doc / "pwned").exists()
    text = pdf_text(doc / f"{name}.pdf")
    assert contains(text, f"Retracted 2021; notice doi:{HOSTILE_NOTICE.lower()}; title:")
    assert contains(text, f"title: Title {HOSTILE}")


def test_latexmkrc_example_hooks_and_strict_exit(
    doc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rc = Path(__file__).parents[2] / "latexmkrc.example"
    cmd = ["latexmk", "-r", str(rc), "-pdf", "-interaction=nonstopmode", "natbib.tex"]
    run = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=180)
    assert run.returncode == 0, run.stderr + run.stdout
    assert contains(pdf_text(doc / "natbib.pdf"), "Retracted 2010")
    assert (doc / "natbib.rwgate.json").is_file()
    said = run.stderr + run.stdout
    # One report per build: a later pass with the same verdict says so in one line.
    assert said.count("rwgate: citations:") == 1, said

    monkeypatch.setenv("RWGATE_POLICY", "strict")
    (doc / "natbib.bbl").unlink()
    run = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=180)
    assert run.returncode != 0
    assert "gate FAILED" in run.stderr + run.stdout
