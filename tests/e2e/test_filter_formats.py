"""rw-filter output in docx, LaTeX and PDF, and hostile upstream strings in every format."""

from __future__ import annotations

import hashlib
import re
import subprocess
import zipfile
from pathlib import Path

from pandoc_build import build, copy_fixtures, write_doc

from conftest import require_tool
from fakes.crossref import FakeCrossref

HOSTILE_DOI = "10.5555/hostile.2020"
HOSTILE_NOTICE = "10.5555/x<script>alert(1)</script>%#_&~\\input{evil}"
HOSTILE_TITLE = "<script>alert(1)</script> \\input{/etc/passwd} 100% #1 a_b & c~d"


def _env(fake: FakeCrossref) -> dict[str, str]:
    return {"RWGATE_CROSSREF_URL": fake.url}


def _pdftotext(pdf: Path) -> str:
    tool = require_tool("pdftotext")
    proc = subprocess.run([tool, str(pdf), "-"], capture_output=True, text=True, check=True)
    return " ".join(proc.stdout.split())


def _line_breaks_undone(text: str) -> str:
    """pdftotext drops a hyphen where TeX broke a line after it (s0140-|6736 -> s01406736), so
    DOIs are compared with their hyphens ignored; every other character must still match."""
    return text.replace("-", "")


def test_docx_carries_the_notice_with_its_style(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    copy_fixtures(tmp_path)
    out = build(tmp_path, ["--citeproc"], "out.docx", _env(fake_crossref))
    assert out.returncode == 0, out.stderr
    with zipfile.ZipFile(out.output) as docx:
        document = docx.read("word/document.xml").decode("utf-8")
        styles = docx.read("word/styles.xml").decode("utf-8")
    assert 'w:styleId="RetractionNotice"' in styles
    assert document.count('<w:rStyle w:val="RetractionNotice"') >= 3
    text = re.sub(r"<[^>]+>", "", document)
    for expected in ("Retracted 2010; notice doi:", "Withdrawn 2021; notice doi:", "aac6638"):
        assert expected in text
    assert "Retracted" not in text.split("Kucsko", 1)[1].split("LaCour", 1)[0]


def test_latex_output_has_notice_in_entries(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    copy_fixtures(tmp_path)
    args = ["--citeproc", "--csl", "numeric.csl"]
    out = build(tmp_path, args, "out.tex", _env(fake_crossref))
    assert out.returncode == 0, out.stderr
    entry = out.text.split(r"\bibitem[\citeproctext]{ref-lacour2014}", 1)[1].split(r"\bibitem")[0]
    right = entry.split(r"\CSLRightInline{", 1)[1]
    assert (
        r"Retracted 2015; notice doi:\href{https://doi.org/10.1126/science.aac6638}"
        r"{10.1126/science.aac6638}" in right
    )


def test_pdf_via_latex(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    require_tool("pdflatex")
    copy_fixtures(tmp_path)
    out = build(tmp_path, ["--citeproc"], "out.pdf", _env(fake_crossref))
    assert out.returncode == 0, out.stderr
    text = _line_breaks_undone(_pdftotext(out.output))
    for expected in (
        "Retracted 2010; notice doi:10.1016/s0140-6736(10)60175-4",
        "Withdrawn 2021; notice doi:10.1002/14651858.cd009522.pub2",
    ):
        assert _line_breaks_undone(expected) in text
    assert text.count("notice doi:") == 3


def test_natbib_build_uses_shadow_bib(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    copy_fixtures(tmp_path, "paper.md", "refs.bib")
    before = hashlib.sha256((tmp_path / "refs.bib").read_bytes()).hexdigest()
    out = build(tmp_path, ["--natbib", "-s"], "paper.tex", _env(fake_crossref))
    assert out.returncode == 0, out.stderr
    assert hashlib.sha256((tmp_path / "refs.bib").read_bytes()).hexdigest() == before
    shadow = re.search(r"\\bibliography\{(\.rwgate/refs-[0-9a-f]{8}\.bib)\}", out.text)
    assert shadow is not None, out.text[-500:]
    assert "bibliography now points at .rwgate/" in out.stderr
    bib = (tmp_path / shadow.group(1)).read_text(encoding="utf-8")
    assert bib.count("Retracted 2010; notice doi:10.1016/s0140-6736(10)60175-4") == 1
    # A real BibTeX build prints the note (plainnat).
    pdflatex = require_tool("pdflatex")
    bibtex = require_tool("bibtex")
    latex = [pdflatex, "-interaction=nonstopmode", "paper.tex"]
    for cmd in (latex, [bibtex, "paper"], latex):
        subprocess.run(cmd, cwd=tmp_path, capture_output=True, check=True, timeout=120)
    text = _pdftotext(tmp_path / "paper.pdf")
    assert "Data collection questioned. Retracted 2015; notice doi:10.1126/science.aac6638" in text


def _hostile_setup(tmp_path: Path, fake: FakeCrossref) -> None:
    fake.add_synthetic(
        HOSTILE_DOI,
        title=HOSTILE_TITLE,
        updated_by=[
            {
                "DOI": HOSTILE_NOTICE,
                "type": "retraction",
                "source": "retraction-watch",
                "label": "Retraction",
                "updated": {"date-parts": [[2021, 5, 1]]},
            }
        ],
    )
    (tmp_path / "refs.bib").write_text(
        "@article{hostile, title = {Benign}, year = 2020, doi = {" + HOSTILE_DOI + "}}\n",
        encoding="utf-8",
    )
    (tmp_path / "rwgate.toml").write_text(
        'template = "{{ label }} {{ year }}: {{ title }} doi:{{ notice_doi }}"\n', encoding="utf-8"
    )
    write_doc(tmp_path / "doc.md", "bibliography: refs.bib", "Cited [@hostile].")


def test_hostile_upstream_strings_are_text_in_html(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    _hostile_setup(tmp_path, fake_crossref)
    out = build(tmp_path, ["--citeproc"], "out.html", _env(fake_crossref), document="doc.md")
    assert out.returncode == 0, out.stderr
    assert "<script>" not in out.text
    assert out.text.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 2  # title, link text
    link = re.search(r'<a href="([^"]+)">10\.5555/x&lt;script', out.text)
    assert link is not None
    assert "<" not in link.group(1) and "#" not in link.group(1)


def test_hostile_upstream_strings_are_text_in_latex_and_pdf(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    _hostile_setup(tmp_path, fake_crossref)
    out = build(tmp_path, ["--citeproc"], "out.tex", _env(fake_crossref), document="doc.md")
    assert out.returncode == 0, out.stderr
    assert r"\input{" not in out.text
    assert re.search(r"\\textbackslash(\{\}| )input", out.text)
    assert re.search(r"100\\% \\#1 a\\_b \\& c\\textasciitilde(\{\}| )d", out.text)
    require_tool("pdflatex")
    pdf = build(tmp_path, ["--citeproc"], "out.pdf", _env(fake_crossref), document="doc.md")
    assert pdf.returncode == 0, pdf.stderr
    text = _pdftotext(pdf.output)
    assert "<script>alert(1)</script> \\input{/etc/passwd} 100% #1 a_b & c~d" in text


def test_hostile_strings_in_the_shadow_bib_compile(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    _hostile_setup(tmp_path, fake_crossref)
    out = build(tmp_path, ["--natbib", "-s"], "doc.tex", _env(fake_crossref), document="doc.md")
    assert out.returncode == 0, out.stderr
    shadow = next((tmp_path / ".rwgate").glob("refs-*.bib")).read_text(encoding="utf-8")
    assert r"\input{" not in shadow and "<script>" not in shadow
    pdflatex = require_tool("pdflatex")
    bibtex = require_tool("bibtex")
    for cmd in (
        [pdflatex, "-interaction=nonstopmode", "-no-shell-escape", "doc.tex"],
        [bibtex, "doc"],
        [pdflatex, "-interaction=nonstopmode", "-no-shell-escape", "doc.tex"],
    ):
        proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, timeout=120, check=False)
        assert proc.returncode == 0, proc.stdout.decode("utf-8", "replace")[-2000:]
    text = _pdftotext(tmp_path / "doc.pdf")
    assert "\\input{/etc/passwd} 100% #1 a_b & c~d" in text


def test_refs_placeholder_without_citeproc_still_uses_shadow_bib(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    # An author's empty `::: {#refs}` (to place the bibliography) is not a rendered bibliography.
    copy_fixtures(tmp_path, "refs.bib")
    body = "Cited [@wakefield1998].\n\n::: {#refs}\n:::\n\nAppendix."
    write_doc(tmp_path / "doc.md", "bibliography: refs.bib", body)
    out = build(tmp_path, ["--natbib", "-s"], "doc.tex", _env(fake_crossref), document="doc.md")
    assert out.returncode == 0, out.stderr
    assert re.search(r"\\bibliography\{\.rwgate/refs-[0-9a-f]{8}\.bib\}", out.text), out.stderr
    assert r"\citep{wakefield1998} {{[}Retracted 2010; notice" in out.text  # and at the citation


def test_own_ref_div_is_not_a_bibliography_entry(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    copy_fixtures(tmp_path, "refs.bib")
    body = "::: {#ref-wakefield1998}\nMy own note.\n:::\n\nCited [@wakefield1998]."
    write_doc(tmp_path / "doc.md", "bibliography: refs.bib", body)
    out = build(tmp_path, ["--citeproc"], "out.html", _env(fake_crossref), document="doc.md")
    assert out.returncode == 0, out.stderr
    own = out.text.split("My own note.", 1)[1].split("</div>", 1)[0]
    assert "rw-notice" not in own
    assert out.text.count('class="rw-notice rw-retracted"') == 1


def test_jats_carries_the_notice_with_or_without_element_citations(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    """With +element_citations pandoc builds <element-citation> from the metadata, not from the
    rendered entry: the notice must then be beside the citation, never only claimed on stderr."""
    for fmt in ("jats", "jats+element_citations", "jats_articleauthoring"):
        copy_fixtures(tmp_path)
        out = build(tmp_path, ["--citeproc", "-s", "-t", fmt], "out.xml", _env(fake_crossref))
        assert out.returncode == 0, out.stderr
        assert out.text.count("Retracted 2010; notice doi:") >= 1, fmt
        assert 'content-type="rw-marker' in out.text, fmt
        assert "JATS output: a notice also follows each citation" in out.stderr


def test_pandoc_natbib_output_built_by_rw_latexmk_prints_the_notice_once(
    tmp_path: Path, fake_crossref: FakeCrossref
) -> None:
    """pandoc --natbib (the notice in the shadow .bib's note) then rw-latexmk (which annotates the
    .bbl): once, and capitalised under elsarticle-harv, which lower-cases note fields."""
    import os
    import sys

    require_tool("latexmk")
    if subprocess.run(["kpsewhich", "elsarticle-harv.bst"], capture_output=True).returncode:
        require_tool("elsarticle-harv.bst (texlive-publishers)")
    copy_fixtures(tmp_path, "paper.md", "refs.bib")
    args = ["--natbib", "-s", "-M", "biblio-style=elsarticle-harv"]
    out = build(tmp_path, args, "paper.tex", _env(fake_crossref))
    assert out.returncode == 0, out.stderr
    env = {**os.environ, **_env(fake_crossref)}
    rw_latexmk = str(Path(sys.executable).with_name("rw-latexmk"))
    proc = subprocess.run(
        [rw_latexmk, "-pdf", "-interaction=nonstopmode", "paper.tex"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    text = _pdftotext(tmp_path / "paper.pdf")
    # Once in the entry (the shadow's note; rw-latexmk adds no second), and after the citations
    # (a natbib hand-off cannot know that its .bst prints note: issue 28).
    entries = text.split("References")[-1]
    assert entries.count("Retracted 2010; notice doi:") == 1, text
    assert entries.count("Retracted 2015; notice doi:") == 1
    prose = text.split("References")[0]
    assert prose.count("[Retracted 2010; notice doi:") == 1, text
