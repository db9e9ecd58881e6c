"""Benchmark: `rwgate lsp` diagnostics after a change, from a warm snapshot (issue 50).

A 300-entry bibliography (the bundled example's real works plus synthetic entries) and a
10,000-word Markdown manuscript citing every entry; the server runs as an editor runs it (stdio,
pytest-lsp's client), offline, on a snapshot imported from the bundled sample. After the first
pass (warm), each change toggles a citation of a retracted work at the end of the buffer; the
time is from sending `didChange` to receiving the diagnostics that show the change. Prints the
median and 95th percentile, and the server's resident memory (VmRSS, VmHWM).

Two clients: pytest-lsp's (which turns every diagnostic into an lsprotocol object with cattrs, a
cost of its own on this side of the pipe) and a plain one that reads the message and parses its
JSON, as an editor does (Neovim's client decodes with its C JSON decoder). Each runs the changes
back to back (the author typing: the `.bib`'s diagnostics wait for a pause) and with a pause of
half a second after each change (the `.bib`'s diagnostics sent in it).
Run: .venv/bin/python benchmarks/lsp_bench.py
(RWGATE_BENCH_PROFILE=FILE: the server's main thread under cProfile.)
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from asyncio.subprocess import PIPE
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
RWGATE = str(Path(sys.executable).with_name("rwgate"))
ENTRIES = 300
WORDS = 10_000
CHANGES = 40
PROFILE = os.environ.get("RWGATE_BENCH_PROFILE")
"""A file for the server's cProfile statistics (the server then runs under cProfile)."""
SERVER = (
    [sys.executable, "-m", "cProfile", "-o", PROFILE, "-m", "rwgate", "lsp"]
    if PROFILE
    else [RWGATE, "lsp"]
)


def _bibliography(folder: Path) -> list[str]:
    real = (EXAMPLES / "refs.bib").read_text(encoding="utf-8")
    keys = re.findall(r"@article\{([^,]+),", real)
    extra = [
        f"@article{{bench{n},\n  title = {{Synthetic work {n}}},\n  journal = {{J}},\n"
        f"  year = {{2015}},\n  doi = {{10.5555/bench.{n}}},\n}}\n"
        for n in range(ENTRIES - len(keys))
    ]
    (folder / "refs.bib").write_text(real + "\n" + "\n".join(extra), encoding="utf-8")
    return keys + [f"bench{n}" for n in range(ENTRIES - len(keys))]


def _manuscript(keys: list[str]) -> str:
    words = ["lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit"]
    lines = ["---", "title: Bench", "bibliography: refs.bib", "---", ""]
    sentence: list[str] = []
    for n in range(WORDS):
        sentence.append(words[n % len(words)])
        if n % 33 == 32:
            sentence.append(f"[@{keys[(n // 33) % len(keys)]}].")
            lines.append(" ".join(sentence))
            sentence = []
    lines.append(" ".join(sentence))
    return "\n".join(lines) + "\n"


def _memory(pid: int) -> str:
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    found = dict(re.findall(r"^(VmRSS|VmHWM):\s+(\d+) kB", status, re.M))
    return f"VmRSS {int(found['VmRSS']) / 1024:.0f} MiB, VmHWM {int(found['VmHWM']) / 1024:.0f} MiB"


def _cpu(pid: int) -> float:
    """The CPU time a process has used, user and system, in milliseconds."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


async def _until(client: LanguageClient, uri: str, wanted) -> None:
    while True:
        arrived = client.protocol.wait_for_notification("textDocument/publishDiagnostics")
        found = client.diagnostics.get(uri)
        if found is not None and wanted(found):
            return
        await asyncio.wait_for(asyncio.wrap_future(arrived), 120)


def _cites_lacour(diagnostics) -> bool:
    return any(
        isinstance(d.data, dict) and d.data.get("key") == "lacour2014" and d.range.start.line > 300
        for d in diagnostics
    )


async def _run(folder: Path, env: dict[str, str], pause: float) -> None:
    paper = folder / "paper.md"
    uri = paper.as_uri()
    text = paper.read_text(encoding="utf-8")
    config = ClientServerConfig(server_command=SERVER, server_env=env)
    client: LanguageClient = await config.start()  # type: ignore[assignment]
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"), root_uri=folder.as_uri()
        )
    )
    started = time.perf_counter()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(
                uri=uri, language_id="markdown", version=1, text=text
            )
        )
    )
    await _until(client, uri, lambda ds: len(ds) > 0)
    first = (time.perf_counter() - started) * 1000
    print(f"first pass (reads the manuscript through pandoc): {first:.0f} ms")
    times: list[float] = []
    for version in range(2, CHANGES + 2):
        cited = version % 2 == 0
        body = text + ("\nAnd [@lacour2014].\n" if cited else "\n")
        started = time.perf_counter()
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=body)],
            )
        )
        await _until(client, uri, lambda ds, c=cited: _cites_lacour(ds) == c)
        times.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(pause)
    _report("pytest-lsp client", pause, times)
    print(f"diagnostics on the manuscript: {len(client.diagnostics[uri])}")
    assert client._server is not None
    print(f"server memory: {_memory(client._server.pid)}")
    await client.shutdown_session()


def _report(client: str, pause: float, times: list[float]) -> None:
    times = sorted(times)
    p95 = times[int(0.95 * (len(times) - 1))]
    median = statistics.median(times)
    how = f"a pause of {pause} s after each" if pause else "back to back"
    print(
        f"{client}, {len(times)} changes {how}: change -> diagnostics "
        f"median {median:.1f} ms, p95 {p95:.1f} ms"
    )


class _Plain:
    """A JSON-RPC client over the server's pipes that parses each message's JSON and no more."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.ids = 0

    def send(self, method: str, params: object, request: bool = False) -> None:
        message: dict[str, object] = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.ids += 1
            message["id"] = self.ids
        body = json.dumps(message).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while (line := await self.process.stdout.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(await self.process.stdout.readexactly(length))

    async def diagnostics(self, uri: str, wanted: Callable[[list[dict[str, Any]]], bool]) -> None:
        while True:
            message = await asyncio.wait_for(self.receive(), 120)
            params = message.get("params") or {}
            if (
                message.get("method") == "textDocument/publishDiagnostics"
                and params["uri"] == uri
                and wanted(params["diagnostics"])
            ):
                return


def _plain_cites_lacour(diagnostics: list[dict[str, Any]]) -> bool:
    return any(
        (d.get("data") or {}).get("key") == "lacour2014" and d["range"]["start"]["line"] > 300
        for d in diagnostics
    )


async def _run_plain(folder: Path, env: dict[str, str], pause: float) -> None:
    paper = folder / "paper.md"
    uri = paper.as_uri()
    text = paper.read_text(encoding="utf-8")
    process = await asyncio.create_subprocess_exec(
        *SERVER, env=env, stdin=PIPE, stdout=PIPE, limit=2**26
    )
    client = _Plain(process)
    client.send(
        "initialize", {"processId": None, "rootUri": folder.as_uri(), "capabilities": {}}, True
    )
    await client.receive()
    client.send("initialized", {})
    document = {"uri": uri, "languageId": "markdown", "version": 1, "text": text}
    client.send("textDocument/didOpen", {"textDocument": document})
    await client.diagnostics(uri, lambda ds: len(ds) > 0)
    times: list[float] = []
    cpu = _cpu(process.pid)
    for version in range(2, CHANGES + 2):
        cited = version % 2 == 0
        body = text + ("\nAnd [@lacour2014].\n" if cited else "\n")
        started = time.perf_counter()
        client.send(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": body}],
            },
        )
        await client.diagnostics(uri, lambda ds, c=cited: _plain_cites_lacour(ds) == c)
        times.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(pause)
    _report("plain JSON client", pause, times)
    spent = (_cpu(process.pid) - cpu) / CHANGES
    print(f"server CPU time per change (all threads, the .bib included): {spent:.1f} ms")
    print(f"server memory: {_memory(process.pid)}")
    client.send("shutdown", None, True)
    client.send("exit", None)
    assert process.stdin is not None
    process.stdin.close()
    await process.wait()


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="rwgate-lsp-bench-"))
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RWGATE_")}
        env.update(
            RWGATE_OFFLINE="1",
            RWGATE_SNAPSHOT=str(folder / "snapshot.sqlite"),
            RWGATE_CACHE_DIR=str(folder / "cache"),
            XDG_CONFIG_HOME=str(folder / "config"),
        )
        data = EXAMPLES / "data"
        files = [str(data / "retraction-watch" / "rw-sample.csv")]
        files += sorted(str(p) for p in (data / "crossref").glob("*.json"))
        subprocess.run([RWGATE, "data", "import", *files], env=env, check=True, capture_output=True)
        keys = _bibliography(folder)
        (folder / "paper.md").write_text(_manuscript(keys), encoding="utf-8")
        print(f"{ENTRIES} entries, {WORDS:,} words; load average {os.getloadavg()}")
        for pause in (0.0, 0.5):
            asyncio.run(_run(folder, env, pause))
            asyncio.run(_run_plain(folder, env, pause))
        print(f"load average {os.getloadavg()}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
