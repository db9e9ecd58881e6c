"""``rwgate lsp`` driven as an editor drives it (pytest-lsp's client, the server over stdio), over
a Markdown paper, a Quarto chapter with a project bibliography and a LaTeX paper: open, edit (cite
a retracted work, remove it), save; diagnostics equal to ``rwgate check --format json``'s
verdicts, hovers and code actions. The snapshot is the bundled sample (offline first pass)."""

from __future__ import annotations

import asyncio
import re
import shutil
import tomllib
from pathlib import Path

import pytest
from example_data import EXAMPLES, import_sample
from lsp_client import (
    build_verdicts,
    change_file,
    diagnostics_where,
    environment,
    keyed,
    lsp_session,
    open_file,
    save_file,
    server_verdicts,
    text_at,
)
from lsprotocol import types as lsp

WAKEFIELD_NOTICE = "https://doi.org/10.1016/s0140-6736(10)60175-4"


@pytest.fixture
def env() -> dict[str, str]:
    env = environment(offline=True)
    import_sample(env)
    return env


def _paper(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(EXAMPLES / "refs.bib", folder / "refs.bib")
    shutil.copy(EXAMPLES / name, folder / name)
    return folder / name


def _cites(key: str):
    return lambda diagnostics: key in keyed(diagnostics)


def _not_cites(key: str):
    return lambda diagnostics: key not in keyed(diagnostics)


def _edit_cycle(
    paper: Path, env: dict[str, str], language: str, added: str, key: str, before: str
) -> None:
    """Open a paper that does not cite ``key``; cite it (unsaved); remove it; cite it and save.
    Each step's diagnostics; the saved paper's equal the build's."""
    original = paper.read_text(encoding="utf-8")
    assert before in original
    without = re.sub(rf"\b{key}\b", "watson1953", original)
    paper.write_text(without, encoding="utf-8")
    bib = paper.parent / "refs.bib"

    async def body() -> None:
        async with lsp_session(env, paper.parent) as client:
            open_file(client, paper, language)
            first = await diagnostics_where(client, paper, _cites("wakefield1998"))
            assert key not in keyed(first)
            assert server_verdicts(first) == build_verdicts(paper, env)

            cited = without.replace(before, before + added)
            change_file(client, paper, cited, 2)
            now = await diagnostics_where(client, paper, _cites(key))
            (use,) = keyed(now)[key]
            line = cited.splitlines()[use.range.start.line]
            assert line[use.range.start.character : use.range.end.character] == key
            assert use.code == "retracted"
            assert lsp.DiagnosticTag.Deprecated in (use.tags or [])
            assert use.message.startswith("Retracted 20"), use.message
            assert "notice doi:" in use.message
            assert use.code_description is not None
            assert use.code_description.href.startswith("https://doi.org/")
            places = [(r.location.uri, r.message) for r in use.related_information or []]
            assert any(uri == bib.as_uri() for uri, _ in places), places
            assert any(uri.startswith("https://doi.org/") for uri, _ in places), places
            entry = await diagnostics_where(client, bib, _cites(key))
            (at_entry,) = keyed(entry)[key]
            assert text_at(bib, at_entry.range) == key
            assert paper.read_text(encoding="utf-8") == without  # the user's file untouched

            change_file(client, paper, without, 3)
            await diagnostics_where(client, paper, _not_cites(key))
            await diagnostics_where(client, bib, _not_cites(key))

            change_file(client, paper, cited, 4)
            save_file(client, paper, cited)
            saved = await diagnostics_where(client, paper, _cites(key))
            assert server_verdicts(saved) == build_verdicts(paper, env)
            assert key in build_verdicts(paper, env)

    asyncio.run(body())


def test_markdown_paper_open_edit_save(tmp_path: Path, env: dict[str, str]) -> None:
    paper = _paper(tmp_path / "md", "paper.md")
    _edit_cycle(paper, env, "markdown", " [@lacour2014]", "lacour2014", "[@kucsko2013]")


def test_latex_paper_open_edit_save(tmp_path: Path, env: dict[str, str]) -> None:
    paper = _paper(tmp_path / "tex", "paper.tex")
    _edit_cycle(paper, env, "latex", " \\citep{lacour2014}", "lacour2014", "\\citep{kucsko2013}")


def test_quarto_chapter_with_a_project_bibliography(tmp_path: Path, env: dict[str, str]) -> None:
    """The chapter names no bibliography: ``_quarto.yml`` does, as the build reads it."""
    book = tmp_path / "book"
    (book / "chapters").mkdir(parents=True)
    shutil.copy(EXAMPLES / "refs.bib", book / "refs.bib")
    (book / "_quarto.yml").write_text(
        "project:\n  type: book\nbook:\n  chapters: [index.qmd, chapters/one.qmd]\n"
        "bibliography: refs.bib\n",
        encoding="utf-8",
    )
    (book / "index.qmd").write_text("# Preface\n\nNothing cited.\n", encoding="utf-8")
    chapter = book / "chapters" / "one.qmd"
    chapter.write_text(
        "# One\n\nA classic [@watson1953] and a retracted one [@wakefield1998].\n\n"
        "```{r}\nx <- '@lacour2014'\n```\n",
        encoding="utf-8",
    )

    async def body() -> None:
        async with lsp_session(env, book) as client:
            open_file(client, chapter, "quarto")
            found = await diagnostics_where(client, chapter, _cites("wakefield1998"))
            assert "lacour2014" not in keyed(found)  # code, not a citation
            assert server_verdicts(found) == build_verdicts(chapter, env)
            text = chapter.read_text(encoding="utf-8") + "\nAlso [@lacour2014].\n"
            change_file(client, chapter, text, 2)
            now = await diagnostics_where(client, chapter, _cites("lacour2014"))
            (use,) = keyed(now)["lacour2014"]
            assert use.range.start.line == len(text.splitlines()) - 1

    asyncio.run(body())


def test_hover_shows_verdict_history_and_sources(tmp_path: Path, env: dict[str, str]) -> None:
    paper = _paper(tmp_path, "paper.md")

    async def body() -> None:
        async with lsp_session(env, tmp_path) as client:
            open_file(client, paper, "markdown")
            found = await diagnostics_where(client, paper, _cites("wakefield1998"))
            (use,) = keyed(found)["wakefield1998"]
            hover = await client.text_document_hover_async(
                lsp.HoverParams(
                    text_document=lsp.TextDocumentIdentifier(uri=paper.as_uri()),
                    position=lsp.Position(use.range.start.line, use.range.start.character + 2),
                )
            )
            assert hover is not None
            text = hover.contents.value  # type: ignore[union-attr]
            assert "Retracted 2010" in text
            assert "History:" in text and "2004-03-06" in text and "2010-02-06" in text
            assert "Sources:" in text and "as of" in text and "ago" in text
            bib = tmp_path / "refs.bib"
            entry = await diagnostics_where(client, bib, _cites("wakefield1998"))
            (at_entry,) = keyed(entry)["wakefield1998"]
            on_entry = await client.text_document_hover_async(
                lsp.HoverParams(
                    text_document=lsp.TextDocumentIdentifier(uri=bib.as_uri()),
                    position=at_entry.range.start,
                )
            )
            assert on_entry is not None and "Retracted 2010" in on_entry.contents.value  # type: ignore[union-attr]

    asyncio.run(body())


def test_code_actions_allow_in_user_config_and_open_notice(
    tmp_path: Path, env: dict[str, str]
) -> None:
    paper = _paper(tmp_path / "paper", "paper.md")
    user_config = Path(env["XDG_CONFIG_HOME"]) / "rwgate" / "config.toml"

    async def body() -> None:
        async with lsp_session(env, paper.parent) as client:
            open_file(client, paper, "markdown")
            found = await diagnostics_where(client, paper, _cites("wakefield1998"))
            (use,) = keyed(found)["wakefield1998"]
            actions = await client.text_document_code_action_async(
                lsp.CodeActionParams(
                    text_document=lsp.TextDocumentIdentifier(uri=paper.as_uri()),
                    range=use.range,
                    context=lsp.CodeActionContext(diagnostics=[use]),
                )
            )
            by_title = {a.title: a for a in actions or [] if isinstance(a, lsp.CodeAction)}
            assert len(by_title) == 2, actions
            notice = next(a for t, a in by_title.items() if t.startswith("Open the notice"))
            allow = next(a for t, a in by_title.items() if t.startswith("Allow wakefield1998"))
            assert notice.command is not None and allow.command is not None

            await client.workspace_execute_command_async(
                lsp.ExecuteCommandParams(
                    command=notice.command.command, arguments=notice.command.arguments
                )
            )
            assert [d.uri for d in client.shown_documents] == [WAKEFIELD_NOTICE]
            assert client.shown_documents[0].external

            await client.workspace_execute_command_async(
                lsp.ExecuteCommandParams(
                    command=allow.command.command, arguments=allow.command.arguments
                )
            )
            allowed = await diagnostics_where(
                client,
                paper,
                lambda ds: "(allowed)" in keyed(ds).get("wakefield1998", [use])[0].message,
            )
            assert keyed(allowed)["wakefield1998"][0].severity != lsp.DiagnosticSeverity.Error

    asyncio.run(body())
    entries = tomllib.loads(user_config.read_text(encoding="utf-8"))["allow"]
    assert [e["key"] for e in entries] == ["wakefield1998"]
    assert entries[0]["reason"] and entries[0]["until"]
    assert paper.read_text(encoding="utf-8") == (EXAMPLES / "paper.md").read_text(encoding="utf-8")
    assert not (paper.parent / "rwgate.toml").exists()


def test_a_document_that_cannot_be_read_says_so(tmp_path: Path, env: dict[str, str]) -> None:
    paper = tmp_path / "lost.md"
    paper.write_text("---\nbibliography: nowhere.bib\n---\n\nSee [@x].\n", encoding="utf-8")

    async def body() -> None:
        async with lsp_session(env, tmp_path) as client:
            open_file(client, paper, "markdown")
            found = await diagnostics_where(
                client, paper, lambda ds: any("cannot read" in d.message for d in ds)
            )
            said = next(d for d in found if "cannot read" in d.message)
            assert "nowhere.bib" in said.message
            assert said.severity == lsp.DiagnosticSeverity.Error

    asyncio.run(body())
