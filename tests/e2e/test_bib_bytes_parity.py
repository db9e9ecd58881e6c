"""Differential (issue 28): rwgate reads a .bib's bytes as BibTeX 0.99d does. Seeded mutations of
the real fixtures add stray Latin-1/CP1252 bytes, empty keys, non-ASCII keys (UTF-8 and Latin-1)
and unbalanced braces; for each file, every entry real BibTeX prints (``\\citation{*}``) is judged
by rwgate under a key with the same bytes (an empty key under its synthetic name), with the DOI
BibTeX prints."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

from test_bib_parity import DUMP_BST

from conftest import require_tool
from rwgate.contract.doi import try_normalize
from rwgate.readers import decode_bytes, load_bibliography
from rwgate.readers.bibliographies.bibtex import EMPTY_KEY
from rwgate.readers.bibliographies.texvalue import doi_readings

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bib"
STRAY = [b"\xe9", b"\x92", b"\x96", b"\xfc", b"\xa0", b"\x85"]  # Latin-1 and CP1252 accents, quotes


def bibtex_printed(data: bytes, workdir: Path) -> list[tuple[bytes, bytes]]:
    """(key, doi) bytes of every entry real BibTeX prints from ``data``."""
    bibtex = require_tool("bibtex")
    (workdir / "refs.bib").write_bytes(data)
    (workdir / "dump.bst").write_text(DUMP_BST, encoding="utf-8")
    (workdir / "doc.aux").write_text("\\citation{*}\n\\bibdata{refs}\n\\bibstyle{dump}\n")
    subprocess.run([bibtex, "-terse", "doc"], cwd=workdir, capture_output=True, timeout=60)
    out = b"".join((workdir / "doc.bbl").read_bytes().split(b"\n"))
    records = out.split(b"@@")[1:]
    pairs = [r.split(b"|", 1) if b"|" in r else [r, b""] for r in records]
    return [(key, b"".join(doi.split())) for key, doi in pairs]


def _same_key(ours: str, printed: bytes) -> bool:
    """The key a citation in a UTF-8 .tex names (the .aux holds its UTF-8 bytes) is rwgate's key
    exactly, whatever stray bytes the file holds elsewhere (even on the same line)."""
    try:
        return ours == printed.decode("utf-8")
    except UnicodeDecodeError:  # each byte that is not UTF-8 is one character of ours
        return ours == decode_bytes(printed)[0]


def _expected_doi(printed: bytes) -> str | None:
    text, _ = decode_bytes(printed)
    for reading in doi_readings(text):
        found = try_normalize(reading)
        if found:
            return found
    return None


def _mutate(data: bytes, rng: random.Random) -> bytes:
    for _ in range(rng.randint(1, 4)):
        op = rng.choice(["stray", "stray", "empty-key", "non-ascii-key", "brace", "unbrace", "dup"])
        starts = [i for i in range(len(data)) if data[i : i + 1] == b"@"]
        if op == "stray":
            pos = rng.randrange(len(data))
            data = data[:pos] + rng.choice(STRAY) + data[pos:]
        elif op in ("empty-key", "non-ascii-key") and starts:
            at = rng.choice(starts)
            brace = data.find(b"{", at)
            comma = data.find(b",", brace)
            if 0 < brace < comma < brace + 200:
                key = (
                    b" "
                    if op == "empty-key"
                    else rng.choice(
                        ["müller2010".encode(), "m\xfcller2010".encode("latin-1"), "Ølsen".encode()]
                    )
                )
                data = data[: brace + 1] + key + data[comma:]
        elif op in ("brace", "unbrace"):
            pos = rng.randrange(len(data))
            data = data[:pos] + (b"{" if op == "brace" else b"") + data[pos + (op == "unbrace") :]
        elif starts:  # repeat an entry's first line (a repeated key, maybe unbalanced)
            at = rng.choice(starts)
            end = data.find(b"\n", at)
            data = data[:at] + data[at : end + 1 if end > 0 else len(data)] + data[at:]
    return data


def test_every_entry_bibtex_prints_is_judged_with_its_doi(tmp_path: Path) -> None:
    texts = [p.read_bytes() for p in sorted(FIXTURES.glob("*.bib"))]
    rng = random.Random(28)
    files = printed_entries = 0
    kinds: set[str] = set()
    for index in range(80):
        data = _mutate(rng.choice(texts), rng)
        work = tmp_path / str(index)
        work.mkdir()
        printed = bibtex_printed(data, work)
        refs = load_bibliography(work / "refs.bib").references
        for key, doi in printed:
            if key:
                matches = [r for r in refs if _same_key(r.key, key)]
            else:
                matches = [r for r in refs if r.key.startswith(EMPTY_KEY)]
            assert matches, (key, data)
            expected = _expected_doi(doi) if doi else None
            if expected is not None:
                assert any(expected in (r.doi, *(x.doi for x in r.readings)) for r in matches), (
                    key,
                    doi,
                    data,
                )
            kinds.add("empty" if not key else "non-ascii" if not key.isascii() else "ascii")
        if any(data.count(b) for b in STRAY):
            kinds.add("stray byte")
        files, printed_entries = files + 1, printed_entries + len(printed)
    assert files == 80 and printed_entries > 200
    assert kinds == {"empty", "non-ascii", "ascii", "stray byte"}
