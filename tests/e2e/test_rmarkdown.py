"""R Markdown and bookdown through real ``rmarkdown::render`` (Debian's R packages), with the recipe
the README gives: the Lua filter in ``pandoc_args``.

rmarkdown puts the user's ``pandoc_args`` before its own ``--citeproc`` (``pandoc_convert``), so a
JSON filter there sees no bibliography. Before: with ``--filter rw-filter`` the notice followed each
citation and never reached the reference entry, ``pdf_document`` wrote ``.rwgate/refs-*.bib`` into
the project, and adding ``--citeproc`` printed the bibliography twice. The Lua filter renders the
bibliography with pandoc's citeproc itself (Debian's 2.17 has no ``pandoc.utils.citeproc``: it runs
its own binary), places the notices in the entries and leaves rmarkdown's citeproc nothing to do.
Each render runs with Debian's pandoc (``/usr/bin/pandoc``, what ``r-cran-rmarkdown`` brings) and
with a 3.x given through ``RSTUDIO_PANDOC``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from pandoc_build import FIXTURES, FLAGGED_KEYS
from pandoc_matrix import ROOT, pandoc_of

from conftest import require_tool
from fakes.crossref import FakeCrossref

LUA = ROOT / "filters" / "rwgate.lua"
ENTRY_STARTS = {  # how each entry begins (author-date in-text citations give no initials)
    "wakefield1998": "Wakefield, A",
    "lacour2014": "LaCour, M",
    "njei2011": "Njei, B",
    "kucsko2013": "Kucsko, G",
    "watson1953": "Watson, J",
}
NOTICE = re.compile(r"(Retracted|Withdrawn) 20\d\d")
FORMATS = {
    "html_document": "paper.html",
    "pdf_document": "paper.pdf",
    "word_document": "paper.docx",
    "bookdown::html_document2": "paper.html",
    "bookdown::pdf_book": "paper.pdf",
}
PANDOCS = ("debian", "3.x")


def _rmd(fmt: str, policy: str | None) -> str:
    rwgate = f"rwgate:\n  policy: {policy}\n" if policy else ""
    return f"""---
title: "Vaccines and the literature"
bibliography: refs.bib
{rwgate}output:
  {fmt}:
    pandoc_args: ["--lua-filter", "{LUA}"]
---

```{{r setup, include=FALSE}}
x <- 1

y <- 2
```

The claim [@wakefield1998] was retracted, as was the survey experiment of
@lacour2014. A Cochrane review [@njei2011] was withdrawn. Thermometry
[@kucsko2013; @watson1953] is fine.

# References
"""


def _render(
    project: Path, fmt: str, which: str, fake: FakeCrossref, policy: str | None = None
) -> subprocess.CompletedProcess[str]:
    require_tool("Rscript")
    project.mkdir()
    shutil.copy(FIXTURES / "refs.bib", project / "refs.bib")
    (project / "paper.Rmd").write_text(_rmd(fmt, policy), encoding="utf-8")
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        "RWGATE_CROSSREF_URL": fake.url,
        "HOME": str(project.parent),
    }
    if which == "debian":
        # /usr/bin/pandoc: Debian's, which r-cran-rmarkdown depends on; rmarkdown finds it on PATH
        assert Path("/usr/bin/pandoc").is_file(), "r-cran-rmarkdown brings /usr/bin/pandoc"
        env.pop("RSTUDIO_PANDOC", None)
    else:
        env["RSTUDIO_PANDOC"] = str(Path(pandoc_of("3.5")).parent)
    script = f'rmarkdown::render("paper.Rmd", output_format = "{fmt}", quiet = TRUE)'
    proc = subprocess.run(
        ["Rscript", "-e", script],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert "traceback" not in proc.stderr.lower(), proc.stderr
    return proc


def _text(path: Path) -> str:
    """The output's text, one bibliography entry a line where the format allows."""
    if path.suffix == ".html":
        html = path.read_text(encoding="utf-8")
        return re.sub(r"<[^>]+>", "", re.sub(r"</div>|</p>", "\n", html))
    if path.suffix == ".docx":
        with zipfile.ZipFile(path) as docx:
            xml = docx.read("word/document.xml").decode("utf-8")
        return re.sub(r"<[^>]+>", "", xml.replace("</w:p>", "\n"))
    done = subprocess.run(
        [require_tool("pdftotext"), str(path), "-"], capture_output=True, text=True, timeout=120
    )
    return done.stdout


def _entries(text: str) -> dict[str, str]:
    """Each work's reference entry: from its start to the next entry's (the last: 600 chars)."""
    starts = sorted((text.rindex(start), key) for key, start in ENTRY_STARTS.items())
    ends = [*(start for start, _ in starts[1:]), starts[-1][0] + 600]
    return {key: text[start:end] for (start, key), end in zip(starts, ends, strict=True)}


@pytest.mark.parametrize("which", PANDOCS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_each_flagged_note_is_in_its_entry(
    fmt: str, which: str, tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    project = tmp_path / "project"
    proc = _render(project, fmt, which, fake_crossref)
    assert proc.returncode == 0, proc.stderr
    text = re.sub(r"\s+", " ", _text(project / FORMATS[fmt]))
    entries = _entries(text)
    for key in FLAGGED_KEYS:
        assert NOTICE.search(entries[key]), (key, entries[key])
    for key in ("kucsko2013", "watson1953"):
        assert not NOTICE.search(entries[key]), (key, entries[key])
    assert len(NOTICE.findall(text)) == len(FLAGGED_KEYS)  # once each, nowhere else
    assert sorted(p.name for p in project.iterdir()) == sorted(
        ["paper.Rmd", "refs.bib", FORMATS[fmt]]
    )  # nothing else written into the project (no .rwgate/, no shadow .bib)


@pytest.mark.parametrize("which", PANDOCS)
@pytest.mark.parametrize("fmt", ["html_document", "bookdown::pdf_book"])
def test_strict_stops_the_render(
    fmt: str, which: str, tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    project = tmp_path / "project"
    proc = _render(project, fmt, which, fake_crossref, policy="strict")
    assert proc.returncode != 0
    assert "rwgate: the integrity gate stopped the build" in proc.stderr, proc.stderr
    assert sorted(p.name for p in project.iterdir()) == ["paper.Rmd", "refs.bib"]


def _book(project: Path, policy: str | None) -> None:
    """A two-chapter bookdown book whose bibliography is named in index.Rmd only."""
    project.mkdir()
    shutil.copy(FIXTURES / "refs.bib", project / "refs.bib")
    rwgate = f"rwgate:\n  policy: {policy}\n" if policy else ""
    (project / "index.Rmd").write_text(
        '---\ntitle: "A book on the literature"\nsite: bookdown::bookdown_site\n'
        f"bibliography: refs.bib\nlink-citations: true\n{rwgate}---\n\n"
        "# Introduction\n\nThe claim [@wakefield1998] was retracted.\n",
        encoding="utf-8",
    )
    (project / "01-methods.Rmd").write_text(
        "# Methods\n\n```{r}\nx <- 1\n\ny <- 2\n```\n\n"
        "The survey experiment of @lacour2014 was retracted. A Cochrane review [@njei2011] was\n"
        "withdrawn. Thermometry [@kucsko2013; @watson1953] is fine.\n",
        encoding="utf-8",
    )
    args = f'  pandoc_args: ["--lua-filter", "{LUA}"]\n'
    (project / "_output.yml").write_text(
        f"bookdown::gitbook:\n{args}bookdown::pdf_book:\n{args}", encoding="utf-8"
    )


def _render_book(project: Path, fmt: str, fake: FakeCrossref) -> subprocess.CompletedProcess[str]:
    require_tool("Rscript")
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        "RWGATE_CROSSREF_URL": fake.url,
        "HOME": str(project.parent),
    }
    script = f'bookdown::render_book("index.Rmd", "{fmt}", quiet = TRUE)'
    proc = subprocess.run(
        ["Rscript", "-e", script],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert "traceback" not in proc.stderr.lower(), proc.stderr
    return proc


def test_a_bookdown_book_carries_each_note_in_its_entry(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    """`bookdown::render_book`: gitbook splits the bibliography over the chapters (each chapter's
    entries at its end, moved there by bookdown itself); the notes move with their entries."""
    project = tmp_path / "book"
    _book(project, None)
    proc = _render_book(project, "bookdown::gitbook", fake_crossref)
    assert proc.returncode == 0, proc.stderr
    pages = {page.name: page.read_text("utf-8") for page in (project / "_book").glob("*.html")}
    entries: dict[str, list[str]] = {}
    for html in pages.values():
        found = re.findall(r'<div id="ref-([^"]+)" class="csl-entry"[^>]*>(.*?)</div>', html, re.S)
        for key, body in found:
            entries.setdefault(key, []).append(body)
    assert set(entries) == set(ENTRY_STARTS)
    for key, bodies in entries.items():
        for body in bodies:
            assert ("rw-notice" in body) == (key in FLAGGED_KEYS), (key, body)
    assert "rw-notice" in pages["index.html"] and "rw-notice" in pages["methods.html"]
    assert not (project / ".rwgate").exists()
    proc = _render_book(project, "bookdown::pdf_book", fake_crossref)
    assert proc.returncode == 0, proc.stderr
    text = re.sub(r"\s+", " ", _text(project / "_book" / "_main.pdf"))
    parts = _entries(text)
    for key in ENTRY_STARTS:
        assert bool(NOTICE.search(parts[key])) == (key in FLAGGED_KEYS), (key, parts[key])
    assert not (project / ".rwgate").exists()


def test_strict_stops_a_bookdown_book(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    project = tmp_path / "book"
    _book(project, "strict")
    proc = _render_book(project, "bookdown::gitbook", fake_crossref)
    assert proc.returncode != 0
    assert "rwgate: the integrity gate stopped the build" in proc.stderr, proc.stderr
    assert not list(project.glob("_book/*.html")) and not (project / ".rwgate").exists()
