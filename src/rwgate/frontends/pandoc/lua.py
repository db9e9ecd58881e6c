"""The Lua filter's protocol: which entries it may annotate itself, its answer, its memo.

The Lua filter (``_extensions/rwgate/rwgate.lua``) talks to rw-filter in two ways:
``--lua-memo PATH`` (a verdict it replays without starting Python, :func:`store_for_lua`), and
``--verdicts``: it asks for the verdicts only (:func:`lua_answer`) and places the notices in its
own copy of the document, so rw-filter neither loads the document into panflute nor writes it
back. That is done only where the Lua placement gives the very document :func:`.render.place`
would give (:func:`lua_entries`, from the raw JSON AST); anywhere else rw-filter places as always:

* citeproc has rendered the list (``Div.csl-bib-body``), every annotated work has an entry, and the
  Lua walk (through ``Div``s, stopping at an entry) meets exactly the entries this one does (which
  also descends through block quotes and lists);
* each entry has the shape both fill alike: at most one ``csl-right-inline`` span, at the top of a
  paragraph, else a last block that is a paragraph (or no paragraph at all);
* no notice follows citations: not ``inline``, not JATS.

The answer names each entry ``Div`` by its identifier, with the key whose notice it gets, so the Lua
side needs no key-resolution rules of its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rwgate.readers.keys import resolve_key
from rwgate.readers.manuscripts.pandoc_ast import elements
from rwgate.settings import recorded

if TYPE_CHECKING:
    from rwgate.frontends.pandoc.memo import Verdict
    from rwgate.render.annotation import Annotation

LUA_LAYOUT = 1


def attr(div: dict[str, Any]) -> tuple[str, list[str]]:
    try:
        ident, classes, _attrs = div["c"][0]
    except (KeyError, IndexError, TypeError, ValueError):
        return "", []
    return (ident if isinstance(ident, str) else ""), (classes if isinstance(classes, list) else [])


def is_entry(div: dict[str, Any]) -> bool:
    ident, classes = attr(div)
    return ident.startswith("ref-") and "csl-entry" in classes


def _content(element: dict[str, Any]) -> list[Any]:
    tag, content = element.get("t"), element.get("c")
    if tag == "Div" and isinstance(content, list) and len(content) == 2:
        return content[1] if isinstance(content[1], list) else []
    if tag == "BlockQuote":
        return content if isinstance(content, list) else []
    items = content if tag == "BulletList" else None
    if tag == "OrderedList" and isinstance(content, list) and len(content) == 2:
        items = content[1]
    if isinstance(items, list):
        return [block for item in items if isinstance(item, list) for block in item]
    return []


def divs(blocks: list[Any], wide: bool) -> Iterator[dict[str, Any]]:
    """``Div``s in document order. ``wide``: as rw-filter's placement walks (through Divs, block
    quotes and lists); otherwise as the Lua filter's (through Divs only, not into an entry)."""
    stack = list(reversed(blocks))
    while stack:
        block = stack.pop()
        if not isinstance(block, dict):
            continue
        tag = block.get("t")
        if tag == "Div":
            yield block
            if not wide and is_entry(block):
                continue
        if tag == "Div" or (wide and tag in ("BlockQuote", "BulletList", "OrderedList")):
            stack.extend(reversed(_content(block)))


def rendered_entries(blocks: Any) -> list[dict[str, Any]] | None:
    """citeproc's entry ``Div``s as rw-filter's placement meets them; None before citeproc (no
    ``Div.csl-bib-body``)."""
    if not isinstance(blocks, list):
        return None
    wide = list(divs(blocks, wide=True))
    if not any("csl-bib-body" in attr(div)[1] for div in wide):
        return None
    return [div for div in wide if is_entry(div)]


def _right_inline(element: dict[str, Any]) -> bool:
    return element.get("t") == "Span" and "csl-right-inline" in attr(element)[1]


def _paragraph(block: Any) -> bool:
    return isinstance(block, dict) and block.get("t") in ("Para", "Plain")


def _same_target(entry: dict[str, Any]) -> bool:
    """Whether the Lua filter appends to the inlines rw-filter appends to, in this entry."""
    blocks = _content(entry)
    deep = [id(e) for e in elements(blocks) if _right_inline(e)]
    top = [
        id(inline)
        for block in blocks
        if _paragraph(block) and isinstance(block.get("c"), list)
        for inline in block["c"]
        if isinstance(inline, dict) and _right_inline(inline)
    ]
    if deep or top:
        return deep == top and len(top) == 1
    return not any(_paragraph(b) for b in blocks) or _paragraph(blocks[-1])


def lua_entries(
    ast: dict[str, Any], fmt: str, keys: Mapping[str, object], inline: bool
) -> dict[str, str] | None:
    """Entry ``Div`` identifier -> annotated key, for the Lua filter to place; None: rw-filter
    places the notices itself (see the module docstring)."""
    if inline or fmt.split("+")[0].startswith("jats"):
        return None
    blocks: Any = ast.get("blocks")
    entries = rendered_entries(blocks)
    if entries is None:
        return None
    if [id(d) for d in entries] != [id(d) for d in divs(blocks, False) if is_entry(d)]:
        return None
    found: dict[str, str] = {}
    for div in entries:
        ident = attr(div)[0]
        key = resolve_key(ident[4:], keys)
        if key is None:
            continue
        if not _same_target(div):
            return None
        found[ident] = key
    return found if set(found.values()) == set(keys) else None


def lua_annotations(annotations: Mapping[str, Annotation]) -> dict[str, dict[str, str | None]]:
    """The notices as the Lua filter places them: text, status, and the notice DOI with the link
    rw-filter would give it (escaped as :func:`rwgate.contract.doi.url` escapes it)."""
    from rwgate.contract.doi import url

    return {
        key: {
            "status": a.status,
            "text": a.text,
            "notice_doi": a.notice_doi,
            "url": url(a.notice_doi) if a.notice_doi else None,
        }
        for key, a in annotations.items()
    }


def lua_answer(annotations: Mapping[str, Annotation], entries: Mapping[str, str]) -> bytes:
    """What ``--verdicts`` answers instead of the document: the notices and, for each entry
    ``Div`` identifier, the key whose notice it gets. It starts with ``{"layout":`` (a document
    with ``{"pandoc-api-version":``): that is how the Lua filter tells them apart."""
    data = {"layout": LUA_LAYOUT, "annotations": lua_annotations(annotations), "entries": entries}
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def store_for_lua(path: Path, recorder: recorded.Recorder, verdict: Verdict) -> None:
    """The verdict in the shape the Lua filter replays without starting Python, at the path it
    named, with the run's record (it re-checks every recorded input itself). Only what it can
    place itself is written (a failed gate, or annotations of rendered entries): for anything
    else (shadow .bib files, citation markers, a report) it calls rw-filter again."""
    if verdict.report_path is not None or verdict.inline:
        return
    if verdict.exit_code == 0 and verdict.annotations and verdict.mode != "entries":
        return
    payload = {
        "layout": LUA_LAYOUT,
        "exit_code": verdict.exit_code,
        "lines": verdict.lines,
        "annotations": lua_annotations(verdict.annotations),
    }
    from rwgate.verdicts.remembered import MAX_AGE, memo_base

    cache = memo_base(recorded.environ())
    if cache is not None:
        recorded.remember(path, recorder, payload, MAX_AGE, cache)
