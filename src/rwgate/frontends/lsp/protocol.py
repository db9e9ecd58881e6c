"""Notes and verdicts in the protocol's terms: diagnostics, hovers and code actions.

Columns are code points inside rwgate (:mod:`rwgate.frontends.lsp.scan`); the client counts in the
units it
negotiated (UTF-16 by default), so every range goes through pygls' position codec with the lines
of the file it is in.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as lsp
from pygls.uris import from_fs_path
from pygls.workspace import PositionCodec

from rwgate.frontends.lsp.analysis import Note, Place, message_of, notice_url
from rwgate.frontends.lsp.present import replacement_doi

if TYPE_CHECKING:
    from rwgate.contract.models import Citation

OPEN_NOTICE = "rwgate.openNotice"
ALLOW = "rwgate.allow"
SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "information": lsp.DiagnosticSeverity.Information,
    "hint": lsp.DiagnosticSeverity.Hint,
}
Lines = Callable[[str], list[str]]


@functools.lru_cache(maxsize=256)
def uri_of(path: str) -> str:
    """A file's URI (remembered: a pass names the same few files in hundreds of diagnostics)."""
    return from_fs_path(path) or Path(path).as_uri()


def _units(codec: PositionCodec, text: str) -> int:
    """How many of the client's code units ``text`` is (str.encode's speed: pygls' codec
    counts character by character, a second for the diagnostics of a long manuscript)."""
    if text.isascii():
        return len(text)
    encoding = codec.encoding
    if encoding == lsp.PositionEncodingKind.Utf32:
        return len(text)
    if encoding == lsp.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def to_range(codec: PositionCodec, lines: Sequence[str], place: Place) -> lsp.Range:
    span = place.span
    line = lines[span.line] if span.line < len(lines) else ""
    start = _units(codec, line[: span.start])
    end = start + _units(codec, line[span.start : span.end])
    return lsp.Range(
        start=lsp.Position(line=span.line, character=start),
        end=lsp.Position(line=span.line, character=end),
    )


def _location(codec: PositionCodec, lines: Lines, target: Place | str) -> lsp.Location:
    if isinstance(target, str):  # a URL (the notice): no range inside it
        zero = lsp.Position(line=0, character=0)
        return lsp.Location(uri=target, range=lsp.Range(start=zero, end=zero))
    return lsp.Location(uri=uri_of(target.path), range=_safe_range(codec, lines, target))


def _safe_range(codec: PositionCodec, lines: Lines, place: Place) -> lsp.Range:
    try:
        text = lines(place.path)
    except OSError:
        text = []
    return to_range(codec, text, place)


def diagnostic(codec: PositionCodec, lines: Lines, note: Note) -> lsp.Diagnostic:
    """One note as the client shows it."""
    related = [
        lsp.DiagnosticRelatedInformation(location=_location(codec, lines, target), message=said)
        for target, said in note.related
    ]
    return lsp.Diagnostic(
        range=_safe_range(codec, lines, note.place),
        message=note.message,
        severity=SEVERITY[note.severity],
        code=note.code,
        code_description=lsp.CodeDescription(href=note.url) if note.url else None,
        source="rwgate",
        tags=[lsp.DiagnosticTag.Deprecated] if note.struck else None,
        related_information=related or None,
        data={"key": note.key} if note.key else None,
    )


def _range_json(codec: PositionCodec, lines: Lines, place: Place) -> dict[str, object]:
    rng = _safe_range(codec, lines, place)
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def diagnostic_json(codec: PositionCodec, lines: Lines, note: Note) -> str:
    """One note as the JSON of its diagnostic: what :func:`diagnostic` sends, built as plain
    dictionaries and encoded by the C encoder (lsprotocol's converter makes a dictionary of every
    attribute of every object first: for the hundreds of diagnostics of a long manuscript, most
    of a change's time). Made once per note and kept by the server."""
    out: dict[str, object] = {
        "range": _range_json(codec, lines, note.place),
        "message": note.message,
        "severity": SEVERITY[note.severity].value,
    }
    if note.code is not None:
        out["code"] = note.code
    if note.url:
        out["codeDescription"] = {"href": note.url}
    out["source"] = "rwgate"
    if note.struck:
        out["tags"] = [lsp.DiagnosticTag.Deprecated.value]
    related = [
        {"location": _location_json(codec, lines, target), "message": said}
        for target, said in note.related
    ]
    if related:
        out["relatedInformation"] = related
    if note.key:
        out["data"] = {"key": note.key}
    return json.dumps(out, separators=(",", ":"))


def _location_json(codec: PositionCodec, lines: Lines, target: Place | str) -> dict[str, object]:
    if isinstance(target, str):  # a URL (the notice): no range inside it
        zero = {"line": 0, "character": 0}
        return {"uri": target, "range": {"start": zero, "end": dict(zero)}}
    return {"uri": uri_of(target.path), "range": _range_json(codec, lines, target)}


def publication_json(path: str, diagnostics: Sequence[str]) -> str:
    """The ``textDocument/publishDiagnostics`` message of a file, from its diagnostics' JSON."""
    head = json.dumps(
        {"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics"}, separators=(",", ":")
    )
    uri = json.dumps(uri_of(path))
    return f'{head[:-1]},"params":{{"uri":{uri},"diagnostics":[{",".join(diagnostics)}]}}}}'


def hover(text: str, codec: PositionCodec, lines: Sequence[str], place: Place) -> lsp.Hover:
    return lsp.Hover(
        contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text),
        range=to_range(codec, lines, place),
    )


def code_actions(
    citation: Citation,
    template: str | None,
    entry: Place | None,
    codec: PositionCodec,
    lines: Lines,
    diagnostics: list[lsp.Diagnostic],
) -> list[lsp.CodeAction]:
    """What can be done about a flagged work: cite its replacement, allow it (in the user's
    configuration), open its notice."""
    actions: list[lsp.CodeAction] = []
    edit = _replacement_edit(citation, entry, codec, lines)
    if edit is not None:
        actions.append(edit)
    if citation.action in ("fail", "annotate", "warn") and not citation.allowed:
        why = f"cited deliberately: {message_of(citation, template)} (allowed from the editor)"
        actions.append(
            lsp.CodeAction(
                title=f"Allow {citation.key} in your rwgate configuration (with a reason, 90 days)",
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=diagnostics or None,
                command=lsp.Command(
                    title="Allow", command=ALLOW, arguments=[citation.key, citation.doi, why]
                ),
            )
        )
    url = notice_url(citation)
    if url is not None:
        actions.append(
            lsp.CodeAction(
                title=f"Open the notice ({url})",
                kind=lsp.CodeActionKind.Empty,
                command=lsp.Command(title="Open the notice", command=OPEN_NOTICE, arguments=[url]),
            )
        )
    return actions


def _replacement_edit(
    citation: Citation, entry: Place | None, codec: PositionCodec, lines: Lines
) -> lsp.CodeAction | None:
    """The entry's DOI replaced by its replacement's, when a notice names the replacement."""
    new = replacement_doi(citation)
    if new is None or entry is None or not citation.doi:
        return None
    text = lines(entry.path)
    for number in range(entry.span.line, min(entry.span.line + 40, len(text))):
        at = text[number].lower().find(citation.doi.lower())
        if at >= 0:
            from rwgate.frontends.lsp.scan import Span

            place = Place(entry.path, Span(citation.doi, number, at, at + len(citation.doi)))
            change = lsp.TextEdit(range=to_range(codec, text, place), new_text=new)
            return lsp.CodeAction(
                title=f"Cite the replacement of {citation.key}: doi:{new}",
                kind=lsp.CodeActionKind.QuickFix,
                edit=lsp.WorkspaceEdit(changes={uri_of(entry.path): [change]}),
                is_preferred=True,
            )
    return None
