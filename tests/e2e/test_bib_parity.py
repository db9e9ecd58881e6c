"""Differential: rwgate reads a .bib as BibTeX 0.99d reads it (issue 13).

BibTeX itself is the oracle: a tiny .bst prints every entry's key and ``doi`` field (with
``\\citation{*}``), and rwgate's reading must give the same keys, in the same order, with the same
DOI, for every file: the edge cases BibTeX is known for, and seeded random mutations of the real
.bib files under tests/fixtures (deleted and inserted braces, quotes, commas, ``@``, ``#``).
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from conftest import require_tool
from rwgate.readers.bibliographies.bibscan import scan
from rwgate.readers.bibliographies.bibtex import parse_bib

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bib"
DUMP_BST = r"""ENTRY { doi } {} {}
FUNCTION {show} { "@@" cite$ * "|" * doi empty$ { "" } { doi } if$ * write$ newline$ }
FUNCTION {article} { show }
FUNCTION {default.type} { show }
READ
ITERATE {call.type$}
"""
EDGE_CASES = {
    "space after @": "@ article{a, doi={10.1/a}}\n@\tmisc\n{b, doi={10.1/b}}\n",
    "string redefined": '@string{d="10.1/old"}\n@misc{a, doi=d}\n@string{d="10.1/new"}\n'
    "@misc{b, doi=d}\n",
    "undefined macro": '@misc{a, doi="10.1/a" # undefinedmacro}\n',
    "crossref": "@misc{child, crossref={parent}}\n@misc{parent, doi={10.1/p}}\n",
    "unclosed entry": "@misc{a, doi={10.1/a},\n@misc{b, doi={10.1/b}}\n",
    "unclosed value": "@misc{a, doi={10.1/a}}\n@misc{b, title={open,\n doi={10.1/b}}\n",
    "comment": "@comment{ @misc{inside, doi={10.1/i}} }\n@misc{a, doi={10.1/a}}\n",
    "repeated key": "@misc{Key, doi={10.1/a}}\n@misc{key, doi={10.1/b}}\n",
    "repeated field": "@misc{a, doi={10.1/a}, doi={10.1/second}}\n",
    "parentheses": "@misc(a, doi={10.1/a})\n",
    "bare number": "@misc{a, doi = 10.1/a}\n@misc{b, doi={10.1/b}}\n",
    "missing comma": "@misc{a title={x}, doi={10.1/a}}\n@misc{b, doi={10.1/b}}\n",
    "quoted braces": '@misc{a, doi="10.1/{a"b}"}\n',
    "concatenation": '@string{p="10.1"}\n@misc{a, doi=p # "/" # {a}}\n',
}


def bibtex_reading(text: str, workdir: Path) -> list[tuple[str, str]]:
    """(key, doi) of every entry, as real BibTeX reads ``text``."""
    bibtex = require_tool("bibtex")
    (workdir / "refs.bib").write_text(text, encoding="utf-8")
    (workdir / "dump.bst").write_text(DUMP_BST, encoding="utf-8")
    (workdir / "doc.aux").write_text("\\citation{*}\n\\bibdata{refs}\n\\bibstyle{dump}\n")
    subprocess.run([bibtex, "-terse", "doc"], cwd=workdir, capture_output=True, timeout=60)
    out = (workdir / "doc.bbl").read_text(encoding="utf-8", errors="replace")
    records = "".join(out.split("\n")).split("@@")[1:]
    return [_pair(*(r.split("|", 1) if "|" in r else (r, ""))) for r in records]


def rwgate_reading(text: str) -> list[tuple[str, str]]:
    """Entries as BibTeX sees them (a key repeated up to case is, for BibTeX, the first)."""
    entries = [e for e in scan(text).entries if e.variant_of is None]
    return [_pair(e.key, e.fields.get("doi", "")) for e in entries]


def _pair(key: str, doi: str) -> tuple[str, str]:
    return key, "".join(doi.split())  # BibTeX's .bbl wraps long lines at spaces


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_case(name: str, tmp_path: Path) -> None:
    text = EDGE_CASES[name]
    assert rwgate_reading(text) == bibtex_reading(text, tmp_path)
    parse_bib(text, "t.bib")  # and the reader on top never raises


def _mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 3)):
        pos = rng.randrange(len(text))
        op = rng.choice(["delete", "insert", "space-after-at", "duplicate-line"])
        if op == "delete":
            text = text[:pos] + text[pos + 1 :]
        elif op == "insert":
            text = text[:pos] + rng.choice('{}@,"#=()% \n') + text[pos:]
        elif op == "space-after-at":
            text = text.replace("@", "@ \n", 1)
        else:
            lines = text.split("\n")
            j = rng.randrange(len(lines))
            lines.insert(j, lines[j])
            text = "\n".join(lines)
    return text


def test_random_mutations_of_real_bib_files(tmp_path: Path) -> None:
    sources = sorted(FIXTURES.glob("*.bib"))
    texts = [p.read_text(encoding="utf-8") for p in sources]
    rng = random.Random(20261123)
    files = entries = 0
    for index in range(120):
        text = _mutate(rng.choice(texts), rng)
        work = tmp_path / str(index)
        work.mkdir()
        expected = bibtex_reading(text, work)
        assert rwgate_reading(text) == expected, text
        files, entries = files + 1, entries + len(expected)
    assert files == 120 and entries > 300


def pandoc_reading(text: str) -> list[tuple[str, str]] | None:
    """(id, DOI) of every item pandoc reads from ``text`` as BibLaTeX; None if it refuses it."""
    import json

    from rwgate.readers.pandoc_exe import pandoc_path

    done = subprocess.run(
        [pandoc_path(), "-f", "biblatex", "-t", "csljson"],
        input=text.encode("utf-8"),
        capture_output=True,
        timeout=60,
    )
    if done.returncode != 0:
        return None  # pandoc stops the build: nothing is printed
    return [_pair(item["id"], str(item.get("DOI", ""))) for item in json.loads(done.stdout)]


def _agrees_with_pandoc(text: str) -> None:
    """Every work pandoc would print is judged: same key, same DOI, or marked as a conflict
    (unverified), never absent."""
    from rwgate.contract.doi import try_normalize

    printed = pandoc_reading(text)
    if printed is None:
        return
    ours = {r.key: r for r in parse_bib(text, "t.bib").references}
    for key, doi in printed:
        assert key in ours, (key, text)
        ref = ours[key]
        if ref.conflict is None and doi:
            assert ref.doi == try_normalize(doi) or ref.raw_doi, (key, doi, ref, text)


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_case_against_pandoc(name: str) -> None:
    _agrees_with_pandoc(EDGE_CASES[name])


def test_random_mutations_against_pandoc() -> None:
    texts = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.bib"))]
    rng = random.Random(1123)
    for _ in range(60):
        _agrees_with_pandoc(_mutate(rng.choice(texts), rng))


def biber_reading(text: str, workdir: Path) -> list[tuple[str, str]] | None:
    """(key, DOI) of every entry biber reads (``biber --tool``); None when it refuses the file.

    Tool mode does not apply ``crossref`` inheritance, so a child's DOI there may be empty."""
    import re

    biber = require_tool("biber")
    (workdir / "refs.bib").write_text(text, encoding="utf-8")
    subprocess.run(
        [biber, "--tool", "--quiet", "--output-format=bibtex", "--output-file=out.bib", "refs.bib"],
        cwd=workdir,
        capture_output=True,
        timeout=120,
    )
    out = workdir / "out.bib"
    if not out.exists():
        return None
    body = out.read_text(encoding="utf-8", errors="replace")
    found = []
    for match in re.finditer(
        r"^@(?!STRING|PREAMBLE|COMMENT)\w+\{([^,\n]*),(.*?)^\}", body, re.M | re.S
    ):
        doi = re.search(r"^\s*DOI\s*=\s*\{(.*)\},?\s*$", match.group(2), re.M)
        found.append(_pair(match.group(1), doi.group(1) if doi else ""))
    return found


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_case_against_biber(name: str, tmp_path: Path) -> None:
    """Every entry biber reads is judged: same key; same DOI wherever biber has one, or a
    conflict (unverified)."""
    from rwgate.contract.doi import try_normalize

    text = EDGE_CASES[name]
    printed = biber_reading(text, tmp_path)
    if printed is None:
        return  # biber stops: nothing is printed
    ours = {r.key: r for r in parse_bib(text, "t.bib").references}
    for key, doi in printed:
        assert key in ours, (key, text)
        ref = ours[key]
        if doi and ref.conflict is None and try_normalize(doi):
            assert ref.doi == try_normalize(doi), (key, doi, ref)
