"""Whether a document's citations reach a bibliography: the rule LaTeX and Markdown share.

Cited keys that resolve to no bibliography rwgate can see are "cannot judge from the sources"
(exit 2), never a pass of ``missing_entry`` warnings; a document that cites nothing passes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from rwgate.errors import RwgateError
from rwgate.readers.keys import identifier_key

CANNOT_JUDGE = "cannot judge from the sources"


def unreached(
    keys: Sequence[str], names: Sequence[str], files: Sequence[str], inline: Iterable[str] = ()
) -> str | None:
    """Why ``keys`` cannot be judged (the parenthesis of the message), or None when they can.

    ``names``: the bibliographies the document names; ``files``: those found; ``inline``: ids of
    entries the document holds itself (pandoc's ``references:``).
    """
    keys = [key for key in keys if identifier_key(key) is None]  # @doi:…: an entry of its own
    if not keys:
        return None
    entries = {key.casefold() for key in inline}
    if not names and not entries:
        return "no bibliography found"
    if names and (not files or len(files) < len(names)):
        return None  # a name not found is an error of its own, at the line naming it
    from rwgate.readers import load_bibliography

    for file in files:
        try:
            entries.update(ref.key.casefold() for ref in load_bibliography(Path(file)).references)
        except (RwgateError, OSError, ValueError):
            return None  # unreadable: the join says so, and that is exit 2 too
    if any(key.casefold() in entries for key in keys):
        return None
    shown = ", ".join([Path(f).name for f in files] + (["its references:"] if inline else []))
    return f"none of the {len(keys)} cited keys is in {shown}"
