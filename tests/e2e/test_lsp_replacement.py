"""``rwgate lsp``'s *Cite the replacement* code action, end to end: a paper cites a work that was
retracted and replaced by a version with a new DOI; the client asks for the code actions at the
citation, applies the returned workspace edit to the bibliography as an editor does (the file
opened, changed, saved), and the diagnostic goes away, in the manuscript and in the entry, as the
build agrees.

The two Crossref records are constructed for this test, in the shape of the real ones in
tests/fixtures/crossref (``updated-by`` entries as Crossref serves them), under Crossref's example
prefix 10.5555 so they name no real work: the original carries a Retraction Watch
"retraction and replacement" notice and the publisher's ``new_version`` update pointing to the
replacement; the replacement has no notice.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from example_data import EXAMPLES, RWGATE
from lsp_client import (
    build_verdicts,
    change_file,
    diagnostics_where,
    environment,
    keyed,
    lsp_session,
    open_file,
    save_file,
    text_at,
)
from lsprotocol import types as lsp

OLD = "10.5555/rwgate.replaced.2019"
NEW = "10.5555/rwgate.replacement.2020"
NOTICE = "10.5555/rwgate.notice.2020"
KEY = "smith2019"


def _date(year: int, month: int, day: int) -> dict[str, Any]:
    return {"date-parts": [[year, month, day]]}


def _record(doi: str, title: str, updated_by: list[dict[str, Any]]) -> dict[str, Any]:
    message: dict[str, Any] = {
        "DOI": doi,
        "type": "journal-article",
        "title": [title],
        "container-title": ["Journal of Examples"],
        "issued": _date(2019 if doi == OLD else 2020, 5, 1),
    }
    if updated_by:
        message["updated-by"] = updated_by
    return {"status": "ok", "message-type": "work", "message-version": "1.0.0", "message": message}


def _import(folder: Path, env: dict[str, str]) -> None:
    """The bundled sample and the two constructed records, into the test's snapshot."""
    old = _record(
        OLD,
        "Effects of an example on its examples",
        [
            {
                "DOI": NOTICE,
                "type": "retraction_and_replacement",
                "label": "Retraction and Replacement",
                "source": "retraction-watch",
                "record-id": 990001,
                "updated": _date(2020, 3, 2),
            },
            {
                "DOI": NEW,
                "type": "new_version",
                "label": "New version",
                "source": "publisher",
                "updated": _date(2020, 3, 2),
            },
        ],
    )
    new = _record(NEW, "Effects of an example on its examples (corrected)", [])
    files = []
    for name, record in (("old.json", old), ("new.json", new)):
        (folder / name).write_text(json.dumps(record), encoding="utf-8")
        files.append(str(folder / name))
    data = EXAMPLES / "data"
    files += [str(data / "retraction-watch" / "rw-sample.csv")]
    files += sorted(str(p) for p in (data / "crossref").glob("*.json"))
    subprocess.run([RWGATE, "data", "import", *files], env=env, check=True, capture_output=True)


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    folder = tmp_path / "paper"
    folder.mkdir()
    (folder / "refs.bib").write_text(
        "@article{watson1953,\n  title = {Molecular Structure of Nucleic Acids},\n"
        "  journal = {Nature},\n  year = {1953},\n  doi = {10.1038/171737a0},\n}\n\n"
        f"@article{{{KEY},\n  title = {{Effects of an example on its examples}},\n"
        f"  journal = {{Journal of Examples}},\n  year = {{2019}},\n  doi = {{{OLD}}},\n}}\n",
        encoding="utf-8",
    )
    paper = folder / "paper.md"
    paper.write_text(
        "---\ntitle: A paper\nbibliography: refs.bib\n---\n\n"
        f"The structure [@watson1953] and the examples [@{KEY}].\n",
        encoding="utf-8",
    )
    return paper


def _apply(text: str, edits: list[lsp.TextEdit]) -> str:
    """A text with the edits applied (ranges on one line each; UTF-16 is ASCII here)."""
    lines = text.splitlines(keepends=True)
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))[::-1]:
        start, end = edit.range.start, edit.range.end
        assert start.line == end.line
        line = lines[start.line]
        lines[start.line] = line[: start.character] + edit.new_text + line[end.character :]
    return "".join(lines)


def test_cite_the_replacement_edits_the_entry_and_the_diagnostic_goes(
    tmp_path: Path, paper: Path
) -> None:
    env = environment(offline=True)
    _import(tmp_path, env)
    bib = paper.parent / "refs.bib"
    assert build_verdicts(paper, env)[KEY][0] == "replaced"

    async def body() -> None:
        async with lsp_session(env, paper.parent) as client:
            open_file(client, paper, "markdown")
            found = await diagnostics_where(client, paper, lambda ds: KEY in keyed(ds))
            (use,) = keyed(found)[KEY]
            assert use.code == "replaced" and text_at(paper, use.range) == KEY
            actions = await client.text_document_code_action_async(
                lsp.CodeActionParams(
                    text_document=lsp.TextDocumentIdentifier(uri=paper.as_uri()),
                    range=use.range,
                    context=lsp.CodeActionContext(diagnostics=[use]),
                )
            )
            (cite,) = [
                a
                for a in actions or []
                if isinstance(a, lsp.CodeAction) and a.title.startswith("Cite the replacement")
            ]
            assert cite.title == f"Cite the replacement of {KEY}: doi:{NEW}"
            assert cite.kind == lsp.CodeActionKind.QuickFix and cite.is_preferred
            assert cite.edit is not None and cite.edit.changes is not None
            assert list(cite.edit.changes) == [bib.as_uri()]
            (edit,) = cite.edit.changes[bib.as_uri()]
            assert text_at(bib, edit.range) == OLD

            before = bib.read_text(encoding="utf-8")
            after = _apply(before, cite.edit.changes[bib.as_uri()])
            assert after == before.replace(OLD, NEW)
            open_file(client, bib, "bibtex")  # the editor opens the file it edits
            change_file(client, bib, after, 2)
            save_file(client, bib, after)
            gone = await diagnostics_where(client, paper, lambda ds: KEY not in keyed(ds))
            assert "watson1953" not in keyed(gone)  # clean: nothing to say
            await diagnostics_where(client, bib, lambda ds: KEY not in keyed(ds))

    asyncio.run(body())
    assert KEY not in build_verdicts(paper, env)  # the build agrees: the replacement is clean
