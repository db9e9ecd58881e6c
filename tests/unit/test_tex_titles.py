"""Issue 38: titles as they are written in TeX are compared as they print.

Biomedical titles are full of Greek letters and symbols (TNF-α, NF-κB, TGF-β, Ca²⁺); a .bib
writes them ``{TNF}-$\\alpha$``, ``\\textbeta``, ``Ca$^{2+}$``, while the registry and Crossref
write Unicode (or ``<sup>`` markup). The test writes every titled Retraction Watch row of the
fixtures in TeX with its own table (Greek as math, textgreek or upgreek macros, accents and
symbols as macros, dashes as ``--``), reads it as a .bib is read, and asks that it match its row
by title, offline, and no other; a look-alike (α and β swapped) matches none. The few real rows
with Greek letters are joined by titles of the same shape (marked, not registry data).
"""

from __future__ import annotations

import csv
import re
import unicodedata
from pathlib import Path

import pytest

from rwgate.contract.models import Lookup, Reference
from rwgate.core import check
from rwgate.identify.same import mismatch
from rwgate.readers.bibliographies.bibtex import parse_bib
from rwgate.settings.config import Settings
from rwgate.sources.snapshot.store import import_files
from rwgate.titles import title_key

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RECS1_TEX = (
    r"Novel function of {RECS1} as a negative regulator of {TNF}-$\alpha$-induced"
    r" {NF}-$\kappa${B} activation"
)
RECS1 = "Novel function of RECS1 as a negative regulator of TNF-α-induced NF-κB activation"
# Titles of the registry's shape with Greek letters and symbols (not registry rows).
SHAPED = [
    RECS1,
    "TGF-β1 and IFN-γ signalling in 5α-reductase deficient mice",
    "Ca²⁺ influx through TRPV4 raises [Ca²⁺]ᵢ at 10 µM capsaicin",
    "Δ9-THC attenuates IL-1β release — a role for PPAR-γ",
    "Role of the Wnt/β-catenin pathway in α-synuclein aggregation",
]
_ACCENTS = {"\u0301": "'", "\u0300": "`", "\u0308": '"', "\u0302": "^", "\u0303": "~"}
_SYMBOLS = {
    "–": "--",
    "—": "---",
    "’": "'",
    "‘": "`",
    "®": r"\textregistered{}",
    "µ": r"\textmu{}",
    "&": r"\&",
    "%": r"\%",
    "°": r"\textdegree{}",
}
_SUPER = {"²": "2", "³": "3", "⁺": "+", "¹": "1", "⁻": "-", "ᵢ": "i"}


def _greek_macro(char: str, style: int) -> str | None:
    name = unicodedata.name(char, "")
    found = re.fullmatch(r"GREEK (SMALL|CAPITAL) LETTER (\w+)", name)
    if not found:
        return None
    word = found.group(2).lower().replace("lamda", "lambda")
    word = word.capitalize() if found.group(1) == "CAPITAL" else word
    return [f"${{\\{word}}}$", f"\\text{word}{{}}", f"$\\up{word}$"][style % 3]


def to_tex(title: str, style: int = 0) -> str:
    """``title`` as a .bib writes it: Greek and symbols as macros, accents as ``\\'{e}``."""
    out: list[str] = []
    scripts: list[str] = []
    for char in unicodedata.normalize("NFC", title):
        if char in _SUPER:
            scripts.append(_SUPER[char])
            continue
        if scripts:
            mark = "_" if scripts == ["i"] else "^"
            out.append(f"${mark}{{{''.join(scripts)}}}$")
            scripts = []
        greek = _greek_macro(char, style)
        decomposed = unicodedata.normalize("NFD", char)
        if greek:
            out.append(greek)
        elif char in _SYMBOLS:
            out.append(_SYMBOLS[char])
        elif len(decomposed) == 2 and decomposed[1] in _ACCENTS:
            out.append(f"\\{_ACCENTS[decomposed[1]]}{{{decomposed[0]}}}")
        elif char in "ß":
            out.append(r"{\ss}")
        else:
            out.append(char)
    if scripts:
        out.append(f"$^{{{''.join(scripts)}}}$")
    return "".join(out)


def read_title(tex: str) -> str:
    """The title as rwgate reads it from a .bib entry."""
    bib = "@article{k, title = {" + tex + "}}"
    (ref,) = parse_bib(bib, "t.bib").references
    return ref.title or ""


def _rows() -> list[dict[str, str]]:
    rows = []
    for path in sorted((FIXTURES / "rw").glob("*.csv")):
        with path.open(encoding="utf-8", errors="replace", newline="") as handle:
            rows += [r for r in csv.DictReader(handle) if (r.get("Title") or "").strip()]
    return rows


def _titles() -> list[str]:
    return list(dict.fromkeys([r["Title"] for r in _rows()] + SHAPED))


def _swapped(tex: str) -> str | None:
    """A look-alike: the first of α/β, γ/δ, κ/λ swapped (None when the title has none)."""
    pairs = [("alpha", "beta"), ("gamma", "delta"), ("kappa", "lambda")]
    for a, b in pairs:
        for x, y in ((a, b), (b, a)):
            found = re.search(rf"\\(?:text|up)?{x}(?![a-z])", tex)
            if found:
                return tex[: found.start()] + found.group(0).replace(x, y) + tex[found.end() :]
    return None


def test_every_registry_title_written_in_tex_reads_as_its_row() -> None:
    titles = _titles()
    assert len(titles) >= 40
    keys = {title_key(t): t for t in titles}
    for i, title in enumerate(titles):
        for style in range(3):
            tex = to_tex(title, style + i)
            read = title_key(read_title(tex))
            assert read == title_key(title), (tex, read)
            assert keys.get(read) == title  # its own row's key, no other's


def test_a_look_alike_matches_no_title() -> None:
    keys = {title_key(t) for t in _titles()}
    swapped = [s for s in (_swapped(to_tex(t)) for t in _titles()) if s is not None]
    assert len(swapped) >= 5  # every title with a Greek letter has one
    for tex in swapped:
        assert title_key(read_title(tex)) not in keys, tex


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture rows as a full export, with one row derived from Wakefield's (record 4036):
    its title replaced by the RECS1 title, its DOI by ``unavailable`` (not registry data)."""
    folder = tmp_path_factory.mktemp("tex-titles")
    source = FIXTURES / "rw" / "rw-extract-2025.csv"
    with source.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    derived = next(r for r in rows if r[0] == "4036")[:]
    derived[0], derived[1], derived[4] = "900201", RECS1, "Cellular Signalling"
    derived[13], derived[14], derived[15] = "3/1/2012 0:00", "unavailable", "0"
    extract = folder / "rw.csv"
    with extract.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle, lineterminator="\r\n").writerows([*rows, derived])
    db = folder / "rw.sqlite"
    import_files(db, [extract], allow_shrink=True)
    return db


def test_a_doi_less_tex_title_is_matched_by_title_offline(snapshot: Path) -> None:
    """The issue's reproduction, and every titled row of the extract cited without a DOI in TeX
    with its year and journal: each is matched by title, as its Unicode title is."""
    bib = f"@article{{recs, title = {{{RECS1_TEX}}}, journal = {{Cellular Signalling}}"
    bib += ", year = 2012}\n"
    with (FIXTURES / "rw" / "rw-extract-2025.csv").open(encoding="utf-8", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["Title"].strip()]
    for i, row in enumerate(rows):
        year = re.search(r"(19|20)\d\d", row["OriginalPaperDate"])
        title, journal = to_tex(row["Title"], i), row["Journal"].replace("&", r"\&")
        bib += f"@article{{r{i}, title = {{{title}}}, journal = {{{journal}}}"
        bib += f", year = {year.group(0) if year else ''}}}\n"
    refs = parse_bib(bib, "refs.bib").references
    settings = Settings(offline=True, snapshot=str(snapshot), no_cache=True)
    by_key = {c.key: c for c in check(refs, settings).citations}
    assert by_key["recs"].status == "retracted" and "title" in by_key["recs"].basis
    missed = [k for k, c in by_key.items() if "title" not in c.basis]
    assert missed == [], [(k, by_key[k].title) for k in missed]


def test_doi_mismatch_compares_tex_titles_as_they_print() -> None:
    """A record whose title writes Greek in Unicode (or ``<sup>``) is the entry written in TeX:
    no ``doi_mismatch``; the look-alike (α for β) is still told apart from a distant title."""
    record = Lookup(
        doi="10.1/x",
        outcome="found",
        source="crossref",
        title="Ca<sup>2+</sup> and TGF-β1",
        year=2020,
    )
    entry = Reference(
        key="k", doi="10.1/x", title=read_title(r"Ca$^{2+}$ and {TGF}-$\beta$1"), year=2015
    )
    assert mismatch(entry, [record], "doi:10.1/x") is None
