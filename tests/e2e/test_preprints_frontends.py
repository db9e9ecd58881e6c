"""Issue 49: preprints judged the same through every front end, not only ``rwgate check``.

The same three works through rw-filter (real pandoc ``--citeproc --filter``), the Lua filter,
rw-latexmk (real latexmk, pdflatex, bibtex; the PDF read with pdftotext) and ``rwgate mcp`` (a
real subprocess over stdio, the MCP SDK's own client): an arXiv-only entry arXiv vouches for
(passes strict), a withdrawn arXiv paper (its note: withdrawn, year, version, reason; fails
strict), and a preprint whose journal version is retracted (the journal's retraction, "published
as doi:..."). The loopback fakes of arXiv, bioRxiv and Crossref stand in for the services
(RWGATE_ARXIV_URL, RWGATE_ARXIV_OAI_URL, RWGATE_BIORXIV_URL, RWGATE_CROSSREF_URL). A subprocess
paces its arXiv requests as on a user's machine (one each 3 s), so each build asks once.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from pandoc_build import ROOT, build, pandoc, write_doc
from test_mcp import structured

from fakes.arxiv import FakeArxiv, live_paper
from fakes.biorxiv import FakeBiorxiv
from fakes.crossref import FakeCrossref

WAKEFIELD_DOI = "10.1016/s0140-6736(97)11096-0"
WAKEFIELD_NOTICE = "10.1016/s0140-6736(10)60175-4"
ATTENTION = "1706.03762"  # added to the fake below: live, one version, nothing withdrawn
WITHDRAWN = "2104.01234"  # tests/fixtures/arxiv/papers.json: v2 withdraws it
REASON = "This paper has been withdrawn by the authors due to an error in the proof of Lemma 3"
PUBLISHED = "2301.00001"  # added below: published as the Wakefield paper
WITHDRAWN_NOTE = f"Withdrawn 2021 (arXiv:{WITHDRAWN}v2): {REASON}"
PUBLISHED_NOTE = f"Retracted 2010; notice doi:{WAKEFIELD_NOTICE}; published as doi:{WAKEFIELD_DOI}"
BIN = Path(sys.executable).parent
LUA = str(ROOT / "filters" / "rwgate.lua")

BIB = f"""@misc{{attention,
  title = {{Attention Is All You Need}},
  author = {{Vaswani, Ashish}},
  year = {{2017}},
  eprint = {{{ATTENTION}}},
  archivePrefix = {{arXiv}}
}}

@misc{{gone,
  title = {{A Proof of a Bound on Sparse Recovery}},
  author = {{Author, A.}},
  year = {{2021}},
  eprint = {{{WITHDRAWN}}},
  archivePrefix = {{arXiv}}
}}

@misc{{pub,
  title = {{A preprint later published}},
  author = {{Author, B.}},
  year = {{2023}},
  eprint = {{{PUBLISHED}}},
  archivePrefix = {{arXiv}}
}}
"""


@pytest.fixture
def services(
    tmp_path: Path, fake_crossref: FakeCrossref, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, str]]:
    """The fakes, as this process's environment (subprocesses inherit it) and as a dict (for the
    MCP server's, which is given explicitly); ``tmp_path/doc`` holds refs.bib."""
    with FakeArxiv() as arxiv, FakeBiorxiv() as biorxiv:
        arxiv.add_paper(live_paper(ATTENTION, "Attention Is All You Need"))
        arxiv.add_paper(live_paper(PUBLISHED, "A preprint later published", WAKEFIELD_DOI))
        env = {
            "RWGATE_CROSSREF_URL": fake_crossref.url,
            "RWGATE_DOI_URL": fake_crossref.url,
            "RWGATE_ARXIV_URL": arxiv.api_url,
            "RWGATE_ARXIV_OAI_URL": arxiv.oai_url,
            "RWGATE_BIORXIV_URL": biorxiv.url,
            "RWGATE_MAX_SECONDS": "20",
        }
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        folder = tmp_path / "doc"
        folder.mkdir()
        (folder / "refs.bib").write_text(BIB, encoding="utf-8")
        yield env
        assert arxiv.requests_to("/api/query"), "arXiv was never asked"


# --- rw-filter and the Lua filter ---------------------------------------------------------------


def _markdown(folder: Path, *keys: str, policy: str | None = None) -> str:
    front = "bibliography: refs.bib" + (f"\nrwgate: {{policy: {policy}}}" if policy else "")
    name = f"{'-'.join(keys)}-{policy or 'default'}.md"
    write_doc(folder / name, front, " ".join(f"See [@{k}]." for k in keys))
    return name


def test_rw_filter_an_arxiv_only_entry_passes_strict(
    services: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "doc"
    doc = _markdown(folder, "attention", policy="strict")
    out = build(folder, ["--citeproc", "-t", "plain"], "out.txt", document=doc)
    assert out.returncode == 0, out.stderr
    assert "Attention Is All You Need" in out.text
    assert "Withdrawn" not in out.text and "rw-filter: ERROR" not in out.stderr


def test_rw_filter_notes_a_withdrawn_and_a_published_retracted_preprint(
    services: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "doc"
    out = build(
        folder, ["--citeproc", "-t", "plain"], "out.txt", document=_markdown(folder, "gone", "pub")
    )
    assert out.returncode == 0, out.stderr
    text = " ".join(out.text.split())
    assert WITHDRAWN_NOTE in text
    assert PUBLISHED_NOTE in text
    strict = build(
        folder,
        ["--citeproc", "-t", "plain"],
        "strict.txt",
        document=_markdown(folder, "gone", "pub", policy="strict"),
    )
    assert strict.returncode != 0 and not strict.output.exists()
    errors = [line for line in strict.stderr.splitlines() if line.startswith("rw-filter: ERROR:")]
    assert errors == [
        f"rw-filter: ERROR: gone: withdrawn 2021 (arXiv:{WITHDRAWN}v2): {REASON}",
        f"rw-filter: ERROR: pub: retracted 2010, notice doi:{WAKEFIELD_NOTICE}, "
        f"published as doi:{WAKEFIELD_DOI}",
    ]


def test_the_lua_filter_places_the_preprint_notes(services: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "doc"
    doc = _markdown(folder, "attention", "gone", "pub")
    proc = subprocess.run(
        [pandoc(), doc, "--citeproc", "--lua-filter", LUA, "-t", "plain", "--wrap=none"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "RWGATE_FILTER": str(BIN / "rw-filter")},
    )
    assert proc.returncode == 0, proc.stderr
    assert WITHDRAWN_NOTE in proc.stdout
    assert PUBLISHED_NOTE in proc.stdout
    assert proc.stdout.count("Withdrawn") == 1 and proc.stdout.count("Retracted") == 1


# --- rw-latexmk --------------------------------------------------------------------------------

TEX_TOOLS = ("latexmk", "pdflatex", "bibtex", "pdftotext")


def _tex(folder: Path, name: str, keys: str) -> str:
    (folder / f"{name}.tex").write_text(
        "\\documentclass{article}\n\\usepackage[numbers]{natbib}\n\\usepackage{url}\n"
        f"\\begin{{document}}\nCited \\citep{{{keys}}}.\n"
        "\\bibliographystyle{plainnat}\n\\bibliography{refs}\n\\end{document}\n",
        encoding="utf-8",
    )
    return f"{name}.tex"


def _rw_latexmk(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [str(BIN / "rw-latexmk"), "-pdf", "-interaction=nonstopmode", "-halt-on-error", *args]
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        cmd,
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        errors="replace",
        stdin=subprocess.DEVNULL,
        timeout=240,
        check=False,
    )


def _pdf_text(path: Path) -> str:
    """The typeset text, without whitespace (line breaks inside a note do not matter)."""
    out = subprocess.run(["pdftotext", "-raw", str(path), "-"], capture_output=True, check=True)
    return "".join(out.stdout.decode("utf-8").split()).replace("-", "")


def _squeezed(text: str) -> str:
    return "".join(text.split()).replace("-", "")


@pytest.fixture
def tex_tools() -> None:
    missing = [tool for tool in TEX_TOOLS if shutil.which(tool) is None]
    if missing and os.environ.get("RWGATE_REQUIRE_TOOLS") == "1":
        pytest.fail(f"TeX tools missing: {', '.join(missing)}")
    if missing:
        pytest.skip(f"TeX tools missing: {', '.join(missing)}")


def test_rw_latexmk_judges_preprints_as_rwgate_check(
    services: dict[str, str], tmp_path: Path, tex_tools: None
) -> None:
    folder = tmp_path / "doc"
    live = _rw_latexmk(folder, "--policy", "strict", _tex(folder, "live", "attention"))
    assert live.returncode == 0, live.stderr[-2000:]
    assert "Attention" in _pdf_text(folder / "live.pdf")

    paper = _tex(folder, "paper", "attention,gone,pub")
    run = _rw_latexmk(folder, paper)
    assert run.returncode == 0, run.stderr[-2000:]
    text = _pdf_text(folder / "paper.pdf")
    assert _squeezed(WITHDRAWN_NOTE) in text
    assert _squeezed(PUBLISHED_NOTE) in text

    strict = _rw_latexmk(folder, "--policy", "strict", paper)
    assert strict.returncode == 1, strict.stderr[-2000:]
    failed = strict.stderr[strict.stderr.index("gate FAILED for") :]
    assert f"gone: withdrawn 2021 (arXiv:{WITHDRAWN}v2): {REASON}" in failed
    assert f"pub: retracted 2010, notice doi:{WAKEFIELD_NOTICE}, published as" in failed
    assert "attention" not in failed
    assert not (folder / "paper.pdf").exists()


# --- rwgate mcp over stdio ----------------------------------------------------------------------


def _server_env(services: dict[str, str]) -> dict[str, str]:
    names = ("RWGATE_CACHE_DIR", "RWGATE_SNAPSHOT", "NO_PROXY", "no_proxy", "PATH", "HOME")
    return {**{n: os.environ[n] for n in names if n in os.environ}, **services}


def _mcp(
    services: dict[str, str], root: Path, calls: list[tuple[str, dict[str, Any]]]
) -> list[Any]:
    params = StdioServerParameters(
        command=str(BIN / "rwgate"),
        args=["mcp", "--root", str(root), "--policy", "strict"],
        env=_server_env(services),
    )

    async def main() -> list[Any]:
        async with Client(params) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(main)


def test_mcp_judges_arxiv_ids_and_bibliographies_as_rwgate_check(
    services: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "doc"
    (folder / "live.bib").write_text(BIB.split("@misc{gone")[0], encoding="utf-8")
    many, one, live, whole = _mcp(
        services,
        folder,
        [
            (
                "rw_check_dois",
                {
                    "dois": [
                        ATTENTION,
                        f"arXiv:{WITHDRAWN}v2",
                        f"https://arxiv.org/abs/{PUBLISHED}",
                    ],
                    "detail": True,
                },
            ),
            ("rw_check_doi", {"doi": f"arXiv:{ATTENTION}"}),
            ("rw_check_bibliography", {"path": str(folder / "live.bib")}),
            ("rw_check_bibliography", {"path": str(folder / "refs.bib"), "detail": True}),
        ],
    )
    attention, gone, pub = structured(many)["citations"]
    assert [attention["key"], gone["key"], pub["key"]] == [
        f"arXiv:{ATTENTION}",
        f"arXiv:{WITHDRAWN}",
        f"arXiv:{PUBLISHED}",
    ]
    assert attention["status"] == "clean" and "arxiv" in attention["basis"]
    assert attention["doi"] == f"10.48550/arxiv.{ATTENTION}"
    assert gone["status"] == "withdrawn" and gone["action"] == "fail"
    [notice] = gone["notices"]
    assert (notice["type"], notice["date"]) == ("withdrawal", "2021-05-11")
    assert notice["record_id"] == f"arXiv:{WITHDRAWN}v2" and notice["label"] == REASON
    assert gone["reason"] == f"withdrawn on arXiv: {REASON}"
    assert pub["status"] == "retracted"
    assert pub["reason"].startswith(f"published as doi:{WAKEFIELD_DOI}")
    assert WAKEFIELD_NOTICE in [n["doi"] for n in pub["notices"]]

    citation = structured(one)["citation"]
    assert (citation["status"], citation["action"]) == ("clean", "ignore")

    assert structured(live)["gate"] == "pass"
    document = structured(whole)
    assert document["gate"] == "fail"
    by_key = {c["key"]: c for c in document["citations"]}
    for key, same in (("attention", attention), ("gone", gone), ("pub", pub)):
        mine = {k: v for k, v in by_key[key].items() if k not in ("key", "location")}
        theirs = {k: v for k, v in same.items() if k not in ("key", "location")}
        assert mine == theirs, key  # an arXiv id is judged as the entry with that eprint
