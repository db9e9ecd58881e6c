"""Issue 48: a run builds one client per API and opens one look-up cache.

``rwgate check --recover-dois`` searched Crossref on one client and asked it for the notices on
another; ``rwgate verify`` (and the MCP drafting tools behind it) opened a look-up cache for the
registry searches and a second one for the integrity check. Now the searches go through the
run's integrity sources: their cache, and their Crossref client. Counted through the loopback
fake Crossref, which records the TCP connection each request came on: one client keeps its
connection alive between the search and the batch, two clients need two connections.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakes.crossref import FakeCrossref
from fakes.openalex import FakeOpenAlex
from rwgate.frontends.cli.main import main
from rwgate.sources.cache import Cache

LACOUR_DOI = "10.1126/science.1256151"
LACOUR = r"""@article{lacour2014,
  author  = {LaCour, Michael J. and Green, Donald P.},
  title   = {When contact changes minds: {An} experiment on transmission of support
             for gay equality},
  journal = {Science},
  year    = {2015}
}
"""


@pytest.fixture
def env(
    tmp_path: Path, fake_crossref: FakeCrossref, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeCrossref]:
    with FakeOpenAlex() as fake_openalex:
        monkeypatch.setenv("RWGATE_CROSSREF_URL", fake_crossref.url)
        monkeypatch.setenv("RWGATE_OPENALEX_URL", fake_openalex.url)
        monkeypatch.setenv("RWGATE_MAX_SECONDS", "4")
        monkeypatch.setenv("RWGATE_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.chdir(tmp_path)
        yield fake_crossref


@pytest.fixture
def caches(monkeypatch: pytest.MonkeyPatch) -> list[Cache]:
    """Every look-up cache the run opens (the real class, counted as it is made)."""
    opened: list[Cache] = []
    real_init = Cache.__init__

    def counted(self: Cache, *args: Any, **kwargs: Any) -> None:
        opened.append(self)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(Cache, "__init__", counted)
    return opened


def test_check_with_recovery_asks_crossref_on_one_client(
    env: FakeCrossref, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The title search and the notices' batch: two requests, one connection (was two)."""
    (tmp_path / "refs.bib").write_text(LACOUR, encoding="utf-8")
    code = main(["check", "--no-history", "--format", "json", "--recover-dois", "refs.bib"])
    [cited] = json.loads(capsys.readouterr().out)["citations"]
    assert (cited["doi"], cited["status"], code) == (LACOUR_DOI, "retracted", 0)
    searched = [r for r in env.requests if "query.bibliographic" in r.query]
    batched = [r for r in env.requests if "filter" in r.query]
    assert len(searched) == 1 and len(batched) == 1, env.requests
    assert env.connections == 1


def test_verify_opens_one_cache_and_one_crossref_client(
    env: FakeCrossref,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caches: list[Cache],
) -> None:
    """The DOI's record (the registry question) and the notices' batch (the integrity check)
    share the run's cache and Crossref client (were two of each)."""
    (tmp_path / "refs.bib").write_text(
        f"@article{{lacour, doi = {{{LACOUR_DOI}}}}}\n", encoding="utf-8"
    )
    main(["verify", "--format", "json", "--sources", "crossref", "refs.bib"])
    [verified] = json.loads(capsys.readouterr().out)["results"]
    assert verified["matched"]["doi"] == LACOUR_DOI
    assert verified["integrity"]["status"] == "retracted"
    assert [r.path for r in env.requests] == [f"/works/{LACOUR_DOI}", "/works"]
    assert len(caches) == 1
    assert env.connections == 1
