"""The diagnostics ``rwgate lsp`` sends as JSON it makes itself are the ones lsprotocol's converter
makes of the same notes (the server encodes them once per note, for speed, not its own way)."""

from __future__ import annotations

import json

import pytest
from lsprotocol import types as lsp
from pygls.protocol import default_converter
from pygls.workspace import PositionCodec

from rwgate.frontends.lsp import protocol
from rwgate.frontends.lsp.analysis import Note, Place
from rwgate.readers.manuscripts.citescan import Span

PAPER = "/tmp/paper.md"
BIB = "/tmp/refs.bib"
LINES = {
    PAPER: ["# Über 𝔸", "Déjà vu [@wakefield1998] and [@x]."],
    BIB: ["@article{wakefield1998,", "  doi = {10.1016/s0140-6736(97)11096-0},"],
}
NOTICE = "https://doi.org/10.1016/s0140-6736(10)60175-4"
ZERO = lsp.Position(line=0, character=0)


def _notes() -> list[Note]:
    use = Place(PAPER, Span("wakefield1998", 1, 11, 24))
    entry = Place(BIB, Span("wakefield1998", 0, 9, 22))
    return [
        Note(
            use,
            "Retracted 2010; notice doi:10.1016/s0140-6736(10)60175-4 \u00e9\u2028",
            "warning",
            code="retracted",
            key="wakefield1998",
            struck=True,
            url=NOTICE,
            related=[(entry, "the entry of wakefield1998"), (NOTICE, f"the notice: {NOTICE}")],
        ),
        Note(Place(PAPER, Span("x", 1, 31, 32)), "could not be checked", "information", key="x"),
        Note(Place(PAPER, Span("", 0, 0, 0)), "rwgate cannot read this", "error", code="input"),
        Note(Place("/tmp/gone.bib", Span("", 3, 0, 5)), "a problem in a lost file", "hint"),
    ]


def _lines(path: str) -> list[str]:
    if path not in LINES:
        raise OSError(path)
    return LINES[path]


def _range(codec: PositionCodec, place: Place) -> lsp.Range:
    return protocol.to_range(codec, LINES.get(place.path, []), place)


def _diagnostic(codec: PositionCodec, note: Note) -> lsp.Diagnostic:
    """The note as lsprotocol's own types carry it (what the server's JSON must be)."""
    related = [
        lsp.DiagnosticRelatedInformation(
            location=lsp.Location(uri=target, range=lsp.Range(start=ZERO, end=ZERO))
            if isinstance(target, str)  # a URL (the notice): no range inside it
            else lsp.Location(uri=protocol.uri_of(target.path), range=_range(codec, target)),
            message=said,
        )
        for target, said in note.related
    ]
    return lsp.Diagnostic(
        range=_range(codec, note.place),
        message=note.message,
        severity=protocol.SEVERITY[note.severity],
        code=note.code,
        code_description=lsp.CodeDescription(href=note.url) if note.url else None,
        source="rwgate",
        tags=[lsp.DiagnosticTag.Deprecated] if note.struck else None,
        related_information=related or None,
        data={"key": note.key} if note.key else None,
    )


@pytest.mark.parametrize(
    "encoding",
    [lsp.PositionEncodingKind.Utf16, lsp.PositionEncodingKind.Utf8, lsp.PositionEncodingKind.Utf32],
)
def test_diagnostic_json_is_what_lsprotocol_makes(encoding: lsp.PositionEncodingKind) -> None:
    codec = PositionCodec(encoding)
    converter = default_converter()
    for note in _notes():
        made = json.loads(protocol.diagnostic_json(codec, _lines, note))
        expected = converter.unstructure(_diagnostic(codec, note))
        assert made == expected


def test_publication_json_is_a_publish_diagnostics_notification() -> None:
    codec = PositionCodec(lsp.PositionEncodingKind.Utf16)
    parts = [protocol.diagnostic_json(codec, _lines, n) for n in _notes()]
    message = json.loads(protocol.publication_json(PAPER, parts))
    assert message["jsonrpc"] == "2.0"
    assert message["method"] == "textDocument/publishDiagnostics"
    params = default_converter().structure(message["params"], lsp.PublishDiagnosticsParams)
    assert params.uri == protocol.uri_of(PAPER)
    assert [d.message for d in params.diagnostics] == [n.message for n in _notes()]
    assert json.loads(protocol.publication_json(PAPER, []))["params"]["diagnostics"] == []
