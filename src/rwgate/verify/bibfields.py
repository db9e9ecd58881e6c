"""Where else verification may look a work up: the arXiv id and URL of each bibliography entry.

Authors, title, year and venue come with every :class:`~rwgate.models.Reference`; these two do
not, because the integrity check has no use for them. The .bib reader exposes them through
:func:`~rwgate.references.bibtex.parse_bib_links`, which reads an entry exactly as the reference
reader does (macros, ``#`` concatenation, first of duplicate keys), so both see the same entry.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rwgate.references import read_text
from rwgate.references.bibtex import EntryLinks, parse_bib_links
from rwgate.references.readers import by_name


def _csl_links(items: Any) -> dict[str, EntryLinks]:
    """CSL has no arXiv field; its ``URL`` may still name an arXiv abstract page."""
    if isinstance(items, dict):
        items = items.get("items") or items.get("references")
    out: dict[str, EntryLinks] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and "id" in item and str(item["id"]) not in out:
            url = item.get("URL")
            out[str(item["id"])] = EntryLinks(url=(str(url).strip() or None) if url else None)
    return out


def entry_links(path: Path) -> dict[str, EntryLinks]:
    """arXiv id and URL by entry key; empty for formats (and unreadable files) that have none.

    Unreadable files are the reference reader's to report, so nothing is raised here.
    """
    try:
        text, _ = read_text(path)
    except Exception:
        return {}
    suffix = path.suffix.lower()
    if suffix in by_name("bibtex").suffixes:
        return parse_bib_links(text)
    if suffix in by_name("csl-json").suffixes:
        try:
            return _csl_links(json.loads(text))
        except ValueError:
            return {}
    return {}
