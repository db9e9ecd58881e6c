"""What verification needs from a bibliography beyond :class:`~rwgate.models.Reference`.

The integrity check needs only DOIs, so references carry no authors; verification compares
authors and reads arXiv ids and URLs. This module reads those fields with the same BibTeX
machinery as the reference reader (macros, ``#`` concatenation, LaTeX decoding), so both see one
entry the same way, and from CSL JSON/YAML items.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rwgate.references import BIBTEX_SUFFIXES, CSL_JSON_SUFFIXES, read_text

_AND = re.compile(r"\s+and\s+", re.IGNORECASE)


@dataclass
class Extra:
    authors: list[str] = field(default_factory=list)
    arxiv_id: str | None = None
    url: str | None = None


def split_authors(text: str) -> list[str]:
    """``A and B and others`` -> ``[A, B]`` (BibTeX's ``others`` is not a person)."""
    names = [" ".join(n.split()) for n in _AND.split(text)]
    return [n for n in names if n and n.lower() not in ("others", "et al.", "et al")]


def _from_bib(text: str) -> dict[str, Extra]:
    from bibtexparser.model import Entry
    from bibtexparser.splitter import Splitter

    from rwgate.references.bibtex import _collect_macros, _fields, _text

    try:
        blocks = Splitter(text).split().blocks
    except Exception:  # the reference reader reports unreadable files; nothing extra here
        return {}
    macros = _collect_macros(blocks)
    out: dict[str, Extra] = {}
    for block in blocks:
        if not isinstance(block, Entry) or not block.key or block.key in out:
            continue
        fields = _fields(block, macros)
        authors = split_authors(_text(fields.get("author")) or "")
        kind = (fields.get("archiveprefix") or fields.get("eprinttype") or "").strip().lower()
        arxiv = fields.get("eprint", "").strip() if kind == "arxiv" else None
        out[block.key] = Extra(authors=authors, arxiv_id=arxiv or None, url=fields.get("url"))
    return out


def _csl_name(person: Any) -> str | None:
    if not isinstance(person, dict):
        return None
    family = person.get("family") or person.get("literal")
    return str(family) if family else None


def _from_csl(items: Any) -> dict[str, Extra]:
    out: dict[str, Extra] = {}
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or "id" not in item:
            continue
        names = [n for n in (_csl_name(p) for p in item.get("author") or []) if n]
        url = item.get("URL")
        out[str(item["id"])] = Extra(authors=names, url=str(url) if url else None)
    return out


def extra_fields(path: Path) -> dict[str, Extra]:
    """Authors, arXiv id and URL by entry key; empty for formats that have none."""
    suffix = path.suffix.lower()
    try:
        text, _ = read_text(path)
    except Exception:  # unreadable files are reported by the reference reader
        return {}
    if suffix in BIBTEX_SUFFIXES:
        return _from_bib(text)
    if suffix in CSL_JSON_SUFFIXES:
        try:
            return _from_csl(json.loads(text))
        except ValueError:
            return {}
    return {}
