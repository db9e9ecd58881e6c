"""The MCP tools in process, through the SDK's own client, against the loopback fake Crossref.

Shared helpers (in_process, call, structured, error_text) are imported by test_mcp_transports.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from example_data import latex_example
from mcp import Client
from mcp_types import CallToolResult

from fakes.crossref import FakeCrossref
from rwgate.contract.models import Citation
from rwgate.frontends.cli.main import main
from rwgate.frontends.mcp.server import build_server
from rwgate.frontends.mcp.tools import Toolbox

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WAKEFIELD = "10.1016/s0140-6736(97)11096-0"
WAKEFIELD_NOTICES = [
    ("correction", "10.1016/s0140-6736(04)15715-2", "2004-03-06"),
    ("retraction", "10.1016/s0140-6736(10)60175-4", "2010-02-06"),
]

Call = Callable[[str, dict[str, Any]], Awaitable[CallToolResult]]


def in_process(
    roots: list[Path], body: Callable[[Client], Awaitable[Any]], **overrides: Any
) -> Any:
    """Run ``body(client)`` against a fresh server over the SDK's in-process pairing."""
    toolbox = Toolbox(roots, overrides)

    async def main() -> Any:
        async with Client(build_server(toolbox)) as client:
            return await body(client)

    try:
        return anyio.run(main)
    finally:
        toolbox.close()


def call(roots: list[Path], name: str, args: dict[str, Any], **overrides: Any) -> CallToolResult:
    """One tool call on a fresh in-process server."""

    async def body(client: Client) -> CallToolResult:
        return await client.call_tool(name, args)

    result: CallToolResult = in_process(roots, body, **overrides)
    return result


def structured(result: CallToolResult) -> dict[str, Any]:
    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
    assert not result.is_error, text
    assert result.structured_content is not None
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    text: str = result.content[0].text  # type: ignore[union-attr]
    assert "\n" not in text and "Traceback" not in text
    return text


def notices_of(citation: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(n["type"], n["doi"], n["date"]) for n in citation["notices"]]


# --- fixtures ------------------------------------------------------------------------------------


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeCrossref]:
    """The fake Crossref with notice records, as the environment's Crossref."""
    with FakeCrossref(notices=True) as running:
        monkeypatch.setenv("RWGATE_CROSSREF_URL", running.url)
        yield running


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the example paper in a project that has its own policy and allow-list."""
    root = tmp_path / "project"
    root.mkdir()
    for name in ("paper.md", "refs.bib"):
        shutil.copy(EXAMPLES / name, root / name)
    (root / "rwgate.toml").write_text(
        'policy = "strict"\n'
        "[[allow]]\n"
        'key = "mcnutt2015"\n'
        'reason = "the editor\'s notice is discussed, not relied on"\n'
        "[[allow]]\n"
        'doi = "10.1126/science.1256151"\n'
        'reason = "discussed as a retracted study"\n',
        encoding="utf-8",
    )
    return root


def _cli_report(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, dict[str, Any]]:
    code = main(["check", "--format", "json", str(path)])
    return code, json.loads(capsys.readouterr().out)


def _same_citations(mcp: list[dict[str, Any]], cli: list[dict[str, Any]]) -> None:
    """Field for field, through the shared Citation model (JSON drops None fields). ``added``
    (when git says the entry was written) is what `rwgate check` reports beside the verdict."""
    mine = [Citation.model_validate(c).model_dump(mode="json", exclude={"added"}) for c in mcp]
    theirs = [Citation.model_validate(c).model_dump(mode="json", exclude={"added"}) for c in cli]
    assert mine == theirs


# --- every tool in process -----------------------------------------------------------------------


def test_client_sees_twelve_tools_with_schemas(fake: FakeCrossref, tmp_path: Path) -> None:
    async def body(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {t.name: t for t in in_process([tmp_path], body)}
    assert sorted(tools) == sorted(
        [
            "rw_check_doi",
            "rw_check_dois",
            "rw_check_author",
            "rw_search",
            "rw_recent_retractions",
            "rw_get_record",
            "rw_check_bibliography",
            "rw_check_manuscript",
            "rw_data_status",
            "verify_citation",
            "search_references",
            "get_bibtex",
        ]
    )
    for tool in tools.values():
        assert tool.description and tool.output_schema and tool.input_schema["type"] == "object"
        assert tool.annotations is not None and tool.annotations.read_only_hint
    assert tools["rw_check_doi"].input_schema["required"] == ["doi"]
    assert "citation" in tools["rw_check_doi"].output_schema["properties"]


TOOL_LIST_BYTES = 12_000
"""Issue 40: the tool list an agent loads at every start (59,449 bytes of compact JSON before)."""


def tool_list_bytes(tools: list[Any]) -> int:
    """The compact JSON of ``tools/list``'s tools as the client received them (names, titles,
    descriptions, input and output schemas, annotations), in UTF-8 bytes."""
    listed = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    return len(json.dumps(listed, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def test_the_tool_list_fits_an_agents_context(fake: FakeCrossref, tmp_path: Path) -> None:
    """At most TOOL_LIST_BYTES for the 12 tools, and no answer field is hidden: each output
    schema names every top-level field of its model, or the tool that answers with the same
    model (shared definitions, once); each description says when to use the tool."""
    from rwgate.frontends.mcp import models
    from rwgate.frontends.verify.models import BibtexResult, SearchResult, VerifyResult

    async def body(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = in_process([tmp_path], body)
    size = tool_list_bytes(tools)
    assert size <= TOOL_LIST_BYTES, f"tools/list is {size} bytes (bound {TOOL_LIST_BYTES})"
    answers = {
        "rw_check_doi": models.DoiCheck,
        "rw_check_dois": models.BatchCheck,
        "rw_check_author": models.AuthorCheck,
        "rw_search": models.NoticeSearch,
        "rw_recent_retractions": models.RecentNotices,
        "rw_get_record": models.Record,
        "rw_data_status": models.DataStatus,
        "rw_check_bibliography": models.DocumentCheck,
        "rw_check_manuscript": models.DocumentCheck,
        "verify_citation": VerifyResult,
        "search_references": SearchResult,
        "get_bibtex": BibtexResult,
    }
    by_name = {t.name: t for t in tools}
    for name, model in answers.items():
        tool = by_name[name]
        assert tool.description and tool.description.startswith("Use "), name
        schema = tool.output_schema
        assert schema is not None and schema["type"] == "object", name
        if "properties" not in schema:  # the same model as an earlier tool's answer
            assert schema["description"] == f"{model.__name__}, as rw_check_bibliography answers"
            continue
        assert set(schema["properties"]) == set(model.model_json_schema()["properties"]), name
    citation = by_name["rw_check_doi"].output_schema["properties"]["citation"]["description"]
    assert "status, action" in citation and "notices[type, doi, date" in citation


def test_check_doi_url_form_gives_both_wakefield_notices(
    fake: FakeCrossref, tmp_path: Path
) -> None:
    url = f"https://doi.org/{WAKEFIELD.upper()}"
    out = structured(call([tmp_path], "rw_check_doi", {"doi": url}))
    citation = out["citation"]
    assert citation["doi"] == WAKEFIELD and citation["status"] == "retracted"
    assert citation["action"] == "annotate" and citation["year"] == 1998
    assert notices_of(citation) == WAKEFIELD_NOTICES
    assert [n["record_id"] for n in citation["notices"]] == ["17269", "4036"]
    assert citation["journal"] == "The Lancet"
    assert out["sources"][0]["name"] == "crossref"


def test_check_dois_keeps_input_order(fake: FakeCrossref, tmp_path: Path) -> None:
    dois = ["10.1038/nature12373", f"doi:{WAKEFIELD}", "10.12/not a doi", "10.1126/SCIENCE.1256151"]
    out = structured(call([tmp_path], "rw_check_dois", {"dois": dois, "detail": True}))
    statuses = [(c["doi"], c["status"]) for c in out["citations"]]
    assert statuses == [
        ("10.1038/nature12373", "clean"),
        (WAKEFIELD, "retracted"),
        (None, "invalid_doi"),
        ("10.1126/science.1256151", "retracted"),
    ]
    assert out["summary"]["cited"] == 4 and out["summary"]["flagged"] == 2
    assert len(fake.requests_to("/works")) == 1  # one batched look-up


def test_check_author_finds_flagged_works_with_caveat(fake: FakeCrossref, tmp_path: Path) -> None:
    out = structured(call([tmp_path], "rw_check_author", {"name": "Wakefield, A. J."}))
    assert "not an identity match" in out["caveat"]
    assert [w["citation"]["doi"] for w in out["flagged"]] == [WAKEFIELD]
    assert notices_of(out["flagged"][0]["citation"]) == WAKEFIELD_NOTICES
    assert "AJ Wakefield" in out["flagged"][0]["authors"]
    asked = fake.requests_to("/works")[0]
    assert asked.query["query.author"] == ["Wakefield, A. J."]
    # A different first initial is another person as far as the name can tell.
    other = structured(call([tmp_path], "rw_check_author", {"name": "Z. Wakefield"}))
    assert other["matched"] == 0 and other["flagged"] == []


def test_search_filters_notices_and_sorts_by_updated(fake: FakeCrossref, tmp_path: Path) -> None:
    args = {
        "journal": "The Lancet",
        "update_types": ["retraction"],
        "posted_since": "2020-06",
        "limit": 10,
    }
    out = structured(call([tmp_path], "rw_search", args))
    assert [n["notice_doi"] for n in out["notices"]] == [
        "10.1016/s0140-6736(20)31528-2",
        "10.1016/s0140-6736(20)31324-6",
    ]
    assert out["request"]["sort"] == "updated" and out["total"] == 2
    filters = fake.requests_to("/works")[0].query["filter"][0].split(",")
    assert "update-type:retraction" in filters and "from-update-date:2020-06" in filters
    older = structured(call([tmp_path], "rw_search", {"year_max": 2016, "limit": 10}))
    assert [n["notice_doi"] for n in older["notices"]] == [
        "10.1126/science.aac6638",
        "10.1016/s0140-6736(10)60175-4",
        "10.1016/s0140-6736(04)15715-2",
    ]
    worded = structured(call([tmp_path], "rw_search", {"query": "persuasion science editorial"}))
    assert "10.1126/science.aac6638" in [n["notice_doi"] for n in worded["notices"]]


def test_recent_retractions_counts_journals(fake: FakeCrossref, tmp_path: Path) -> None:
    out = structured(call([tmp_path], "rw_recent_retractions", {"limit": 50}))
    dates = [n["date"] for n in out["notices"]]
    assert dates == sorted(dates, reverse=True)
    assert out["by_journal"] == {"The Lancet": 4, "Science": 1}
    assert all(any(u["type"] == "retraction" for u in n["updates"]) for n in out["notices"])
    eoc = structured(
        call(
            [tmp_path],
            "rw_recent_retractions",
            {"limit": 5, "update_types": ["expression_of_concern"]},
        )
    )
    assert [n["notice_doi"] for n in eoc["notices"]] == ["10.1016/s0140-6736(20)31290-3"]


def test_get_record_of_notice_and_of_unknown(fake: FakeCrossref, tmp_path: Path) -> None:
    notice = structured(call([tmp_path], "rw_get_record", {"doi": "doi:10.1126/science.aac6638"}))
    assert notice["found"] and notice["title"] == "Editorial retraction"
    assert [(u["doi"], u["type"]) for u in notice["update_to"]] == [
        ("10.1126/science.1256151", "retraction")
    ]
    missing = structured(call([tmp_path], "rw_get_record", {"doi": "10.5555/nothing-here"}))
    assert missing == {**missing, "found": False, "doi": "10.5555/nothing-here"}


def test_check_bibliography_file_and_text(fake: FakeCrossref, project: Path) -> None:
    out = structured(call([project], "rw_check_bibliography", {"path": "refs.bib", "detail": True}))
    by_key = {c["key"]: c for c in out["citations"]}
    assert by_key["wakefield1998"]["status"] == "retracted"
    assert by_key["wakefield1998"]["location"]["line"] > 1
    assert by_key["lacour2014"]["allowed"] is True  # the project's allow-list applies
    assert out["gate"] == "fail" and out["config_file"].endswith("rwgate.toml")
    text = f"{WAKEFIELD}\n10.1038/nature12373\n"
    listed = structured(call([project], "rw_check_bibliography", {"text": text, "detail": True}))
    assert [c["status"] for c in listed["citations"]] == ["retracted", "clean"]


def test_data_status_names_sources_and_roots(fake: FakeCrossref, tmp_path: Path) -> None:
    out = structured(call([tmp_path], "rw_data_status", {}))
    assert out["crossref"]["url"] == fake.url and out["offline"] is False
    assert out["snapshot"]["exists"] is False and out["roots"] == [str(tmp_path.resolve())]
    assert out["limits"]["batch"] == 1000
    offline = structured(call([tmp_path], "rw_data_status", {}, offline=True))
    assert offline["offline"] is True


# --- the build's verdicts ------------------------------------------------------------------------


def test_manuscript_equals_rwgate_check_on_the_example(
    fake: FakeCrossref, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = structured(call([EXAMPLES], "rw_check_manuscript", {"path": "paper.md", "detail": True}))
    monkeypatch.chdir(EXAMPLES.parent)  # `rwgate check --format json examples/paper.md`
    code, report = _cli_report(capsys, Path("examples/paper.md"))
    _same_citations(out["citations"], report["citations"])
    assert len(out["citations"]) == 10
    summary = {k: v for k, v in out["summary"].items() if v is not None}  # `changed`: no lock
    assert (out["exit_code"], out["policy"], summary) == (
        code,
        report["policy"],
        report["summary"],
    )
    by_key = {c["key"]: c for c in out["citations"]}
    assert notices_of(by_key["wakefield1998"]) == WAKEFIELD_NOTICES


def test_manuscript_uses_the_documents_policy_and_allow_list(
    fake: FakeCrossref, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = structured(
        call([project], "rw_check_manuscript", {"path": str(project / "paper.md"), "detail": True})
    )
    code, report = _cli_report(capsys, project / "paper.md")
    _same_citations(out["citations"], report["citations"])
    assert code == out["exit_code"] == 1 and out["gate"] == "fail"
    assert out["policy"]["preset"] == "strict" == report["policy"]["preset"]
    by_key = {c["key"]: c for c in out["citations"]}
    assert by_key["wakefield1998"]["action"] == "fail"
    assert by_key["lacour2014"]["allowed"] and by_key["lacour2014"]["action"] != "fail"


# --- safety -------------------------------------------------------------------------------------


def test_paths_outside_the_root_are_refused(fake: FakeCrossref, tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    secret = tmp_path / "secret.bib"
    secret.write_text("@article{s, doi = {10.1038/nature12373}}\n", encoding="utf-8")
    (root / "link.bib").symlink_to(secret)
    for tool, path in [
        ("rw_check_bibliography", str(secret)),
        ("rw_check_bibliography", "../secret.bib"),
        ("rw_check_bibliography", "link.bib"),
        ("rw_check_manuscript", str(EXAMPLES / "paper.md")),
    ]:
        text = error_text(call([root], tool, {"path": path}))
        assert "outside the allowed roots" in text, (tool, path)
    assert fake.requests == []  # nothing was read, nothing was asked


def test_manuscript_bibliography_outside_the_root_is_refused(
    fake: FakeCrossref, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(EXAMPLES / "refs.bib", tmp_path / "refs.bib")
    (root / "paper.md").write_text(
        "---\nbibliography: ../refs.bib\n---\n\nText [@wakefield1998].\n", encoding="utf-8"
    )
    text = error_text(call([root], "rw_check_manuscript", {"path": "paper.md"}))
    assert text.endswith("a bibliography lies outside the allowed roots; refused")
    assert "refs.bib" not in text  # never named


@pytest.mark.parametrize("target", ["exists", "missing"])
def test_manuscript_bibliography_symlinked_out_of_the_root_is_refused(
    fake: FakeCrossref, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """Issue 28: ``sub/refs.bib``, a symlink out of the root, with the server started in the root
    (where pandoc's next place, ``./refs.bib``, is inside and missing) answered "bibliography
    file not found" with ``isError: false``. Now the documented refusal, in the same words
    whether the file outside exists or not, never naming it; nothing is asked upstream."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    secret = tmp_path / "secret.bib"
    if target == "exists":
        shutil.copy(EXAMPLES / "refs.bib", secret)
    (root / "sub" / "refs.bib").symlink_to(secret)
    (root / "sub" / "paper.md").write_text(
        "---\nbibliography: refs.bib\n---\n\nText [@wakefield1998].\n", encoding="utf-8"
    )
    monkeypatch.chdir(root)
    result = call([root], "rw_check_manuscript", {"path": "sub/paper.md"})
    text = error_text(result)
    assert text.endswith("a bibliography lies outside the allowed roots; refused"), text
    assert "refs.bib" not in text and "secret" not in text
    assert fake.requests == []


def _outside_chapter(tmp_path: Path) -> Path:
    """A root holding the example paper.tex and refs.bib, and a chapter outside that root."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    latex_example(root)
    outside.mkdir()
    (outside / "chapter.tex").write_text("SECRET-CONTENT \\cite{leaked}\n", encoding="utf-8")
    return root


def test_manuscript_tex_inputting_a_file_outside_the_root_is_refused(
    fake: FakeCrossref, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _outside_chapter(tmp_path)
    paper = root / "paper.tex"
    ok = structured(call([root], "rw_check_manuscript", {"path": "paper.tex", "detail": True}))
    code, report = _cli_report(capsys, paper)  # a manuscript inside the root works as before
    _same_citations(ok["citations"], report["citations"])
    assert ok["exit_code"] == code and len(ok["citations"]) == 10
    fake.requests.clear()
    for include in ("\\input{../outside/chapter}", f"\\include{{{tmp_path / 'outside/chapter'}}}"):
        paper.write_text(
            (EXAMPLES / "paper.tex")
            .read_text()
            .replace("\\bibliography{", include + "\n\\bibliography{")
        )
        text = error_text(call([root], "rw_check_manuscript", {"path": "paper.tex"}))
        assert text.endswith("an included file lies outside the allowed roots; refused"), text
        assert "SECRET" not in text and "leaked" not in text and "chapter" not in text
    assert fake.requests == []  # refused before any citation was checked


def test_manuscript_aux_symlinked_outside_the_root_is_refused(
    fake: FakeCrossref, tmp_path: Path
) -> None:
    root = _outside_chapter(tmp_path)
    (tmp_path / "outside" / "paper.aux").write_text("\\citation{leaked}\n", encoding="utf-8")
    (root / "paper.aux").symlink_to(tmp_path / "outside" / "paper.aux")
    os.utime(root / "paper.tex", (1, 1))  # the .aux looks fresh, so it would be read
    text = error_text(call([root], "rw_check_manuscript", {"path": "paper.tex"}))
    assert text.endswith("a file the document reads lies outside the allowed roots; refused")


def test_manuscript_rst_include_outside_the_root_is_not_read(
    fake: FakeCrossref, tmp_path: Path
) -> None:
    root = _outside_chapter(tmp_path)
    secret = tmp_path / "outside" / "chapter.tex"
    (root / "notes.rst").write_text(f"Notes\n=====\n\n.. include:: {secret}\n", encoding="utf-8")
    out = structured(call([root], "rw_check_manuscript", {"path": "notes.rst", "detail": True}))
    assert out["citations"] == [] and out["gate"] == "pass"
    assert "SECRET" not in json.dumps(out)
    assert any(
        f"included file not read (its citations are not checked): {secret}" in w
        for w in out["warnings"]
    )


def test_bad_arguments_give_one_line_tool_errors(fake: FakeCrossref, tmp_path: Path) -> None:
    async def body(client: Client) -> list[str]:
        cases: list[tuple[str, dict[str, Any]]] = [
            ("rw_check_dois", {"dois": ["10.1038/x"] * 1001}),
            ("rw_check_dois", {"dois": "10.1038/x"}),
            ("rw_check_dois", {"dois": []}),
            ("rw_check_bibliography", {"text": "x" * (2 * 1024 * 1024 + 1)}),
            ("rw_check_bibliography", {}),
            ("rw_check_manuscript", {"path": "missing.md"}),
            ("rw_search", {"limit": 0}),
            ("rw_search", {"posted_since": "last week"}),
            ("rw_search", {"update_types": ["retraction); drop"]}),
            ("rw_get_record", {"doi": "not a doi"}),
            ("rw_check_author", {"name": "?"}),
            ("rw_check_doi", {}),
        ]
        return [error_text(await client.call_tool(n, a)) for n, a in cases]

    texts = in_process([tmp_path], body)
    assert "dois: List should have at most 1000 items" in texts[0]  # the schema's own bound
    assert "Input should be a valid list" in texts[1]
    assert "at least one value" in texts[2]
    assert "the limit is 2097152" in texts[3]
    assert "exactly one of path or text" in texts[4]
    assert "no such file" in texts[5]
    assert "limit: Input should be greater than or equal to 1" in texts[6]
    assert "posted_since: String should match pattern" in texts[7]
    assert "is not an update type" in texts[8]
    assert "is not a DOI" in texts[9]
    assert "give an author name" in texts[10]
    assert "argument doi: Field required" in texts[11]
    assert fake.requests == []


def test_crossref_failure_is_a_tool_error_for_searches_and_unverified_for_checks(
    fake: FakeCrossref, tmp_path: Path
) -> None:
    async def body(client: Client) -> tuple[Any, Any]:
        fake.fail_next("400", times=1)
        search = await client.call_tool("rw_search", {"query": "lancet"})
        fake.fail_next("400", times=1)
        checked = await client.call_tool("rw_check_doi", {"doi": WAKEFIELD})
        return search, checked

    search, checked = in_process([tmp_path], body)
    assert "HTTP 400" in error_text(search)
    assert structured(checked)["citation"]["status"] == "unverified"


def test_other_commands_never_import_the_sdk() -> None:
    code = (
        "import sys; from rwgate.frontends.cli.main import build_parser; "
        "build_parser().parse_args(['mcp']);"
        "assert not [m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')], 'SDK loaded'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_manuscript_with_a_missing_bibliography_is_exit_2_as_in_rwgate_check(
    fake: FakeCrossref, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(EXAMPLES / "refs.bib", tmp_path / "refs.bib")
    paper = tmp_path / "paper.md"
    paper.write_text(
        "---\nbibliography: [refs.bib, gone.bib]\n---\n\nText [@wakefield1998].\n",
        encoding="utf-8",
    )
    cli_code, cli = _cli_report(capsys, paper)
    checked = structured(
        call([tmp_path], "rw_check_manuscript", {"path": "paper.md", "detail": True})
    )
    assert cli_code == 2 and cli["exit_code"] == 2
    assert (checked["gate"], checked["exit_code"]) == ("fail", 2)
    assert any("gone.bib" in w for w in checked["warnings"])


def test_hostile_paths_give_one_line_errors(fake: FakeCrossref, tmp_path: Path) -> None:
    (tmp_path / "a\nb.txt").write_text("10.1038/nature12373\n", encoding="utf-8")
    (tmp_path / "loop.bib").symlink_to(tmp_path / "loop.bib")
    cases = [
        ("rw_check_bibliography", "x\ny.bib", "no such file"),
        ("rw_check_manuscript", "a\nb.txt", "is not a manuscript"),
        ("rw_check_bibliography", "x" * 5000, "path: String should have at most 4096 characters"),
        ("rw_check_bibliography", "x" * 300 + ".bib", "File name too long"),
        ("rw_check_bibliography", "loop.bib", "loop.bib"),
    ]
    for tool, path, expected in cases:
        text = error_text(call([tmp_path], tool, {"path": path}))
        assert expected in text and len(text) < 1000, (tool, text)
        assert "Error executing tool" not in text.split(": ", 1)[1]


def test_a_document_cannot_redirect_the_server_or_its_files(
    fake: FakeCrossref, project: Path, tmp_path: Path
) -> None:
    """An agent-written rwgate: block may set the policy, never where the server reaches."""
    from fakes.crossref import FakeCrossref as Other

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with Other() as rogue:
        paper = project / "paper.md"
        paper.write_text(
            paper.read_text(encoding="utf-8").replace(
                "---\n",
                "---\nrwgate:\n"
                f"  crossref_url: {rogue.url}\n"
                f"  report: {elsewhere / 'stolen.json'}\n"
                f"  snapshot: {elsewhere / 'snap.sqlite3'}\n"
                "  offline: false\n",
                1,
            ),
            encoding="utf-8",
        )
        out = structured(
            call([project], "rw_check_manuscript", {"path": "paper.md", "detail": True})
        )
        assert out["policy"]["preset"] == "strict"  # the document's own policy still applies
        assert rogue.requests == [] and fake.requests  # the server's Crossref was asked
        assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize(
    ("name", "template"),
    [
        ("in.tex", "\\documentclass{article}\\begin{document}\\input{%s}\\end{document}\n"),
        ("bib.tex", "\\documentclass{article}\\begin{document}\\cite{x}\\bibliography{%s}"
                    "\\end{document}\n"),
        ("bib.md", "---\nbibliography: %s\n---\n\n[@x]\n"),
    ],
)  # fmt: skip
def test_an_outside_path_gets_the_same_answer_whether_or_not_it_exists(
    fake: FakeCrossref, tmp_path: Path, name: str, template: str
) -> None:
    """Issue 16: the refusal is no oracle for files outside the roots, and never names them;
    globs (``\\bibliography{../../../root/*}``, an absolute pattern) are refused before they are
    expanded."""
    root = tmp_path / "root"
    root.mkdir()
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "exists.bib").write_text("@article{x, doi={10.1/x}}\n", encoding="utf-8")
    answers = set()
    for target in ("../secret/exists", "../secret/absent", str(secret / "*"), "../secret/*"):
        written = target if not name.endswith(".md") else target + ".bib"
        (root / name).write_text(template % written, encoding="utf-8")
        text = error_text(call([root], "rw_check_manuscript", {"path": name}))
        assert "secret" not in text and "exists" not in text and "absent" not in text, text
        answers.add(text)
    assert len(answers) == 1 and answers.pop().endswith("outside the allowed roots; refused")


def test_text_inputs_accept_csl_json_and_every_failure_is_one_line(
    fake: FakeCrossref, tmp_path: Path
) -> None:
    """Issue 16: CSL JSON given as text (which the SDK parses into a list before validation) is
    read; malformed or deeply nested text is a one-line tool error, never an empty one; unknown
    arguments are refused, as the schemas' additionalProperties says."""
    csl = '[{"id": "w", "type": "article-journal", "DOI": "10.1016/S0140-6736(97)11096-0"}]'
    for given in (csl, json.loads(csl)):
        result = call([tmp_path], "rw_check_bibliography", {"text": given})
        assert not result.is_error, error_text(result)
        assert structured(result)["citations"][0]["status"] == "retracted"
    for bad, said in (
        ('{"id": "w"', "invalid JSON"),
        ("[" * 5000, "nested too deeply"),
        ("references:\n  - id: [unclosed\n", "text:"),
    ):
        text = error_text(call([tmp_path], "rw_check_bibliography", {"text": bad}))
        assert said in text and "\n" not in text.strip() and "Traceback" not in text, text
    extra = error_text(call([tmp_path], "rw_check_dois", {"dois": ["10.1/x"], "limit": 3}))
    assert extra == "rw_check_dois: unknown argument 'limit' (arguments: detail, dois)"

    async def schemas(client: Client) -> list[Any]:
        return (await client.list_tools()).tools

    tools = in_process([tmp_path], schemas)
    assert all(t.input_schema.get("additionalProperties") is False for t in tools)


def test_two_hundred_dois_with_ten_flagged_fit_a_small_context(
    fake: FakeCrossref, tmp_path: Path
) -> None:
    """Issue 16's target: under 3,000 tokens (here: under 10,000 characters of compact JSON)."""
    dois = []
    for i in range(200):
        doi = f"10.5555/ctx.{i:04d}"
        notices = None
        if i % 20 == 0:
            when = {"date-parts": [[2022, 1, 1]]}
            notices = [{"DOI": f"10.5555/ctx.n{i}", "type": "retraction",
                        "source": "retraction-watch", "updated": when}]  # fmt: skip
        fake.add_synthetic(doi, updated_by=notices, title=f"Synthetic work {i} on a topic")
        dois.append(doi)
    result = call([tmp_path], "rw_check_dois", {"dois": dois})
    text = result.content[0].text  # type: ignore[union-attr]
    answer = json.loads(text)
    assert len(text) < 10_000 and answer["clean"]["count"] == 190
    assert [c["status"] for c in answer["citations"]] == ["retracted"] * 10
    assert "\n" not in text and "null" not in text


def test_resources_prompts_titles_and_annotations(fake: FakeCrossref, tmp_path: Path) -> None:
    """Issue 16: the protocol's own features, read through the SDK client."""

    async def body(client: Client) -> dict[str, Any]:
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        prompts = (await client.list_prompts()).prompts
        tools = (await client.list_tools()).tools
        notice = await client.read_resource(f"rwgate://notice/{WAKEFIELD}")
        policy = await client.read_resource("rwgate://policy")
        status = await client.read_resource("rwgate://data-status")
        screening = await client.get_prompt("pre_submission_screening", {"path": "paper.md"})
        wording = await client.get_prompt("retracted_citation_wording", {"doi": WAKEFIELD})
        return locals()

    seen = in_process([tmp_path], body, policy="strict")
    assert {str(r.uri) for r in seen["resources"]} == {"rwgate://data-status", "rwgate://policy"}
    assert [t.uri_template for t in seen["templates"]] == ["rwgate://notice/{+doi}"]
    assert {p.name for p in seen["prompts"]} == {
        "pre_submission_screening",
        "retracted_citation_wording",
    }
    notice = json.loads(seen["notice"].contents[0].text)
    assert notice["citation"]["status"] == "retracted"
    assert notices_of(notice["citation"]) == WAKEFIELD_NOTICES
    policy = json.loads(seen["policy"].contents[0].text)
    assert policy["policy"]["preset"] == "strict" and policy["actions"]["retracted"] == "fail"
    assert "snapshot" in json.loads(seen["status"].contents[0].text)
    assert 'rw_check_manuscript with path "paper.md"' in seen["screening"].messages[0].content.text
    assert "neutral" in seen["wording"].messages[0].content.text
    for tool in seen["tools"]:
        assert tool.title and tool.annotations.read_only_hint is True, tool.name
        assert tool.annotations.open_world_hint is True and tool.output_schema


def test_a_long_check_sends_progress_notifications(fake: FakeCrossref, tmp_path: Path) -> None:
    """A check that takes longer than a second reports progress to a client that asked for it
    (a progress token); one that did not ask gets none and the same answer."""
    dois = [f"10.5555/slow.{i:04d}" for i in range(250)]
    for doi in dois:
        fake.add_synthetic(doi, title=f"Slow work {doi}")
    fake.latency = 1.2
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async def body(client: Client) -> Any:
        return await client.call_tool("rw_check_dois", {"dois": dois}, progress_callback=progress)

    result = in_process([tmp_path], body, no_cache=True)
    assert not result.is_error and json.loads(result.content[0].text)["clean"]["count"] == 250
    assert seen and all(total == 250 and message == "works judged" for _, total, message in seen)
    assert [done for done, _, _ in seen] == sorted(done for done, _, _ in seen)


def test_work_per_call_is_bounded(fake: FakeCrossref, tmp_path: Path) -> None:
    """Issue 16: 30,000 works took 80 s and answered 14 MB; a 19 MB manuscript ran pandoc for
    120 s at 1.8 GB. Over-limit input is refused up front, saying how to split it."""
    many = "\n".join(f"10.5555/many.{i}" for i in range(1001))
    text = error_text(call([tmp_path], "rw_check_bibliography", {"text": many}))
    assert "1001 works; the limit is 1000 per call: split the bibliography" in text
    bib = "".join(f"@article{{k{i}, doi={{10.5555/b.{i}}}}}\n" for i in range(1001))
    (tmp_path / "big.bib").write_text(bib, encoding="utf-8")
    text = error_text(call([tmp_path], "rw_check_bibliography", {"path": "big.bib"}))
    assert "1001 works" in text
    (tmp_path / "huge.md").write_text("word " * 1_200_000, encoding="utf-8")
    text = error_text(call([tmp_path], "rw_check_manuscript", {"path": "huge.md"}))
    assert "the limit is 5242880 per call: check its chapters one by one" in text
    assert fake.requests == []


def test_pandoc_runs_under_the_calls_heap_limit(
    fake: FakeCrossref, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server's pandoc runs under rwgate's one set of bounds
    (rwgate.readers.pandoc_exe.bounds)."""
    monkeypatch.setenv("RWGATE_PANDOC_HEAP_MB", "64")
    (tmp_path / "big.md").write_text("# t\n\n" + "word " * 600_000 + "[@x]\n", encoding="utf-8")
    text = error_text(call([tmp_path], "rw_check_manuscript", {"path": "big.md"}))
    assert "pandoc needed more than 64 MB; split the document" in text


def test_a_quarto_chapter_takes_the_project_bibliography_within_the_roots(
    fake: FakeCrossref, tmp_path: Path
) -> None:
    """A chapter's bibliography comes from ``_quarto.yml`` (its chunk text is never a citation);
    a ``_quarto.yml`` above the roots is never read, so the chapter cannot be judged there."""
    book = tmp_path / "book"
    book.mkdir()
    shutil.copy(EXAMPLES / "refs.bib", book / "refs.bib")
    (book / "_quarto.yml").write_text("project:\n  type: book\nbibliography: refs.bib\n", "utf-8")
    (book / "chapters").mkdir()
    (book / "chapters" / "two.qmd").write_text(
        "# Two\n\n```{r}\n# [@lacour2014]\n\nx <- 1\n```\n\nAs shown [@wakefield1998].\n", "utf-8"
    )
    out = structured(call([book], "rw_check_manuscript", {"path": "chapters/two.qmd"}))
    assert [c["key"] for c in out["citations"]] == ["wakefield1998"]
    assert out["citations"][0]["status"] == "retracted"
    text = error_text(call([book / "chapters"], "rw_check_manuscript", {"path": "two.qmd"}))
    assert "cannot judge from the sources" in text and "refs.bib" not in text
