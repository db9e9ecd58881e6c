"""Notes and verdicts in the protocol's terms: diagnostics, hovers and code actions.

Columns are code points inside rwgate; the client counts in the units it negotiated (UTF-16 by
default), so every range goes through pygls' position codec with the lines of the file it is in.
A hover is Markdown, every outside string escaped (a title or a notice label from upstream data
must not open a link or a tag in the editor's hover).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as lsp
from pygls.uris import from_fs_path
from pygls.workspace import PositionCodec

from rwgate.contract.vocab import capitalised, notice_label, status_label
from rwgate.frontends.lsp.analysis import Lines, Note, Place, message_of, notice_url
from rwgate.readers.manuscripts.citescan import Span
from rwgate.render.safe import md_safe

if TYPE_CHECKING:
    from rwgate.contract.models import Citation, Notice, SourceInfo

OPEN_NOTICE = "rwgate.openNotice"
ALLOW = "rwgate.allow"
SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "information": lsp.DiagnosticSeverity.Information,
    "hint": lsp.DiagnosticSeverity.Hint,
}
_WHAT_THE_BUILD_DOES = {
    "fail": "the build fails",
    "annotate": "the build annotates it",
    "warn": "the build warns",
    "ignore": "the build takes no action",
}


@functools.lru_cache(maxsize=256)
def uri_of(path: str) -> str:
    """A file's URI (remembered: a pass names the same few files in hundreds of diagnostics)."""
    return from_fs_path(path) or Path(path).as_uri()


def _units(codec: PositionCodec, text: str) -> int:
    """How many of the client's code units ``text`` is (str.encode's speed: pygls' codec
    counts character by character, a second for the diagnostics of a long manuscript)."""
    if text.isascii() or codec.encoding == lsp.PositionEncodingKind.Utf32:
        return len(text)
    if codec.encoding == lsp.PositionEncodingKind.Utf8:
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


def _range_json(codec: PositionCodec, lines: Lines, place: Place) -> dict[str, object]:
    try:
        text = lines(place.path)
    except OSError:  # a file gone since the pass: the range is still sent
        text = []
    rng = to_range(codec, text, place)
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def diagnostic_json(codec: PositionCodec, lines: Lines, note: Note) -> str:
    """One note as the JSON of its ``lsp.Diagnostic``, built as plain dictionaries and encoded
    by the C encoder (lsprotocol's converter makes a dictionary of every attribute of every
    object first: for the hundreds of diagnostics of a long manuscript, most of a change's
    time). Made once per note and kept by the server."""
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
    uri = json.dumps(uri_of(path))
    return (
        '{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics",'
        f'"params":{{"uri":{uri},"diagnostics":[{",".join(diagnostics)}]}}}}'
    )


def code_actions(
    citation: Citation,
    template: str | None,
    entry: Place | None,
    codec: PositionCodec,
    lines: Lines,
    diagnostics: list[lsp.Diagnostic],
) -> list[lsp.CodeAction]:
    """What can be done about a flagged work: cite its replacement, allow it, open its notice."""
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
            place = Place(entry.path, Span(citation.doi, number, at, at + len(citation.doi)))
            change = lsp.TextEdit(range=to_range(codec, text, place), new_text=new)
            return lsp.CodeAction(
                title=f"Cite the replacement of {citation.key}: doi:{new}",
                kind=lsp.CodeActionKind.QuickFix,
                edit=lsp.WorkspaceEdit(changes={uri_of(entry.path): [change]}),
                is_preferred=True,
            )
    return None


def age(when: dt.datetime | None, now: dt.datetime | None = None) -> str:
    """``as of 2025-06-01 (12 days ago)``; ``age unknown`` without a date."""
    if when is None:
        return "age unknown"
    stamp = when if when.tzinfo else when.replace(tzinfo=dt.UTC)
    days = ((now or dt.datetime.now(dt.UTC)) - stamp).days
    ago = "today" if days <= 0 else "1 day ago" if days == 1 else f"{days} days ago"
    return f"as of {stamp.date().isoformat()} ({ago})"


def _notice_line(notice: Notice) -> str:
    when = notice.date.isoformat() if notice.date else "undated"
    line = f"- {when}: {md_safe(notice_label(notice.type))}"
    if notice.doi:
        line += f", notice doi:{md_safe(notice.doi)}"
    if notice.source:
        line += f" ({md_safe(', '.join(notice.source))})"
    return line


def hover_text(citation: Citation, message: str, sources: list[SourceInfo]) -> str:
    """The hover of one key (Markdown): the verdict, its notices, its sources and their age."""
    said = capitalised(status_label(citation.status))
    lines = [f"**{md_safe(citation.key)}**: {md_safe(message)}", ""]
    verdict = f"Verdict: {md_safe(said)}; {_WHAT_THE_BUILD_DOES.get(citation.action, '')}"
    if citation.allowed:
        verdict += " (allowed by the allow-list)"
    lines.append(verdict)
    if citation.title:
        year = f" ({citation.year})" if citation.year else ""
        lines.append(f"Work: {md_safe(citation.title)}{year}")
    if citation.doi:
        lines.append(f"DOI: {md_safe(citation.doi)}")
    if citation.reason:
        lines.append(f"Why: {md_safe(citation.reason)}")
    if citation.notices:
        lines += ["", "History:"] + [_notice_line(n) for n in citation.notices]
    basis = set(citation.basis)
    shown = [s for s in sources if not basis or s.name in basis] or sources
    if shown:
        lines += ["", "Sources:"]
        lines += [f"- {md_safe(s.name)}, {age(s.as_of)}" for s in shown]
    return "\n".join(lines)


def replacement_doi(citation: Citation) -> str | None:
    """The DOI of the version that replaces a retracted-and-replaced work, when a notice names
    one: Crossref's ``new_version`` update points from the work to its replacement. None when no
    notice names it (the retract-and-replace notice itself is not the replacement)."""
    if citation.status != "replaced":
        return None
    for notice in reversed(citation.notices):
        if notice.type == "new_version" and notice.doi and notice.doi != citation.doi:
            return notice.doi
    return None
