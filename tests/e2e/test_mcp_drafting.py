"""The drafting tools over MCP (in process, the SDK's client) against fake Crossref and OpenAlex.

The server is configured the way a user starts it: registry URLs from ``RWGATE_*`` in the
environment, other settings as ``rwgate mcp`` flags (Toolbox overrides).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from test_mcp import WAKEFIELD, WAKEFIELD_NOTICES, call, error_text, in_process, notices_of
from test_mcp import structured as ok

from fakes.crossref import FakeCrossref, closed_port_url
from fakes.openalex import FakeOpenAlex

LACOUR = "10.1126/science.1256151"
LACOUR_NOTICE = "10.1126/science.aac6638"
LACOUR_TITLE = (
    "When contact changes minds: An experiment on transmission of support for gay equality"
)
INVENTED = "Deep reinforcement learning predicts retraction cascades in peer review networks"
BOTH = ["crossref", "openalex"]


@pytest.fixture
def fake_openalex() -> Iterator[FakeOpenAlex]:
    with FakeOpenAlex() as fake:
        yield fake


@pytest.fixture
def registries(
    monkeypatch: pytest.MonkeyPatch, fake_crossref: FakeCrossref, fake_openalex: FakeOpenAlex
) -> tuple[FakeCrossref, FakeOpenAlex]:
    """Both fakes, named by the environment the server starts in."""
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    monkeypatch.setenv("RWGATE_OPENALEX_URL", fake_openalex.url)
    monkeypatch.setenv("RWGATE_MAX_SECONDS", "4")
    return fake_crossref, fake_openalex


def lacour(tmp_path: Path, **overrides: Any) -> dict[str, Any]:
    args = {"title": LACOUR_TITLE, "authors": "LaCour, M. J. and Green, D. P.", "year": 2014}
    return ok(call([tmp_path], "verify_citation", args, **overrides))


# --- schemas -------------------------------------------------------------------------------------


def test_drafting_tools_have_schemas_and_docstrings(registries: Any, tmp_path: Path) -> None:
    async def body(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {t.name: t for t in in_process([tmp_path], body)}
    drafting = [tools[n] for n in ("verify_citation", "search_references", "get_bibtex")]
    for tool in drafting:
        assert tool.output_schema and "sources_answered" in tool.output_schema["properties"]
        assert tool.description and "integrity" in tool.description
        assert tool.annotations is not None and tool.annotations.read_only_hint
    verify, search, bibtex = drafting
    assert verify.input_schema["required"] == ["title"]
    assert set(verify.input_schema["properties"]) == {
        "title",
        "authors",
        "year",
        "doi",
        "arxiv_id",
        "url",
        "venue",
    }
    assert {"verdict", "confidence", "integrity"} <= set(verify.output_schema["properties"])
    assert search.input_schema["required"] == ["query"]
    assert "required" not in bibtex.input_schema
    assert "entries" in bibtex.output_schema["properties"]


# --- verify_citation -----------------------------------------------------------------------------


def test_verify_citation_retracted_match_carries_integrity(registries: Any, tmp_path: Path) -> None:
    out = lacour(tmp_path)
    assert out["verdict"] == "verified" and out["confidence"] >= 0.85
    assert out["matched"]["doi"] == LACOUR and out["matched"]["sources"] == BOTH
    assert out["sources_answered"] == BOTH and out["sources_failed"] == {}
    integrity = out["integrity"]
    assert integrity["status"] == "retracted" and integrity["action"] == "annotate"
    assert [n["doi"] for n in integrity["notices"]] == [LACOUR_NOTICE]
    assert f"matched work is retracted: Retracted 2015; notice doi:{LACOUR_NOTICE}" in out["errors"]
    assert f"note      = {{Retracted 2015; notice doi:{LACOUR_NOTICE}}}" in out["bibtex"]


def test_verify_citation_of_an_invented_reference_is_not_found(
    registries: Any, tmp_path: Path
) -> None:
    args = {"title": INVENTED, "authors": ["Smith, J.", "Doe, A."], "year": 2021}
    out = ok(call([tmp_path], "verify_citation", {**args, "venue": "Nature Methods"}))
    assert out["verdict"] == "not_found" and out["confidence"] < 0.5
    assert out.get("matched") is None and out.get("integrity") is None
    assert out.get("bibtex") is None
    assert out["sources_answered"] == BOTH


def test_openalex_down_says_which_sources_answered(
    fake_crossref: FakeCrossref, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
    down = {"openalex_url": closed_port_url(), "max_total_seconds": 4.0}  # `--openalex-url`
    out = lacour(tmp_path, **down)
    assert out["verdict"] == "verified" and out["matched"]["sources"] == ["crossref"]
    assert out["sources_answered"] == ["crossref"]
    assert "connection refused" in out["sources_failed"]["openalex"]
    assert any(w.startswith("sources answered: crossref (openalex") for w in out["warnings"])
    assert out["integrity"]["status"] == "retracted"
    query = {"query": "contact changes minds gay equality", "max_results": 5}
    found = ok(call([tmp_path], "search_references", query, **down))
    assert found["sources_answered"] == ["crossref"] and "openalex" in found["sources_failed"]
    assert found["results"][0]["work"]["doi"] == LACOUR


def test_server_flags_apply_to_drafting_tools(registries: Any, tmp_path: Path) -> None:
    crossref, openalex = registries
    strict = lacour(tmp_path, policy="strict")
    assert strict["integrity"]["status"] == "retracted" and strict["integrity"]["action"] == "fail"
    crossref.requests.clear()
    openalex.requests.clear()
    offline = lacour(tmp_path, offline=True, no_cache=True)
    assert offline["verdict"] == "unverified" and offline["sources_answered"] == []
    assert all("offline" in why for why in offline["sources_failed"].values())
    assert crossref.requests == [] and openalex.requests == []


@pytest.fixture
def trap() -> Iterator[tuple[str, list[str]]]:
    """A loopback server recording every request: where a client's URL points."""
    hits: list[str] = []

    class Recorder(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def test_a_url_is_read_never_fetched(
    registries: Any, trap: tuple[str, list[str]], tmp_path: Path
) -> None:
    base, hits = trap
    url = f"{base}/doi/full/{LACOUR}?utm_source=x"
    out = ok(call([tmp_path], "verify_citation", {"title": LACOUR_TITLE, "url": url}))
    assert out["matched"]["doi"] == LACOUR
    assert f"DOI {LACOUR} read from the URL (not fetched)" in out["info"]
    assert hits == []


# --- search_references ---------------------------------------------------------------------------


def test_search_references_real_works_with_integrity(registries: Any, tmp_path: Path) -> None:
    crossref, _ = registries
    args = {"query": "contact changes minds gay equality", "max_results": 5}
    out = ok(call([tmp_path], "search_references", args))
    dois = [h["work"]["doi"] for h in out["results"]]
    assert dois[0] == LACOUR and len(dois) == len(set(dois)) <= 5
    assert out["results"][0]["work"]["sources"] == BOTH
    assert out["results"][0]["integrity"]["status"] == "retracted"
    assert out["sources_answered"] == BOTH
    crossref.requests.clear()
    only = {"query": "nature cell nucleic", "year_from": 2013, "year_to": 2013}
    narrowed = ok(call([tmp_path], "search_references", {**only, "sources": ["OpenAlex"]}))
    assert narrowed["results"] and all(h["work"]["year"] == 2013 for h in narrowed["results"])
    assert narrowed["sources_answered"] == ["openalex"]
    assert not [r for r in crossref.requests if "query.bibliographic" in r.query]


# --- get_bibtex ----------------------------------------------------------------------------------


def test_get_bibtex_for_wakefield_carries_the_retraction_note(
    registries: Any, tmp_path: Path
) -> None:
    out = ok(call([tmp_path], "get_bibtex", {"doi": f"https://doi.org/{WAKEFIELD.upper()}"}))
    [entry] = out["entries"]
    assert entry["doi"] == WAKEFIELD and entry["key"] == "wakefield1998ileal"
    assert entry["origin"] == "content_negotiation"
    assert entry["bibtex"].startswith("@article{wakefield1998ileal,")
    assert (
        "note      = {Retracted 2010; notice doi:10.1016/s0140-6736(10)60175-4}"
        in (entry["bibtex"])
    )
    assert entry["integrity"]["status"] == "retracted"
    assert notices_of(entry["integrity"]) == WAKEFIELD_NOTICES


def test_get_bibtex_never_invents_entries(registries: Any, tmp_path: Path) -> None:
    args = {"dois": [LACOUR, "10.5555/not-registered", "not a doi"], "title": INVENTED}
    out = ok(call([tmp_path], "get_bibtex", args))
    assert [e["doi"] for e in out["entries"]] == [LACOUR]
    assert out["not_found"] == ["not a doi", INVENTED, "10.5555/not-registered"]
    assert out["entries"][0]["integrity"]["status"] == "retracted"


# --- bounds and the event loop ---------------------------------------------------------------


def test_bad_arguments_give_one_line_tool_errors(registries: Any, tmp_path: Path) -> None:
    crossref, openalex = registries
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("verify_citation", {}, "argument title: Field required"),
        ("verify_citation", {"title": "x" * 1001}, "title: String should have at most 1000"),
        ("verify_citation", {"title": "  "}, "give a title (or a doi, arxiv_id or url)"),
        ("verify_citation", {"title": "t", "year": 20150}, "year: Input should be less than"),
        ("verify_citation", {"title": "t", "authors": ["A"] * 101}, "the limit is 100"),
        ("verify_citation", {"title": "t", "url": "http://x/" + "a" * 2000}, "url: String should"),
        (
            "search_references",
            {"query": "x", "max_results": 31},
            "max_results: Input should be less than or equal to 30",
        ),
        ("search_references", {"query": " "}, "query: give words"),
        (
            "search_references",
            {"query": "x", "sources": ["scholar"]},
            "sources.0: String should match pattern",
        ),
        ("search_references", {"query": "x", "year_from": 2015, "year_to": 2010}, "is after"),
        ("get_bibtex", {}, "give a doi, a list of dois or a title"),
        ("get_bibtex", {"dois": [LACOUR] * 101}, "dois: List should have at most 100 items"),
        ("get_bibtex", {"title": "x" * 1001}, "title: String should have at most 1000"),
    ]

    async def body(client: Client) -> list[str]:
        return [error_text(await client.call_tool(n, a)) for n, a, _ in cases]

    for text, (name, _, expected) in zip(in_process([tmp_path], body), cases, strict=True):
        assert expected in text, (name, text)
    assert crossref.requests == [] and openalex.requests == []


def test_drafting_calls_run_off_the_event_loop(registries: Any, tmp_path: Path) -> None:
    """A slow registry delays verify_citation, not the other tools on the same server: with
    Crossref holding verify_citation's request until rw_data_status has answered (events, no
    clock), the status call finishes first. Were tools run on the event loop, the status call
    would wait for verify_citation, which waits for the gate (a minute), and the order flips."""
    crossref, _ = registries
    crossref.gate = threading.Event()
    order: list[str] = []

    async def body(client: Client) -> None:
        async def verify() -> None:
            ok(await client.call_tool("verify_citation", {"title": LACOUR_TITLE}))
            order.append("verify_citation")

        async with anyio.create_task_group() as group:
            group.start_soon(verify)
            await anyio.to_thread.run_sync(crossref.arrived.wait, 60)  # verify is waiting
            ok(await client.call_tool("rw_data_status", {}))
            order.append("rw_data_status")
            crossref.gate.set()

    in_process([tmp_path], body)
    assert order == ["rw_data_status", "verify_citation"]


# --- issue 16: fail closed through the SDK client ----------------------------------------------


def test_through_the_client_unverifiable_is_never_not_found(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Findings 1: with both registries down, get_bibtex says unverified (the server's own
    instructions tell agents never to cite a not_found work) and a search is incomplete."""
    monkeypatch.setenv("RWGATE_CROSSREF_URL", closed_port_url())
    monkeypatch.setenv("RWGATE_OPENALEX_URL", closed_port_url())
    monkeypatch.setenv("RWGATE_MAX_SECONDS", "2")
    monkeypatch.setenv("RWGATE_NO_CACHE", "1")
    bib = ok(call([tmp_path], "get_bibtex", {"doi": LACOUR}))
    assert bib["not_found"] == [] and bib["unverified"] == [LACOUR] and bib["entries"] == []
    found = ok(call([tmp_path], "search_references", {"query": "contact changes minds"}))
    assert found["complete"] is False and found["results"] == []


def test_through_the_client_a_wrong_doi_is_a_partial_match(registries: Any, tmp_path: Path) -> None:
    """Finding 2: the right title with another work's DOI was `verified` at confidence 1.0."""
    watson = "10.1038/171737a0"
    args = {"title": LACOUR_TITLE, "authors": ["LaCour", "Green"], "year": 2014, "doi": watson}
    answer = ok(call([tmp_path], "verify_citation", args))
    assert answer["verdict"] == "partial_match" and answer["confidence"] < 0.85
    assert answer["verified"] is False and answer["matched_paper"] is None
    assert answer["possible_match"]["doi"] == LACOUR
    assert any(watson in e for e in answer["errors"])
