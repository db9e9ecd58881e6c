"""Issue 31: is this the work the entry meant? Identity checks on real records.

Every record here is real: the Crossref bodies of ``tests/fixtures/crossref`` and the Retraction
Watch rows of ``tests/fixtures/rw`` (provenance and attribution in their README/ATTRIBUTION
files). The entries cite those works by their real titles, years and journals.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from rwgate.contract.evidence import lookup_from_crossref
from rwgate.contract.models import Citation, Lookup, Reference
from rwgate.core import check
from rwgate.identify.same import mismatch, title_agrees
from rwgate.readers import load_bibliography
from rwgate.settings.config import Settings
from rwgate.sources.snapshot.store import import_files
from rwgate.titles import TitleRow, identity_similarity, title_key

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
WAKEFIELD_DOI = "10.1016/s0140-6736(97)11096-0"
WAKEFIELD = (
    "Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive developmental "
    "disorder in children"
)
WATSON_DOI = "10.1038/171737a0"
WATSON = "Molecular Structure of Nucleic Acids: A Structure for Deoxyribose Nucleic Acid"
LACOUR = "When contact changes minds: An experiment on transmission of support for gay equality"
ULTRASOUND = "Ultrasound image guided lateral cervical approach to stellate ganglion"  # RW 25503


def _record(name: str) -> Lookup:
    body = json.loads((FIXTURES / "crossref" / name).read_text(encoding="utf-8"))
    return lookup_from_crossref(body["message"])


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot of every Retraction Watch fixture row (an extract: unlisted works unverified)."""
    db = tmp_path_factory.mktemp("identity") / "rw.sqlite"
    import_files(db, sorted((FIXTURES / "rw").glob("*.csv")))
    return db


def _check(refs: list[Reference], snapshot: Path, **policy: object) -> list[Citation]:
    settings = Settings(offline=True, snapshot=str(snapshot), no_cache=True, **policy)
    return check(refs, settings).citations


# --- titles ---------------------------------------------------------------------------------


def test_title_key_folds_what_readers_treat_as_equal() -> None:
    assert title_key("{RETRACTED}: {DNA} <i>in vivo</i> Über  Résumé") == "dna in vivo uber resume"
    assert title_key(WAKEFIELD.upper()) == title_key("RETRACTED: " + WAKEFIELD)
    assert title_key(None) == title_key("  ") == ""


@pytest.mark.parametrize(
    ("entry", "record"),
    [
        (WATSON.split(":")[0], WATSON),  # the subtitle left out
        (WAKEFIELD, "RETRACTED: " + WAKEFIELD),  # Crossref's marker on a retracted title
        (WAKEFIELD, "Correction to: " + WAKEFIELD),  # the DOI of a correction notice
        (WAKEFIELD, "Retraction notice to: " + WAKEFIELD),
        (
            "Nanometre-scale thermometry in a living cell",
            "Nanometer-scale thermometry in a living cell",
        ),
        ("Über die Quantentheorie", '{\\"U}ber die Quantentheorie'),
    ],
)
def test_one_work_spelled_two_ways_is_similar(entry: str, record: str) -> None:
    similarity = identity_similarity(entry, record)
    assert similarity is not None and similarity >= 0.85


# --- does the identifier name the cited work? -----------------------------------------------


def test_a_real_doi_of_another_real_paper_is_a_mismatch() -> None:
    """LaCour's 2014 Science paper cited with Watson and Crick's 1953 DOI."""
    entry = Reference(key="lacour", doi=WATSON_DOI, title=LACOUR, year=2014, authors=["LaCour"])
    said = mismatch(entry, [_record("clean-watson-crick-1953.json")], f"doi:{WATSON_DOI}")
    assert said == f"doi:{WATSON_DOI} names '{WATSON}' (1953), not this entry"


def test_same_year_or_same_first_author_is_not_a_clear_mismatch() -> None:
    watson = _record("clean-watson-crick-1953.json")
    translated = Reference(key="t", doi=WATSON_DOI, title="Molekulare Struktur", year=1953)
    assert mismatch(translated, [watson], "doi") is None  # a translated title, same year
    author = Reference(key="a", doi=WATSON_DOI, title="Molekulare Struktur", authors=["Watson"])
    assert mismatch(author, [watson], "doi", authors=["WATSON"]) is None
    no_title = Reference(key="n", doi=WATSON_DOI, year=2014)
    assert mismatch(no_title, [watson], "doi") is None


def _fixture_bibliographies() -> list[Reference]:
    """Every entry of every .bib and CSL bibliography of the fixtures (RIS is read by pandoc:
    its entries are checked in ``tests/e2e/test_identity_cli.py``)."""
    refs: list[Reference] = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.suffix == ".bib" or path.name in ("refs.json", "refs.yaml"):
            refs += load_bibliography(path).references
    return refs


def test_no_fixture_entry_is_a_false_mismatch_against_its_recorded_crossref_answer() -> None:
    records = {}
    for path in sorted((FIXTURES / "crossref").glob("*.json")):
        message = json.loads(path.read_text(encoding="utf-8"))["message"]
        for item in message.get("items", [message]):
            lookup = lookup_from_crossref(item)
            records[lookup.doi] = lookup
    refs = _fixture_bibliographies()
    compared = [r for r in refs if r.doi in records and r.title]
    assert len(compared) >= 20  # the fixtures cite the recorded works many times over
    false = [(r.key, mismatch(r, [records[r.doi or ""]], "doi")) for r in compared]
    assert [f for f in false if f[1]] == []


def test_no_fixture_entry_is_a_false_mismatch_against_the_registry(snapshot: Path) -> None:
    refs = [r for r in _fixture_bibliographies() if not r.missing]
    citations = _check(refs, snapshot)
    assert [c.key for c in citations if "not this entry" in (c.reason or "")] == []
    assert not any(c.status == "doi_mismatch" for c in citations)


def test_retracted_work_under_another_works_doi_keeps_retracted_and_says_so(
    snapshot: Path,
) -> None:
    """The DOI's own verdict still shows; the more severe action of the two decides."""
    entry = Reference(key="k", doi=WAKEFIELD_DOI, title=ULTRASOUND, year=2020)
    (default,) = _check([entry], snapshot)
    assert default.status == "retracted" and default.action == "annotate"
    assert (default.reason or "").startswith(f"doi:{WAKEFIELD_DOI} names 'Ileal-lymphoid")
    assert "(1998), not this entry" in (default.reason or "")
    assert default.title == ULTRASOUND and default.notices  # the entry's title, the DOI's notices
    (strict,) = _check([entry], snapshot, fail_on=["doi_mismatch"])
    assert strict.status == "retracted" and strict.action == "fail"


def test_a_corrected_work_under_another_works_doi_is_a_mismatch(snapshot: Path) -> None:
    """A correction does not weaken the work: the mismatch decides, the notice stays shown."""
    entry = Reference(key="k", doi="10.1186/1747-1028-6-7", title=ULTRASOUND, year=2020)
    (citation,) = _check([entry], snapshot)
    assert citation.status == "doi_mismatch" and citation.action == "warn"
    assert [n.type for n in citation.notices] == ["correction"]
    (strict,) = _check([entry], snapshot, policy="strict")
    assert strict.action == "fail"


def test_a_pmid_naming_another_work_is_a_mismatch(snapshot: Path) -> None:
    entry = Reference(key="k", pmid="21453497", title=WATSON, year=1953)
    (citation,) = _check([entry], snapshot)
    assert citation.status == "doi_mismatch"
    assert (citation.reason or "").startswith("PMID 21453497 names 'The loop-less tmCdc34")


# --- entries without a DOI, matched by title offline ----------------------------------------


def test_doi_less_entry_of_a_retracted_work_is_retracted_by_title(snapshot: Path) -> None:
    entry = Reference(key="w", title=WAKEFIELD, year=1998, journal="The Lancet")
    (citation,) = _check([entry], snapshot)
    assert citation.status == "retracted" and citation.basis[-1] == "title"
    assert citation.doi == WAKEFIELD_DOI
    assert (citation.reason or "").startswith("matched by title to RW#4036")
    assert f"add its DOI ({WAKEFIELD_DOI})" in (citation.reason or "")


def test_doi_less_entry_of_a_clean_work_stays_no_doi(snapshot: Path) -> None:
    (citation,) = _check([Reference(key="c", title=WATSON, year=1953)], snapshot)
    assert citation.status == "no_doi" and citation.basis == []


def test_a_title_alone_is_not_enough(snapshot: Path) -> None:
    """Same title, but no year and no journal to agree: the work is not named, ``no_doi``."""
    (alone,) = _check([Reference(key="w", title=WAKEFIELD)], snapshot)
    assert alone.status == "no_doi"
    (far,) = _check([Reference(key="w", title=WAKEFIELD, year=2010)], snapshot)
    assert far.status == "no_doi"
    (journal,) = _check([Reference(key="w", title=WAKEFIELD, journal="Lancet")], snapshot)
    assert journal.status == "retracted"


def test_a_short_title_needs_year_and_journal() -> None:
    row = TitleRow("editorial", "10.1/x", None, "1", "Editorial", "Lancet", 2001, 1)
    assert not title_agrees(Reference(key="e", title="Editorial", year=2001), row)
    assert title_agrees(Reference(key="e", title="Editorial", year=2001, journal="Lancet"), row)


def test_a_registry_work_with_no_doi_nor_pmid_is_judged_by_its_rows(snapshot: Path) -> None:
    """Record 10834 in ``quirk-missing-ids.csv`` has neither DOI nor PubMed id."""
    title = "Total reconstruction of the vesico-urethral junction"
    (citation,) = _check([Reference(key="t", title=title, year=2008)], snapshot)
    assert citation.status == "corrected" and citation.basis == ["snapshot", "title"]
    assert "RW#10834" in (citation.reason or "")


def test_a_pmid_with_leading_zeros_is_matched(snapshot: Path, tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{w, title = {" + WAKEFIELD + "}, pmid = {0009500320}}\n")
    (ref,) = load_bibliography(bib).references
    written = Reference(key="x", title=WAKEFIELD, pmid="0009500320")  # as an agent passes it
    for citation in _check([ref, written], snapshot):
        assert citation.status == "retracted" and citation.doi == WAKEFIELD_DOI
        assert "PMID" in (citation.reason or "") and "9500320" in (citation.reason or "")


def test_a_snapshot_without_the_title_index_gives_the_same_verdicts(
    snapshot: Path, tmp_path: Path
) -> None:
    old = tmp_path / "old.sqlite"
    shutil.copyfile(snapshot, old)
    with sqlite3.connect(old) as conn:
        conn.execute("DROP TABLE titles")
        conn.execute("DELETE FROM meta WHERE key = 'title_index'")
    refs = [
        Reference(key="w", title=WAKEFIELD.upper(), year=1999),
        Reference(key="t", title="Total reconstruction of the vesico-urethral junction", year=2008),
        Reference(key="c", title=WATSON, year=1953),
    ]
    assert _check(refs, old) == _check(refs, snapshot)


# --- the title matcher against an independent exact match -------------------------------------


def _plain(title: str) -> str:
    """An independent normalisation, written apart from :mod:`rwgate.titles`: NFKD without
    combining marks, lower case, every run of non-alphanumerics one space, Crossref's
    "RETRACTED:" marker dropped."""
    import re
    import unicodedata

    text = unicodedata.normalize("NFKD", title)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = re.sub(r"^\s*retracted\s*:\s*", "", text)
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text).split())


def _registry_rows() -> list[dict[str, str]]:
    import csv

    rows = []
    for path in sorted((FIXTURES / "rw").glob("*.csv")):
        with path.open(encoding="utf-8", errors="replace", newline="") as handle:
            rows += [r for r in csv.DictReader(handle) if (r.get("Title") or "").strip()]
    return rows


def _year(row: dict[str, str]) -> int | None:
    import re

    found = re.search(r"(1[89]|20)\d\d", row.get("OriginalPaperDate") or "")
    return int(found.group(0)) if found else None


def test_title_matcher_agrees_with_an_independent_exact_match(snapshot: Path) -> None:
    """Every titled row of the registry fixtures, cited without a DOI under its own title in
    three spellings (as written, upper case, with BibTeX braces and Crossref's marker), and with
    its year and journal: rwgate matches it by title exactly when an independent exact match of
    normalised titles (and the year within one) finds a registry row for it."""
    rows = _registry_rows()
    assert len(rows) >= 50
    index: dict[str, list[int | None]] = {}
    for row in rows:
        index.setdefault(_plain(row["Title"]), []).append(_year(row))
    refs, expected = [], {}
    for i, row in enumerate(rows):
        title, year, journal = row["Title"], _year(row), row.get("Journal") or None
        spellings = [title, title.upper(), "RETRACTED: {" + title + "}"]
        for j, spelled in enumerate(spellings):
            key = f"r{i}-{j}"
            refs.append(Reference(key=key, title=spelled, year=year, journal=journal))
            years = index.get(_plain(spelled), [])
            expected[key] = any(
                y is not None and year is not None and abs(y - year) <= 1 for y in years
            ) or (bool(years) and journal is not None)
    citations = _check(refs, snapshot)
    matched = {c.key: "title" in c.basis for c in citations}
    assert matched == expected
    assert sum(expected.values()) >= 0.9 * len(refs)  # the rows are found, not skipped
