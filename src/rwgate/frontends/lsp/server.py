"""``rwgate lsp``: the language server (pygls, stdio).

Never in the way of the author:

* every change gets a pass from the snapshot and the look-up cache alone (offline), on a worker
  thread, after a few quiet milliseconds (a burst of keystrokes is one pass); its diagnostics
  replace the last ones;
* when the user's settings allow the network, one network pass per document follows after a
  second of quiet (batched by the core: one request per batch of works, never one per
  keystroke); its answers land in the look-up cache, so later offline passes keep them;
* a network that does not answer leaves the offline verdicts up and says so once
  (``window/showMessage``), not on every change.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from rwgate import __version__
from rwgate.errors import RwgateError
from rwgate.frontends.lsp import protocol
from rwgate.frontends.lsp.analysis import Note, Place, message_of
from rwgate.frontends.lsp.session import Session

# Seconds without a change before: the offline pass (a burst of keystrokes is one pass); the
# network pass; the diagnostics of the other files a change touched (the bibliography whose
# entries say where they are cited: the edited document's go at once, the others at a pause).
QUIET = 0.02
NETWORK_QUIET = 1.0
OTHERS_QUIET = 0.3
Made = dict[tuple[int, tuple[str | None, ...]], tuple[Note, str]]
"""Diagnostics' JSON by the note each was made from (notes are never modified) and the text of
the lines it points at."""
NO_NETWORK = (
    "rwgate: the network sources did not answer; the diagnostics are the offline verdicts "
    "(snapshot and cache). They update when the sources answer again."
)


class RwgateProtocol(LanguageServerProtocol):
    """pygls' protocol, able to send a message already encoded as JSON."""

    def send_json(self, body: str) -> None:
        """Send ``body`` (a whole JSON-RPC message, ASCII) as pygls sends what it encodes."""
        if self.writer is None:
            return
        data = body.encode(self.CHARSET)
        if self._include_headers:
            header = (
                f"Content-Length: {len(data)}\r\n"
                f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            )
            data = header.encode("ascii") + data
        self.writer.write(data)  # stdio's writer: synchronous, as ``serve`` runs the server


class RwgateServer(LanguageServer):
    """The server, its session and its two workers (offline passes, network passes)."""

    protocol: RwgateProtocol

    def __init__(self, overrides: dict[str, Any]) -> None:
        super().__init__("rwgate", __version__, protocol_cls=RwgateProtocol)
        self.session = Session(overrides, self.buffer_text)
        self.offline_worker = ThreadPoolExecutor(1, thread_name_prefix="rwgate-offline")
        self.network_worker = ThreadPoolExecutor(1, thread_name_prefix="rwgate-network")
        self.generation: dict[str, int] = {}
        self.told_offline = False
        self.published: dict[str, list[Any]] = {}
        self.made: dict[str, Made] = {}
        """Per file, the JSON of the diagnostics last sent: a change makes only those it changes."""
        self.pending: set[str] = set()
        self.later: asyncio.TimerHandle | None = None

    def buffer_text(self, path: str) -> str | None:
        for uri, document in list(self.workspace.text_documents.items()):
            if to_fs_path(uri) == path:
                return str(document.source)
        return None

    # --- passes ------------------------------------------------------------------------------

    def changed(self, uri: str, reread: bool = False) -> None:
        """Schedule the passes for the document at ``uri`` (``reread``: its saved file too)."""
        path = to_fs_path(uri)
        if path is None:
            return
        if reread:
            self.session.forget(path)
        generation = self.generation.get(path, 0) + 1
        self.generation[path] = generation
        asyncio.get_running_loop().create_task(self._passes(path, generation))

    def _current(self, path: str, generation: int) -> bool:
        return self.generation.get(path) == generation

    async def _pass(self, path: str, generation: int, offline: bool) -> Any:
        text = self.buffer_text(path)
        if text is None or not self._current(path, generation):
            return None
        worker = self.offline_worker if offline else self.network_worker
        loop = asyncio.get_running_loop()
        verdicts = await loop.run_in_executor(worker, self.session.judge, Path(path), text, offline)
        return verdicts if self._current(path, generation) else None

    async def _passes(self, path: str, generation: int) -> None:
        await asyncio.sleep(QUIET)
        verdicts = await self._pass(path, generation, offline=True)
        if verdicts is None:
            return
        self.publish_now_and_later(path, self.session.record(verdicts))
        loop = asyncio.get_running_loop()
        online = await loop.run_in_executor(
            self.offline_worker, self.session.wants_network, Path(path)
        )
        if not online:
            return
        await asyncio.sleep(NETWORK_QUIET)
        verdicts = await self._pass(path, generation, offline=False)
        if verdicts is None:
            return
        if not verdicts.complete:  # the sources did not answer: the offline verdicts stay
            self.log(f"network pass over {path}: the sources did not answer")
            if not self.told_offline:
                self.told_offline = True
                self.window_show_message(
                    lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=NO_NETWORK)
                )
            return
        # The edited document's first: its diagnostics reach the editor before those of the
        # bibliographies it cites from (each file's are sent whole).
        self.publish(sorted(self.session.record(verdicts), key=lambda p: p != path))
        self.log(f"network pass over {path}: {len(verdicts.citations)} works judged")

    def log(self, message: str) -> None:
        """A line in the client's log (``window/logMessage``): what each network pass did."""
        self.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Log, message=message))

    def publish_now_and_later(self, path: str, paths: list[str]) -> None:
        """The edited document's diagnostics now; the other files' (``paths``) after
        :data:`OTHERS_QUIET` seconds without a pass (each pass puts the wait off again)."""
        self.publish([p for p in paths if p == path])
        self.pending.update(p for p in paths if p != path)
        if self.later is not None:
            self.later.cancel()
        if self.pending:
            loop = asyncio.get_running_loop()
            self.later = loop.call_later(OTHERS_QUIET, self._publish_pending)

    def _publish_pending(self) -> None:
        self.later = None
        paths, self.pending = sorted(self.pending), set()
        self.publish(paths)

    def publish(self, paths: list[str]) -> None:
        """Each file's diagnostics when they changed, each one's JSON made once (:data:`Made`)."""
        codec = self.workspace.position_codec
        lines = self.session.lines_cache()
        for path in paths:
            notes = self.session.notes_for(path)
            if self.published.get(path) == notes:
                continue  # nothing new to say about this file: no message, no client work
            self.published[path] = notes
            made = self.made.get(path, {})
            fresh: Made = {}
            for note in notes:
                key = (id(note), _texts(note, lines))  # (the note is kept: its id stays its own)
                found = made.get(key)
                if found is None or found[0] is not note:
                    found = (note, protocol.diagnostic_json(codec, lines, note))
                fresh[key] = found
            self.made[path] = fresh
            made_json = [text for _, text in fresh.values()]
            self.protocol.send_json(protocol.publication_json(path, made_json))

    def close_sources(self) -> None:
        """The offline passes' sources, kept open for the server's life, closed at shutdown on
        their worker (after any pass under way); no pass starts after the client's shutdown."""
        for path in list(self.generation):
            self.generation[path] += 1
        if self.later is not None:  # no message after the client's shutdown
            self.later.cancel()
        self.offline_worker.submit(self.session.kept.close).result()

    # --- requests ----------------------------------------------------------------------------

    def _where(self, uri: str, position: lsp.Position) -> tuple[str, int, int] | None:
        path = to_fs_path(uri)
        if path is None:
            return None
        lines = self.session.lines(path)
        here = self.workspace.position_codec.position_from_client_units(lines, position)
        return path, here.line, here.character

    def hover(self, params: lsp.HoverParams) -> lsp.Hover | None:
        where = self._where(params.text_document.uri, params.position)
        found = self.session.citation_at(*where) if where else None
        if where is None or found is None:
            return None
        verdicts, citation = found
        path = where[0]
        span = verdicts.span_at(where[1], where[2])
        place = verdicts.entries.get(citation.key)
        if span is not None and str(verdicts.path) == path:
            place = Place(path, span)
        template = self._template(verdicts.path)
        text = protocol.hover_text(citation, message_of(citation, template), verdicts.sources)
        contents = lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text)
        if place is None or place.path != path:
            return lsp.Hover(contents=contents)
        codec, lines = self.workspace.position_codec, self.session.lines(path)
        return lsp.Hover(contents=contents, range=protocol.to_range(codec, lines, place))

    def _template(self, path: Path) -> str | None:
        try:
            return self.session.settings(path, None, offline=True).template
        except RwgateError:
            return None

    def code_actions(self, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        path = to_fs_path(params.text_document.uri)
        if path is None:
            return []
        lines = self.session.lines(path)
        codec = self.workspace.position_codec
        start = codec.position_from_client_units(lines, params.range.start)
        end = codec.position_from_client_units(lines, params.range.end)
        actions: list[lsp.CodeAction] = []
        done: set[str] = set()
        for line in range(start.line, end.line + 1):
            for column in sorted({start.character, end.character} if line == start.line else {0}):
                found = self.session.citation_at(path, line, column)
                if found is None or found[1].key in done:
                    continue
                verdicts, citation = found
                done.add(citation.key)
                mine = [
                    d
                    for d in params.context.diagnostics
                    if isinstance(d.data, dict) and d.data.get("key") == citation.key
                ]
                entry = verdicts.entries.get(citation.key)
                template = self._template(verdicts.path)
                actions += protocol.code_actions(
                    citation, template, entry, codec, self.session.lines, mine
                )
        return actions

    def allow(self, key: str, doi: str | None, reason: str) -> None:
        from rwgate.frontends.lsp.allowlist import DEFAULT_DAYS, add_allow_entry

        until = dt.date.today() + dt.timedelta(days=DEFAULT_DAYS)
        try:
            path = add_allow_entry(key, doi, reason, until)
        except RwgateError as exc:
            self.window_show_message(
                lsp.ShowMessageParams(type=lsp.MessageType.Error, message=f"rwgate: {exc}")
            )
            return
        said = f"rwgate: {key} allowed until {until.isoformat()} in {path} (edit the reason there)"
        self.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info, message=said))
        for uri in list(self.workspace.text_documents):  # the user's configuration changed
            self.changed(uri, reread=True)


def _texts(note: Note, lines: Callable[[str], list[str]]) -> tuple[str | None, ...]:
    """The text of the lines a note's places are on (a range counts the client's code units of
    the line before it: the same place on an edited line may be another range)."""
    texts = [_line(lines, note.place)]
    texts += [_line(lines, t) for t, _ in note.related if isinstance(t, Place)]
    return tuple(texts)


def _line(lines: Callable[[str], list[str]], place: Place) -> str | None:
    try:
        found = lines(place.path)
    except OSError:
        return None
    return found[place.span.line] if place.span.line < len(found) else None


def build_server(overrides: dict[str, Any]) -> RwgateServer:
    """The server with its handlers (a function, so tests can build one in process)."""
    server = RwgateServer(overrides)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RwgateServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.changed(params.text_document.uri, reread=True)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RwgateServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.changed(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: RwgateServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.changed(params.text_document.uri, reread=True)
        path = to_fs_path(params.text_document.uri)
        for other in ls.session.citing(path) if path else []:
            ls.changed(protocol.uri_of(other), reread=True)  # their bibliography, saved

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RwgateServer, params: lsp.DidCloseTextDocumentParams) -> None:
        path = to_fs_path(params.text_document.uri)
        if path is not None:
            ls.generation[path] = ls.generation.get(path, 0) + 1
            ls.publish(ls.session.close(path))

    @server.feature(lsp.SHUTDOWN)
    def on_shutdown(ls: RwgateServer, params: Any) -> None:
        ls.close_sources()

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: RwgateServer, params: lsp.HoverParams) -> lsp.Hover | None:
        return ls.hover(params)

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(
            code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.Empty]
        ),
    )
    def on_code_action(ls: RwgateServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        return ls.code_actions(params)

    @server.command(protocol.OPEN_NOTICE)
    def open_notice(ls: RwgateServer, url: str) -> None:
        if url.startswith("https://doi.org/"):
            ls.window_show_document(lsp.ShowDocumentParams(uri=url, external=True))

    @server.command(protocol.ALLOW)
    def allow(ls: RwgateServer, key: str, doi: str | None, reason: str) -> None:
        ls.allow(key, doi, reason)

    return server


def serve(overrides: dict[str, Any]) -> None:
    """Serve on standard input and output until the client says exit."""
    build_server(overrides).start_io()
