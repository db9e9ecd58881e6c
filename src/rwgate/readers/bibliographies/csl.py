"""CSL JSON and CSL YAML bibliographies (pandoc, Zotero, citeproc-js) -> references.

The same item mapping also comes from pandoc's inline ``references:`` metadata, so
:func:`references_from_csl_items` is public and takes plain dicts, whatever file they came from.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rwgate.contract import doi as doimod
from rwgate.contract.models import BibResult, Location, Problem, Reference
from rwgate.readers import ReaderError

if TYPE_CHECKING:
    import yaml

FIRST_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
# PubMed ids are 8 digits today; up to 10 with leading zeros (``0034938348``) are read.
PMID = re.compile(r"^(?:pmid\s*:?\s*)?(\d{1,10})$", re.IGNORECASE)
PMID_IN_TEXT = re.compile(r"\bPMID\s*:?\s*(\d{1,10})\b", re.IGNORECASE)  # Zotero's note
_TAG = re.compile(r"</?(?:i|b|sup|sub|sc|span)\b[^<>]{0,400}>", re.IGNORECASE)
_FRONT_MATTER_END = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)


def parse_csl_json(text: str, file: str) -> BibResult:
    """CSL JSON: a list of items, or an object holding one under ``items``/``references``;
    raises ReaderError (``file:line:col: ...``) when it is not JSON."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReaderError(f"{file}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise ReaderError(f"{file}: JSON nested too deeply to be a bibliography") from None
    items = _item_list(data)
    if items is None:
        raise ReaderError(f"{file}: expected a list of CSL items (or an object with 'items')")
    return _from_items(items, file, _json_item_lines(text, items))


def parse_csl_yaml(text: str, file: str) -> BibResult:
    """CSL YAML (a ``references:`` mapping or a bare list), or Markdown with YAML front matter;
    raises ReaderError (``file:line:col: ...``) when it is not YAML."""
    import yaml  # only YAML bibliographies pay for it (the pandoc filter's start-up counts)

    source = _front_matter(text)
    if source is None:
        return BibResult(problems=[_no_references(file)])
    loader = None
    try:
        loader = yaml.SafeLoader(source)
        node = loader.get_single_node()
        # A 600-byte alias bomb (anchors of anchors) would expand to gigabytes when walked.
        if node is not None and _expanded_size(node, {}) > MAX_YAML_NODES:
            raise yaml.YAMLError(f"aliases expand to more than {MAX_YAML_NODES} nodes (refused)")
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise ReaderError(f"{file}:{_yaml_error(exc)}") from None
    except RecursionError:
        raise ReaderError(f"{file}: YAML nested too deeply to be a bibliography") from None
    finally:
        if loader is not None:
            loader.dispose()
    items = _item_list(data)
    if items is None:
        if isinstance(data, Mapping) or data is None:
            return BibResult(problems=[_no_references(file)])
        raise ReaderError(f"{file}: expected CSL YAML with a 'references:' list")
    return _from_items(items, file, _yaml_item_lines(node, len(items)))


MAX_YAML_NODES = 200_000


def _expanded_size(node: Any, sizes: dict[int, int]) -> int:
    """Nodes of ``node`` with every alias expanded, counted on the composed graph: each distinct
    node computed once."""
    if id(node) in sizes:
        return sizes[id(node)]
    sizes[id(node)] = total = 1  # a cycle (a recursive alias) counts once
    for item in node.value if isinstance(node.value, list) else []:
        for part in item if isinstance(item, tuple) else (item,):  # a mapping's (key, value)
            total += _expanded_size(part, sizes)
            if total > MAX_YAML_NODES:
                break
    sizes[id(node)] = total
    return total


def references_from_csl_items(
    items: list[dict[str, Any]], file: str, lines: dict[str, int] | None = None
) -> BibResult:
    """References from CSL items; ``lines`` maps an item id to the line it was written on."""
    by_id = lines or {}
    item_lines = [
        by_id.get(str(item.get("id"))) if isinstance(item, Mapping) else None for item in items
    ]
    return _from_items(list(items), file, item_lines)


def _from_items(items: list[Any], file: str, lines: list[int | None]) -> BibResult:
    result = BibResult()
    first_line: dict[str, int | None] = {}
    for index, item in enumerate(items):
        line = lines[index] if index < len(lines) else None
        location = Location(file=file, line=line)
        if not isinstance(item, Mapping):
            message = f"item {index + 1} is not a CSL item (a mapping); skipped"
            result.problems.append(Problem(message=message, location=location, severity="error"))
            continue
        ref = _reference(item, location, index)
        if ref.key in first_line:
            first = first_line[ref.key]
            where = f" (first at line {first})" if first else ""
            message = f"duplicate id '{ref.key}'{where}; the first item is used"
            result.problems.append(Problem(message=message, location=location))
            continue
        if _scalar(item.get("id")) is None:
            message = f"item {index + 1} has no 'id'; checked as '{ref.key}'"
            result.problems.append(Problem(message=message, location=location))
        first_line[ref.key] = line
        result.references.append(ref)
    return result


def _reference(item: Mapping[str, Any], location: Location, index: int) -> Reference:
    fields = {str(k).lower(): v for k, v in item.items()}
    doi, raw_doi, origin = _find_doi(fields)
    key = _scalar(fields.get("id")) or raw_doi or doi or f"item-{index + 1}"
    pmid_match = PMID.match(_scalar(fields.get("pmid")) or "") or PMID_IN_TEXT.search(
        _scalar(fields.get("note")) or ""
    )
    return Reference(
        key=key,
        doi=doi,
        raw_doi=raw_doi,
        doi_origin=origin,
        pmid=str(int(pmid_match.group(1))) if pmid_match and int(pmid_match.group(1)) else None,
        title=_text(fields.get("title")),
        journal=_text(fields.get("container-title")),
        year=_year(fields.get("issued")),
        location=location,
        authors=_family_names(fields.get("author")),
        url=None if doi else _scalar(fields.get("url")),  # an arXiv page: rwgate.identify.ids
    )


def _family_names(people: Any) -> list[str]:
    """``family`` of each CSL name, else its ``literal`` (institutions), in order."""
    persons = [p for p in people if isinstance(p, Mapping)] if isinstance(people, list) else []
    return [name for p in persons if (name := _text(p.get("family")) or _text(p.get("literal")))]


def _find_doi(fields: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
    """(canonical DOI, DOI as written if malformed, field it came from); a bad ``DOI`` is final."""
    written = _scalar(fields.get("doi"))
    if written:
        found = doimod.try_normalize(written)
        return (found, None, "DOI") if found else (None, written, "DOI")
    found = doimod.find_in_text(_scalar(fields.get("url")))
    if found:
        return found, None, "URL"
    return None, None, None


def _scalar(value: Any) -> str | None:
    """A field as one trimmed string; lists (pandoc sometimes wraps values) give their first."""
    if isinstance(value, list):
        value = value[0] if value else None
    if value is None or isinstance(value, Mapping):
        return None
    text = str(value).strip()
    return text or None


def _text(value: Any) -> str | None:
    text = _scalar(value)
    if text is None:
        return None
    return " ".join(_TAG.sub("", text).split()) or None


def _year(issued: Any) -> int | None:
    """The year of a CSL date: date-parts, literal/raw strings, EDTF text, or YAML dates."""
    if isinstance(issued, list):
        # Old pandoc-citeproc YAML: ``issued: [{year: 2014}]``.
        issued = issued[0] if issued else None
    if isinstance(issued, dt.date):
        return issued.year
    if isinstance(issued, int) and not isinstance(issued, bool):
        return issued if 0 < issued < 10000 else None
    if isinstance(issued, Mapping):
        parts = issued.get("date-parts")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            return _year(parts[0][0])
        for name in ("year", "literal", "raw"):
            if issued.get(name) is not None:
                return _year(issued[name])
        return None
    if isinstance(issued, str):
        match = FIRST_YEAR.search(issued)
        return int(match.group(1)) if match else None
    return None


def _item_list(data: Any) -> list[Any] | None:
    if isinstance(data, list):
        return data
    if isinstance(data, Mapping):
        for name in ("references", "items"):
            if isinstance(data.get(name), list):
                return list(data[name])
    return None


def _json_item_lines(text: str, items: list[Any]) -> list[int | None]:
    """The line of each item's ``"id"``, found in order so repeated ids get their own lines."""
    lines: list[int | None] = []
    position = 0
    for item in items:
        item_id = item.get("id") if isinstance(item, Mapping) else None
        match = None
        if item_id is not None:
            for encoded in {json.dumps(item_id, ensure_ascii=False), json.dumps(item_id)}:
                pattern = re.compile(r'"id"\s*:\s*' + re.escape(encoded) + r"(?=\s*[,}])")
                match = pattern.search(text, position)
                if match:
                    break
        if match:
            position = match.end()
            lines.append(text.count("\n", 0, match.start()) + 1)
        else:
            lines.append(None)
    return lines


def _yaml_item_lines(root: yaml.Node | None, count: int) -> list[int | None]:
    import yaml

    sequence = root
    if isinstance(root, yaml.MappingNode):  # the first of its keys that names the items
        names = ("references", "items")
        found = (v for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value in names)
        sequence = next(found, None)
    if not isinstance(sequence, yaml.SequenceNode):
        return [None] * count
    return [node.start_mark.line + 1 for node in sequence.value]


def _front_matter(text: str) -> str | None:
    """The YAML to read: the whole file, or a Markdown file's leading ``---`` block.

    Lines before the block's end are kept verbatim so YAML marks remain file line numbers.
    """
    if not text.startswith("---"):
        return text
    first_newline = text.find("\n")
    if first_newline < 0:
        return None
    end = _FRONT_MATTER_END.search(text, first_newline + 1)
    return text if end is None else text[: end.start()]


def _no_references(file: str) -> Problem:
    return Problem(
        message="no 'references' list found", location=Location(file=file), severity="warning"
    )


def _yaml_error(exc: yaml.YAMLError) -> str:
    """``LINE:COL: invalid YAML: what``, in the same shape as the JSON error, on one line."""
    mark = getattr(exc, "problem_mark", None)
    problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
    where = f"{mark.line + 1}:{mark.column + 1}:" if mark is not None else ""
    return f"{where} invalid YAML: {problem}"
