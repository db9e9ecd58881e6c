"""`rwgate mcp` as a real subprocess: over stdio and over streamable HTTP, with the SDK's client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from test_mcp import EXAMPLES, WAKEFIELD, WAKEFIELD_NOTICES, error_text, notices_of, structured

from fakes.crossref import FakeCrossref
from fakes.openalex import FakeOpenAlex

RWGATE = str(Path(sys.executable).with_name("rwgate"))


LACOUR_TITLE = (
    "When contact changes minds: An experiment on transmission of support for gay equality"
)


@pytest.fixture
def fake_openalex() -> Iterator[FakeOpenAlex]:
    with FakeOpenAlex() as fake:
        yield fake


def _env(fake: FakeCrossref, openalex: FakeOpenAlex) -> dict[str, str]:
    names = ("RWGATE_CACHE_DIR", "RWGATE_SNAPSHOT", "NO_PROXY", "no_proxy", "PATH", "HOME")
    env = {n: os.environ[n] for n in names if n in os.environ}
    return {**env, "RWGATE_CROSSREF_URL": fake.url, "RWGATE_OPENALEX_URL": openalex.url}


async def _exercise(client: Client) -> dict[str, Any]:
    tools = await client.list_tools()
    doi = await client.call_tool("rw_check_doi", {"doi": f"https://doi.org/{WAKEFIELD}"})
    outside = await client.call_tool("rw_check_bibliography", {"path": "/etc/hostname"})
    cited = {"title": LACOUR_TITLE, "authors": ["LaCour", "Green"], "year": 2014}
    verified = await client.call_tool("verify_citation", cited)
    return {
        "tools": {t.name for t in tools.tools},
        "doi": doi,
        "outside": outside,
        "verified": verified,
    }


def _verify(seen: dict[str, Any]) -> None:
    assert len(seen["tools"]) == 12 and {"rw_check_manuscript", "get_bibtex"} <= seen["tools"]
    citation = structured(seen["doi"])["citation"]
    assert citation["status"] == "retracted"
    assert notices_of(citation) == WAKEFIELD_NOTICES
    assert "outside the allowed roots" in error_text(seen["outside"])
    verified = structured(seen["verified"])
    assert verified["verdict"] == "verified" and verified["sources_answered"] == [
        "crossref",
        "openalex",
    ]
    assert verified["matched"]["doi"] == "10.1126/science.1256151"
    assert verified["integrity"]["status"] == "retracted"


def test_stdio_end_to_end(fake_crossref: FakeCrossref, fake_openalex: FakeOpenAlex) -> None:
    params = StdioServerParameters(
        command=RWGATE,
        args=["mcp", "--root", str(EXAMPLES)],
        env=_env(fake_crossref, fake_openalex),
    )

    async def main() -> dict[str, Any]:
        async with Client(params) as client:
            return await _exercise(client)

    _verify(anyio.run(main))
    assert fake_crossref.requests_to("/works")  # the subprocess really asked the fakes
    assert fake_openalex.requests


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(proc: subprocess.Popen[bytes], port: int) -> None:
    """Until the server listens on ``port``; fails with its stderr if it exits or takes 20 s."""
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read().decode() if proc.stderr else ""
                pytest.fail(f"rwgate mcp did not start: {err[-500:]}")
            time.sleep(0.05)


@pytest.fixture
def http_server(fake_crossref: FakeCrossref, fake_openalex: FakeOpenAlex) -> Iterator[str]:
    port = _free_port()
    args = ["mcp", "--transport", "streamable-http", "--port", str(port), "--root", str(EXAMPLES)]
    proc = subprocess.Popen(
        [RWGATE, *args],
        env=_env(fake_crossref, fake_openalex),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for(proc, port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_streamable_http_end_to_end(http_server: str, fake_crossref: FakeCrossref) -> None:
    async def main() -> dict[str, Any]:
        async with Client(http_server) as client:
            return await _exercise(client)

    _verify(anyio.run(main))
    assert fake_crossref.requests_to("/works")


def test_http_binds_loopback_by_default(http_server: str) -> None:
    """The listening socket's address, as the kernel reports it (Linux ``/proc/net/tcp``)."""
    table = Path("/proc/net/tcp")
    if not table.exists():
        pytest.skip("no /proc/net/tcp on this system")
    port = int(http_server.rsplit(":", 1)[1].split("/")[0])
    listening = []
    for line in table.read_text().splitlines()[1:]:
        fields = line.split()
        address, port_hex = fields[1].split(":")
        if int(port_hex, 16) == port and fields[3] == "0A":  # 0A = LISTEN
            listening.append(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    assert listening == ["127.0.0.1"]


TOKEN = "s3cret-token-for-tests-0123456789"


def _start(args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [RWGATE, "mcp", "--transport", "streamable-http", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--host", "0.0.0.0"], "serves beyond this machine: give a bearer token"),
        (["--host", "0.0.0.0", "--auth-token", TOKEN], "name the host names clients use"),
        (["--auth-token", "short"], "at least 16 characters"),
    ],
)
def test_an_unsafe_http_bind_is_refused_in_one_line(
    args: list[str], message: str, fake_crossref: FakeCrossref, fake_openalex: FakeOpenAlex
) -> None:
    proc = _start([*args, "--port", str(_free_port())], _env(fake_crossref, fake_openalex))
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2 and message in err.decode()
    assert len(err.decode().strip().splitlines()) == 1


def test_beyond_loopback_a_token_and_the_host_list_are_enforced(
    fake_crossref: FakeCrossref, fake_openalex: FakeOpenAlex
) -> None:
    """Bound to every address with a token and one allowed name: forged Host and Origin headers
    and missing or wrong tokens are refused; the SDK client with the token works."""
    import httpx

    port = _free_port()
    args = ["--host", "0.0.0.0", "--port", str(port), "--allowed-host", "127.0.0.1",
            "--root", str(EXAMPLES)]  # fmt: skip
    env = {**_env(fake_crossref, fake_openalex), "RWGATE_MCP_TOKEN": TOKEN}
    proc = _start(args, env)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        _wait_for(proc, port)
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
        accept = {"Accept": "application/json, text/event-stream"}
        good = {**accept, "Authorization": f"Bearer {TOKEN}"}
        assert httpx.post(url, json=hello, headers=accept).status_code == 401
        wrong = {**accept, "Authorization": "Bearer " + "x" * len(TOKEN)}
        assert httpx.post(url, json=hello, headers=wrong).status_code == 401
        forged = httpx.post(url, json=hello, headers={**good, "Host": "evil.example"})
        assert forged.status_code in (400, 421)
        origin = httpx.post(url, json=hello, headers={**good, "Origin": "http://evil.example"})
        assert origin.status_code == 403
        assert httpx.post(url, json=hello, headers=good).status_code == 200

        async def main() -> dict[str, Any]:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
            async with http, Client(streamable_http_client(url, http_client=http)) as client:
                return await _exercise(client)

        _verify(anyio.run(main))
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_an_unreachable_source_is_not_asked_again_for_a_while(
    fake_crossref: FakeCrossref, tmp_path: Path
) -> None:
    """Issue 16: get_bibtex asked an unreachable OpenAlex on every call (250-330 ms each); the
    server now remembers the failure for 30 s and says so."""
    from fakes.crossref import closed_port_url

    names = ("NO_PROXY", "no_proxy", "PATH", "HOME")
    env = {n: os.environ[n] for n in names if n in os.environ}
    env.update(RWGATE_CROSSREF_URL=fake_crossref.url, RWGATE_OPENALEX_URL=closed_port_url())
    env["RWGATE_NO_CACHE"] = "1"
    params = StdioServerParameters(command=RWGATE, args=["mcp", "--root", str(tmp_path)], env=env)
    lacour = "10.1126/science.1256151"

    async def main() -> list[dict[str, Any]]:
        async with Client(params) as client:
            first = await client.call_tool("get_bibtex", {"title": LACOUR_TITLE})
            second = await client.call_tool("get_bibtex", {"title": LACOUR_TITLE, "doi": lacour})
            return [structured(first), structured(second)]

    first, second = anyio.run(main)
    assert (
        "openalex" in first["sources_failed"]
        and "not asked" not in first["sources_failed"]["openalex"]
    )
    assert second["sources_failed"]["openalex"].startswith("openalex: not asked, it failed")
    assert [e["doi"] for e in second["entries"]] == [lacour]  # Crossref still answers
