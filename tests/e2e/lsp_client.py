"""Driving ``rwgate lsp`` as an editor does: pytest-lsp's client over stdio, a real server process.

Every wait is on what the client received (a diagnostics notification for a file, a message),
never on time; the timeouts only stop a test that would otherwise hang.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Union

from example_data import RWGATE
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

HANG = 120.0  # seconds before a wait that never ends fails the test (not a duration assertion)
Diagnostics = Sequence[lsp.Diagnostic]


@asynccontextmanager
async def lsp_session(env: dict[str, str], root: Path) -> AsyncIterator[LanguageClient]:
    config = ClientServerConfig(server_command=[RWGATE, "lsp"], server_env=env)
    client: LanguageClient = await config.start()  # type: ignore[assignment]
    _read_code_actions_whole(client)
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        )
    )
    try:
        yield client
    finally:
        await client.shutdown_session()


def _read_code_actions_whole(client: LanguageClient) -> None:
    """lsprotocol 2025.0.0 reads every code action that carries a command as a bare Command
    (its hook tests only for a "command" key); an editor tells them apart by the type of that
    field, and so does this client."""
    converter = client.protocol._converter

    def structure(item: Any, _: type) -> lsp.Command | lsp.CodeAction:
        if isinstance(item.get("command"), str):
            return converter.structure(item, lsp.Command)
        return converter.structure(item, lsp.CodeAction)

    converter.register_structure_hook(lsp.Command | lsp.CodeAction, structure)
    converter.register_structure_hook(Union[lsp.Command, lsp.CodeAction], structure)  # noqa: UP007


async def diagnostics_where(
    client: LanguageClient, path: Path, wanted: Callable[[Diagnostics], bool]
) -> Diagnostics:
    """The diagnostics of ``path`` once they satisfy ``wanted`` (waiting for notifications)."""
    uri = path.as_uri()

    async def until() -> Diagnostics:
        while True:
            arrived = client.protocol.wait_for_notification("textDocument/publishDiagnostics")
            found = client.diagnostics.get(uri)
            if found is not None and wanted(found):
                return found  # (the pending future is replaced by the next wait's)
            await asyncio.wrap_future(arrived)

    return await asyncio.wait_for(until(), HANG)


def open_file(client: LanguageClient, path: Path, language: str) -> None:
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(
                uri=path.as_uri(),
                language_id=language,
                version=1,
                text=path.read_text(encoding="utf-8"),
            )
        )
    )


def change_file(client: LanguageClient, path: Path, text: str, version: int) -> None:
    """The whole buffer replaced (an editor's full-document sync)."""
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=version),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def save_file(client: LanguageClient, path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    client.text_document_did_save(
        lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=path.as_uri()))
    )


def keyed(diagnostics: Diagnostics) -> dict[str, list[lsp.Diagnostic]]:
    """Diagnostics about works, by key."""
    out: dict[str, list[lsp.Diagnostic]] = {}
    for d in diagnostics:
        if isinstance(d.data, dict) and "key" in d.data:
            out.setdefault(str(d.data["key"]), []).append(d)
    return out


def text_at(path: Path, rng: lsp.Range) -> str:
    line = path.read_text(encoding="utf-8").splitlines()[rng.start.line]
    return line[rng.start.character : rng.end.character]


SEVERITY_OF_ACTION = {
    "fail": lsp.DiagnosticSeverity.Error,
    "annotate": lsp.DiagnosticSeverity.Warning,
    "warn": lsp.DiagnosticSeverity.Information,
}


def build_verdicts(document: Path, env: dict[str, str]) -> dict[str, tuple[str, Any]]:
    """``rwgate check --format json`` on the same document: key -> (status, severity), for the
    citations the build acts on."""
    run = subprocess.run(
        [RWGATE, "check", "--format", "json", "--no-history", str(document)],
        env=env,
        cwd=document.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode in (0, 1), run.stderr
    report = json.loads(run.stdout)
    return {
        c["key"]: (c["status"], SEVERITY_OF_ACTION[c["action"]])
        for c in report["citations"]
        if c["action"] in SEVERITY_OF_ACTION
    }


def server_verdicts(diagnostics: Diagnostics) -> dict[str, tuple[str, Any]]:
    return {key: (ds[0].code, ds[0].severity) for key, ds in keyed(diagnostics).items()}


def environment(offline: bool = True) -> dict[str, str]:
    env = dict(os.environ)  # conftest has isolated it (snapshot, cache, config under tmp)
    if offline:
        env["RWGATE_OFFLINE"] = "1"
    return env
