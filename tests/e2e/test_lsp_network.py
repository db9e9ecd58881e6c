"""``rwgate lsp`` and the network: offline verdicts at once, the network's later as an update
(debounced: a burst of edits is one pass), and a network that does not answer said once."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from example_data import EXAMPLES, import_sample
from lsp_client import (
    HANG,
    change_file,
    diagnostics_where,
    environment,
    keyed,
    lsp_session,
    open_file,
)
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from fakes.crossref import FakeCrossref, closed_port_url


def _paper(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(EXAMPLES / "refs.bib", folder / "refs.bib")
    shutil.copy(EXAMPLES / "paper.md", folder / "paper.md")
    return folder / "paper.md"


async def _network_passes(client: LanguageClient, count: int) -> list[str]:
    """The log lines of the next ``count`` network passes."""

    async def until() -> list[str]:
        while True:
            arrived = client.protocol.wait_for_notification("window/logMessage")
            lines = [m.message for m in client.log_messages if "network pass" in m.message]
            if len(lines) >= count:
                return lines
            await asyncio.wrap_future(arrived)

    return await asyncio.wait_for(until(), HANG)


def _status(key: str):
    def status(diagnostics) -> str | None:
        found = keyed(diagnostics).get(key)
        return str(found[0].code) if found else None

    return status


def test_network_answers_arrive_as_an_update(tmp_path: Path, fake_crossref: FakeCrossref) -> None:
    """No snapshot, an empty cache: the offline pass cannot judge; the network pass (the fake
    Crossref) then says retracted. Five quick edits make one network pass, not five."""
    env = {**environment(offline=False), "RWGATE_CROSSREF_URL": fake_crossref.url}
    paper = _paper(tmp_path)
    text = paper.read_text(encoding="utf-8")
    wakefield = _status("wakefield1998")

    async def body() -> None:
        async with lsp_session(env, tmp_path) as client:
            open_file(client, paper, "markdown")
            first = await diagnostics_where(client, paper, lambda ds: wakefield(ds) is not None)
            assert wakefield(first) == "unverified"
            for version in range(2, 7):
                change_file(client, paper, text + "\n" * version, version)
            later = await diagnostics_where(client, paper, lambda ds: wakefield(ds) == "retracted")
            (use,) = keyed(later)["wakefield1998"]
            assert lsp.DiagnosticTag.Deprecated in (use.tags or [])
            assert len(await _network_passes(client, 1)) == 1
            assert not client.messages

    asyncio.run(body())
    works = [r for r in fake_crossref.requests if r.path.startswith("/works")]
    assert 0 < len(works) < 5 * 6, [r.path for r in works]


def test_no_network_keeps_offline_verdicts_and_says_so_once(tmp_path: Path) -> None:
    env = {**environment(offline=False), "RWGATE_CROSSREF_URL": closed_port_url()}
    import_sample(env)
    paper = _paper(tmp_path)
    text = paper.read_text(encoding="utf-8")

    async def body() -> None:
        async with lsp_session(env, tmp_path) as client:
            open_file(client, paper, "markdown")
            await diagnostics_where(client, paper, lambda ds: "wakefield1998" in keyed(ds))
            await _network_passes(client, 1)
            change_file(client, paper, text + "\n", 2)
            await _network_passes(client, 2)
            change_file(client, paper, text + "\n\n", 3)
            lines = await _network_passes(client, 3)
            assert all("did not answer" in line for line in lines), lines
            assert len(client.messages) == 1, client.messages
            assert "offline verdicts" in client.messages[0].message
            shown = client.diagnostics[paper.as_uri()]
            assert _status("wakefield1998")(shown) == "retracted"  # from the snapshot

    asyncio.run(body())
