"""Issue 28 through rw-latexmk with real BibTeX: the IEEEabrv stream of @strings, an entry with
no key under \\nocite{*}, and a stray Latin-1 byte beside a UTF-8 key. Each retracted work the PDF
prints gets its note (default policy), and strict refuses the build."""

from __future__ import annotations

import subprocess

from test_latex_build import doc, pdf_text, rw_latexmk  # noqa: F401 (fixtures)

from conftest import require_tool
from fakes.crossref import FakeCrossref

W = "10.1016/S0140-6736(97)11096-0"  # Wakefield 1998 (Lancet notice 2010)
LACOUR = "10.1126/science.1256151"  # LaCour 2014 (Science notice 2015)


def _tex(cite: str, bibs: str) -> str:
    return (
        "\\documentclass{article}\\usepackage[utf8]{inputenc}\\begin{document}"
        f"See {cite}.\\bibliographystyle{{plain}}\\bibliography{{{bibs}}}\\end{{document}}\n"
    )


def test_ieeeabrv_macros_reach_refs_bib(doc, fake_crossref: FakeCrossref) -> None:  # noqa: F811
    """``\\bibliography{IEEEabrv,refs}``: ``IEEE_J_AC`` and ``wdoi`` are defined by the earlier
    files (IEEEabrv from TeX Live, then the user's own abbreviations)."""
    assert require_tool("kpsewhich")
    found = subprocess.run(["kpsewhich", "IEEEabrv.bib"], capture_output=True, text=True)
    assert found.stdout.strip(), "IEEEabrv.bib is not in this TeX installation"
    (doc / "mine.bib").write_text(f'@string{{wdoi = "{W}"}}\n', encoding="utf-8")
    (doc / "refs.bib").write_text(
        "@article{w, author={A. Wakefield}, title={Ileal}, journal=IEEE_J_AC, year=1998,"
        " doi=wdoi}\n",
        encoding="utf-8",
    )
    (doc / "ieee.tex").write_text(_tex("\\cite{w}", "IEEEabrv,mine,refs"), encoding="utf-8")
    built = rw_latexmk("ieee.tex")
    assert built.returncode == 0, built.stderr
    text = pdf_text(doc / "ieee.pdf")
    assert "IEEETrans.Autom.Control" in text  # BibTeX read the macro too
    assert "Retracted2010" in text, text
    strict = rw_latexmk("--policy", "strict", "-g", "ieee.tex")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "w: retracted" in strict.stderr


def test_an_entry_without_a_key_fails_strict(doc, fake_crossref: FakeCrossref) -> None:  # noqa: F811
    (doc / "refs.bib").write_text(
        "@article{ , author={M. LaCour and D. Green}, title={When contact changes minds},"
        f" journal={{Science}}, year=2014, doi={{{LACOUR}}}}}\n"
        "@article{other, author={A. B}, title={Fine}, journal={J}, year=2020}\n",
        encoding="utf-8",
    )
    (doc / "nokey.tex").write_text(_tex("\\nocite{*}", "refs"), encoding="utf-8")
    built = rw_latexmk("-f", "nokey.tex")
    text = pdf_text(doc / "nokey.pdf")
    assert "LaCour" in text and "Retracted2015" in text, text  # BibTeX prints it, with its note
    assert "(no key at refs.bib:1)" in built.stderr + built.stdout
    strict = rw_latexmk("--policy", "strict", "-g", "nokey.tex")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "(no key at refs.bib:1): retracted" in strict.stderr


def test_a_stray_byte_leaves_a_utf8_key_cited(doc, fake_crossref: FakeCrossref) -> None:  # noqa: F811
    (doc / "refs.bib").write_bytes(
        b"@article{other, author={J. Cafe}, title={Naive}, journal={J}, year=2001,"
        b" abstract={Caf\xe9 na\xefve}}\n"  # a Latin-1 accent in an abstract nobody prints
        + (
            "@article{müller2010, author={A. Wakefield}, title={Ileal}, journal={Lancet},"
            f" year=1998, doi={{{W}}}}}\n"
        ).encode()
    )
    (doc / "bytes.tex").write_text(_tex("\\cite{müller2010,other}", "refs"), encoding="utf-8")
    built = rw_latexmk("bytes.tex")
    assert built.returncode == 0, built.stderr
    assert "Retracted2010" in pdf_text(doc / "bytes.pdf")
    strict = rw_latexmk("--policy", "strict", "-g", "bytes.tex")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "müller2010: retracted" in strict.stderr
