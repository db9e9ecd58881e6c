"""Issue 46 item 4: titles read as TeX prints them, never with a word lost.

``The {\\TeX}book`` was read "The book": the decoder dropped every macro it did not know, with
the word it printed (``\\LaTeX``, ``\\BibTeX``, ``\\mbox{...}`` too), in every report and in the
title key a DOI-less entry is matched by. The tests read every title written in TeX in the .bib
files under ``tests/`` and ask that each macro found there is decoded (it prints its text, keeps
its argument, or is one that prints nothing) and that an unknown one keeps its name.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rwgate.readers.bibliographies.bibscan import scan
from rwgate.readers.bibliographies.bibtex import parse_bib
from rwgate.readers.bibliographies.texvalue import text
from rwgate.titles import fold, title_key

TESTS = Path(__file__).resolve().parents[1]
TITLE_FIELDS = ("title", "booktitle", "journal", "journaltitle", "subtitle", "shorttitle")
_MACRO = re.compile(r"\\([A-Za-z]+|[^A-Za-z\s])")
# What TeX prints nothing for (its argument neither, for the last two).
PRINTS_NOTHING = {"relax", "protect", "-", "/", "allowbreak", "noopsort", "hyphenation"}
# Markup: the argument prints, nothing of the macro's own.
MARKUP = {
    "textit", "emph", "textbf", "textsc", "textsf", "texttt", "textrm", "textup", "textsl",
    "textmd", "textnormal", "mbox", "hbox", "url", "href", "nolinkurl", "text", "mathrm",
    "mathit", "mathbf", "mathsf", "mathtt", "mathcal", "ensuremath", "textsuperscript",
    "textsubscript", "NoCaseChange", "nocase", "MakeUppercase", "MakeLowercase", "uppercase",
    "lowercase", "underline", "operatorname", "{", "}",
}  # fmt: skip


def _titles() -> list[tuple[str, str]]:
    """(where, title as written) for every title-like field with a backslash in a .bib file
    under ``tests/``."""
    found = []
    for path in sorted(TESTS.rglob("*.bib")):
        for entry in scan(path.read_bytes().decode("utf-8", "replace")).entries:
            for name in TITLE_FIELDS:
                value = entry.fields.get(name, "")
                if "\\" in value:
                    found.append((f"{path.relative_to(TESTS)}:{entry.key}:{name}", value))
    return found


def test_the_fixtures_have_tex_titles() -> None:
    macros = {m for _, title in _titles() for m in _MACRO.findall(title)}
    assert {"TeX", "LaTeX", "BibTeX", "AmS", '"', "c", "textit", "alpha"} <= macros


@pytest.mark.parametrize("name", sorted({m for _, t in _titles() for m in _MACRO.findall(t)}))
def test_every_macro_in_a_fixture_title_is_decoded(name: str) -> None:
    """Applied to ``{x}``, a macro found in a title prints nothing (a known no-op), its argument
    (markup), or something of its own (a logo, a letter, an accent, a symbol); an unknown one
    keeps its name. It never vanishes, taking its text with it."""
    decoded = text(f"\\{name}{{x}}") or ""
    if name in PRINTS_NOTHING:
        assert fold(decoded) in ("", "x"), decoded
        return
    assert "x" in fold(decoded), (name, decoded)  # the argument is never lost
    if name not in MARKUP:
        assert decoded != "x", f"\\{name} printed nothing of its own"


@pytest.mark.parametrize(("where", "title"), _titles())
def test_no_word_of_a_fixture_title_is_lost(where: str, title: str) -> None:
    """Every word written outside a macro name is in the decoded title."""
    decoded = fold(
        (parse_bib("@misc{k, title = {" + title + "}}", "t.bib").references[0].title) or ""
    )
    words = re.findall(r"[a-z]{2,}", fold(_MACRO.sub(" ", title)))
    assert [w for w in words if w not in decoded] == [], (where, decoded)


EXPECTED = {
    "knuth1984texbook": "The TeXbook",
    "knuth1986metafontbook": "The METAFONTbook",
    "lamport1994latex": "LaTeX: A Document Preparation System",
    "patashnik1988bibtexing": "BibTeXing",
    "latex2e2021authors": "LaTeX2ε for authors",
    "spivak1986joy": (
        "The Joy of TeX: A Gourmet Guide to Typesetting with the AMS-TeX Macro Package"
    ),
    "luatex2023": "LuaTeX Reference Manual",
    "xetex2019": "The XeTeX Reference Guide",
    "etex1998": "The ε-TeX Short Reference Manual",
    "goedel1931": (
        "Über formal unentscheidbare Sätze der Principia Mathematica und verwandter Systeme I"
    ),
    "schroedinger1935": "Die gegenwärtige Situation in der Quantenmechanik",
    "shaped-accents": (
        "Français, Košice, Straße, København, Ångström and Erdős — in vivo studies & Dna repair"
    ),
    "shaped-math": ("CO2 uptake, Ca2+ influx and TNF-α–NF-κB signalling at https://example.org/x"),
    "shaped-unknown": r"A \foo of \unknownmacro x and hyperplasia",
}


def test_titles_read_as_tex_prints_them() -> None:
    bib = (TESTS / "fixtures" / "tex-titles" / "titles.bib").read_text(encoding="utf-8")
    read = {r.key: r.title for r in parse_bib(bib, "titles.bib").references}
    assert read == EXPECTED


@pytest.mark.parametrize(
    ("tex", "key"),
    [
        (r"The {\TeX}book", "the texbook"),
        (r"A {\foo} of \unknownmacro{x}", "a foo of unknownmacro x"),  # never "a of x"
        (r"{CO}$_2$ and $\mathrm{CO}_2$", "co2 and co2"),
        (r"{TNF}-$\alpha$ and {NF}-$\kappa${B}", "tnf alpha and nf kappab"),
    ],
)
def test_title_keys_keep_every_word(tex: str, key: str) -> None:
    (ref,) = parse_bib("@misc{k, title = {" + tex + "}}", "t.bib").references
    assert title_key(ref.title) == key
    assert title_key(tex) == key  # the key of the title as written is the same


@pytest.mark.parametrize(
    ("registry", "tex"),
    [
        (
            "Novel function of RECS1 as a negative regulator of TNF-α-induced NF-κB activation",
            r"Novel function of {RECS1} as a negative regulator of {TNF}-$\alpha$-induced"
            r" {NF}-$\kappa${B} activation",
        ),
        (
            "Novel function of RECS1 as a negative regulator of TNF-alpha-induced NF-kappaB"
            " activation",
            r"Novel function of {RECS1} as a negative regulator of {TNF}-$\alpha$-induced"
            r" {NF}-$\kappa${B} activation",
        ),
        ("IL-1β and TGF-β1 in Δ9-THC", r"{IL}-1\textbeta{} and {TGF}-$\beta$1 in $\Delta$9-{THC}"),
        ("Role of α-synuclein", "Role of alpha-synuclein"),
        ("ϰB and ϵ (variant forms)", r"$\kappa$B and $\epsilon$ (variant forms)"),
    ],
)
def test_greek_letters_and_their_names_are_one_key(registry: str, tex: str) -> None:
    """The registry writes Greek as letters or as names (``TNF-alpha``): the key of a TeX title
    and of either spelling is one."""
    (ref,) = parse_bib("@misc{k, title = {" + tex + "}}", "t.bib").references
    assert title_key(ref.title) == title_key(registry)
