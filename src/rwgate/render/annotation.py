"""The annotation of a flagged work, as plain data.

Kept apart from :mod:`rwgate.render.annotate` (which needs the models, hence Pydantic) so the
pandoc filter can place a remembered annotation without loading either.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Annotation:
    """What an annotation says, before any format escapes it."""

    status: str
    label: str
    year: int | None
    notice_doi: str | None
    text: str
