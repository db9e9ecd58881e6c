"""The BibTeX export and the .bbl annotation share one escaper, and hostile registry values survive.

A title holding ``}``, ``\\input{x}``, ``%`` and ``#`` used to end the exported field early, so
journal, year and DOI were lost. Here the exported entry is read back by bibtexparser and by real
BibTeX (a tiny .bst that prints every field), and every field must be there.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import require_tool
from rwgate.contract.models import Citation, Notice
from rwgate.frontends.verify import bibtex_export as bx
from rwgate.frontends.verify.models import Author, Work
from rwgate.render import latex

HOSTILE = "Odd } title with \\input{x} and 50% of #1 {DNA"
FIELDS = ("author", "title", "journal", "year", "volume", "number", "pages", "doi", "note")

DUMP_BST = """ENTRY { author title journal year volume number pages doi note } {} {}
FUNCTION {show}
{ "@@KEY " cite$ * write$ newline$
  "@@author " author * write$ newline$
  "@@title " title * write$ newline$
  "@@journal " journal * write$ newline$
  "@@year " year * write$ newline$
  "@@volume " volume * write$ newline$
  "@@number " number * write$ newline$
  "@@pages " pages * write$ newline$
  "@@doi " doi * write$ newline$
  "@@note " note * write$ newline$
}
FUNCTION {article} { show }
FUNCTION {misc} { show }
FUNCTION {default.type} { show }
READ
ITERATE {call.type$}
"""


def _retracted() -> Citation:
    notice = Notice(type="retraction", doi="10.5555/notice_%{x}", source=["retraction-watch"])
    return Citation(
        key="k", doi="10.5555/x", status="retracted", action="annotate", notices=[notice]
    )


def _entries() -> list[str]:
    work = Work(
        doi="10.5555/x",
        title=HOSTILE,
        authors=[Author(family="O'Brien}", given="A. {B}")],
        year=2020,
        venue="J. of \\write18{rm} & Co",
        type="journal-article",
        volume="1}",
        issue="2#",
        pages="3-4",
    )
    built = bx.from_work(work, key="built", integrity=_retracted())
    registry = (
        "@article{Whatever_2020, title={A \\input{x} title}, journal={J. \\& {Co}},"
        " year={2020}, volume={1}, number={2}, pages={3--4}, author={O'Brien, A.},"
        " DOI={10.5555/x}}"
    )
    exported = bx.from_registry_text(registry, "registry", integrity=_retracted())
    assert exported is not None
    return [built, exported]


def test_one_escaper_for_the_export_and_the_bbl() -> None:
    assert bx.escape(HOSTILE) == latex.escape_text(HOSTILE)
    for entry in _entries():
        assert entry.count("{") == entry.count("}"), entry


def test_bibtexparser_reads_every_field_back() -> None:
    import bibtexparser

    for entry in _entries():
        library = bibtexparser.parse_string(entry)
        assert not library.failed_blocks, entry
        (parsed,) = library.entries
        assert set(FIELDS) <= {f.key for f in parsed.fields}, entry
        assert parsed["doi"] == "10.5555/x"
        assert parsed["year"] == "2020"


@pytest.mark.e2e
def test_bibtex_reads_every_field_back(tmp_path: Path) -> None:
    bibtex = require_tool("bibtex")
    (tmp_path / "refs.bib").write_text("\n".join(_entries()), encoding="utf-8")
    (tmp_path / "dump.bst").write_text(DUMP_BST, encoding="utf-8")
    (tmp_path / "doc.aux").write_text(
        "\\citation{*}\n\\bibdata{refs}\n\\bibstyle{dump}\n", encoding="utf-8"
    )
    run = subprocess.run([bibtex, "doc"], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Warning" not in run.stdout, run.stdout
    text = (tmp_path / "doc.bbl").read_text(encoding="utf-8").replace("\n", " ")
    records = [r for r in text.split("@@KEY ")[1:]]
    assert len(records) == 2
    for record in records:
        pairs = (part.partition(" ") for part in record.split("@@")[1:])
        values = {name: value for name, _, value in pairs}
        for name in FIELDS:
            assert values.get(name, "").strip(), (name, record)
        assert values["doi"].strip() == "10.5555/x"
        assert values["year"].strip() == "2020"
        assert "Retracted" in values["note"]
