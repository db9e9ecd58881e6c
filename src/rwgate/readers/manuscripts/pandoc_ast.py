"""What a pandoc JSON AST says about citations, as pure functions on the raw JSON (fast,
dependency-free), for ``rwgate check doc.md`` and the pandoc filter alike.

Shapes follow pandoc-types 1.23 (pandoc 3.x): every element is ``{"t": TAG, "c": CONTENT}``; a
``Cite`` holds ``[citations, inlines]``. YAML scalars (numbers too) arrive as ``MetaInlines``;
values given with ``-M``/``--bibliography`` arrive as ``MetaString``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

# Metadata fields that are data, not prose: a "@" inside them is not a citation.
_NON_PROSE_META = frozenset({"references", "rwgate", "nocite", "bibliography", "csl"})
_SPACES = frozenset({"Space", "SoftBreak", "LineBreak"})
_QUOTES = {"DoubleQuote": ("\u201c", "\u201d"), "SingleQuote": ("\u2018", "\u2019")}


def elements(node: Any) -> Iterator[dict[str, Any]]:
    """Every element dict under ``node`` in document order (iterative: ASTs can nest deeply)."""
    stack: list[Any] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "t" in item:
                yield item
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


# Elements that hold text only, never a citation: most of a document's nodes, skipped whole.
_TEXT_ONLY = frozenset({"Str", "Space", "SoftBreak", "LineBreak", "Code", "Math", "RawInline"})


def _cite_ids(node: Any) -> Iterator[str]:
    """Citation ids in document order: :func:`elements`' order, without visiting text leaves (the
    walk runs on every build of a long document; this is its hot loop)."""
    stack: list[Any] = [node]
    while stack:
        item = stack.pop()
        if type(item) is list:
            stack.extend(reversed(item))
        elif type(item) is dict:
            tag = item.get("t")
            if type(tag) is str and tag in _TEXT_ONLY:  # a metadata map may have a key "t"
                continue
            if tag == "Cite":
                content = item.get("c")
                if isinstance(content, list) and content and isinstance(content[0], list):
                    for citation in content[0]:
                        cid = citation.get("citationId") if isinstance(citation, dict) else None
                        if isinstance(cid, str):
                            yield cid
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, (list, dict)):  # subclasses: as elements() sees them
            stack.extend(reversed(item if isinstance(item, list) else list(item.values())))


def meta_map(ast: dict[str, Any]) -> dict[str, Any]:
    """The document's metadata map ({} when it has none)."""
    meta = ast.get("meta")
    return meta if isinstance(meta, dict) else {}


def cited_keys(ast: dict[str, Any]) -> list[str]:
    """Cited keys in order of first appearance: prose metadata (title...), body, then ``nocite``.

    This is the order pandoc's citeproc meets them. ``*`` (``nocite: '@*'``) is not a key; see
    :func:`cites_all`.
    """
    meta = meta_map(ast)
    sources: list[Any] = [value for name, value in meta.items() if name not in _NON_PROSE_META]
    sources += [ast.get("blocks", []), meta.get("nocite")]
    return list(dict.fromkeys(key for s in sources for key in _cite_ids(s) if key != "*"))


def cites_all(ast: dict[str, Any]) -> bool:
    """Whether ``nocite`` holds ``@*``, which puts every bibliography entry in the document."""
    return any(key == "*" for key in _cite_ids(meta_map(ast).get("nocite")))


def stringify(node: Any) -> str:
    """Plain text of inlines or blocks, the way pandoc's ``stringify`` renders it."""
    parts: list[str] = []
    _stringify_into(node, parts)
    return "".join(parts)


def _stringify_into(node: Any, parts: list[str]) -> None:
    if isinstance(node, list):
        for child in node:
            _stringify_into(child, parts)
        return
    if not isinstance(node, dict):
        return
    tag, content = node.get("t"), node.get("c")
    if tag == "Str" and isinstance(content, str):
        parts.append(content)
    elif tag in _SPACES:
        parts.append(" ")
    elif tag in ("Code", "Math") and isinstance(content, list) and len(content) == 2:
        parts.append(str(content[1]))
    elif tag == "Quoted" and isinstance(content, list) and len(content) == 2:
        kind = content[0].get("t") if isinstance(content[0], dict) else None
        left, right = _QUOTES.get(str(kind), ('"', '"'))
        parts.append(left)
        _stringify_into(content[1], parts)
        parts.append(right)
    elif tag == "Cite" and isinstance(content, list) and len(content) == 2:
        _stringify_into(content[1], parts)
    elif tag in ("Note", "RawInline", "RawBlock"):
        return
    elif tag in ("Para", "Plain", "Header", "CodeBlock", "LineBlock"):
        if parts and not parts[-1].endswith("\n"):
            parts.append("\n")
        _stringify_into(content, parts)
    else:
        _stringify_into(content, parts)


def meta_to_plain(value: Any) -> Any:
    """A pandoc metadata value as plain Python (dict, list, bool, str)."""
    if isinstance(value, list):
        return [meta_to_plain(item) for item in value]
    if not isinstance(value, dict):
        return value
    if "t" not in value:
        return {str(name): meta_to_plain(item) for name, item in value.items()}
    tag, content = value.get("t"), value.get("c")
    if tag == "MetaMap" and isinstance(content, dict):
        return {str(name): meta_to_plain(item) for name, item in content.items()}
    if tag == "MetaList" and isinstance(content, list):
        return [meta_to_plain(item) for item in content]
    if tag == "MetaBool":
        return bool(content)
    if tag == "MetaString":
        return "" if content is None else str(content)
    if tag in ("MetaInlines", "MetaBlocks"):
        return stringify(content).strip()
    return stringify(value).strip()


def bibliography_paths(ast: dict[str, Any]) -> list[str]:
    """The ``bibliography`` metadata (a string or a list) as the file names written."""
    plain = meta_to_plain(meta_map(ast).get("bibliography"))
    items = plain if isinstance(plain, list) else [plain]
    return [item.strip() for item in items if isinstance(item, str) and item.strip()]


def _csl_numbers(value: Any) -> Any:
    """Date parts as integers, as CSL JSON has them (YAML numbers reach the AST as text)."""
    if isinstance(value, list):
        return [_csl_numbers(item) for item in value]
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    return value


def _csl_entry(entry: dict[str, Any]) -> dict[str, Any]:
    fixed: dict[str, Any] = {}
    for name, value in entry.items():
        if isinstance(value, dict):
            value = _csl_entry(value)
        elif isinstance(value, list):
            value = [_csl_entry(v) if isinstance(v, dict) else v for v in value]
        fixed[name] = _csl_numbers(value) if name == "date-parts" else value
    return fixed


def inline_references(ast: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``references`` metadata as plain CSL JSON items (formatted text flattened)."""
    return csl_entries(meta_to_plain(meta_map(ast).get("references")))


def csl_entries(plain: Any) -> list[dict[str, Any]]:
    """A ``references`` value as plain CSL JSON items (also one a project file gives in YAML)."""
    if isinstance(plain, dict):
        plain = [plain]
    if not isinstance(plain, list):
        return []
    return [_csl_entry(entry) for entry in plain if isinstance(entry, dict)]


def rwgate_block_malformed(ast: dict[str, Any]) -> bool:
    """Whether an ``rwgate:`` block is present but not a map (``rwgate: strict``, a list...)."""
    raw = meta_map(ast).get("rwgate")
    return raw is not None and not (isinstance(raw, dict) and raw.get("t") == "MetaMap")


def rwgate_metadata(ast: dict[str, Any]) -> dict[str, Any]:
    """The per-document ``rwgate:`` block as plain values ({} when absent or not a map)."""
    plain = meta_to_plain(meta_map(ast).get("rwgate"))
    return plain if isinstance(plain, dict) else {}
