"""The contract's vocabularies (statuses, actions) as plain Python.

Kept apart from :mod:`rwgate.models` so that building the command line, which every ``rwgate``
start does (latexmk starts ``rwgate bibtex`` several times per build), needs no Pydantic.
"""

from __future__ import annotations

from typing import Literal, get_args

Status = Literal[
    "retracted",
    "withdrawn",
    "removed",
    "partially_retracted",
    "replaced",
    "expression_of_concern",
    "unknown_notice",
    "corrected",
    "amended",
    "reinstated",
    "clean",
    "unknown_doi",
    "invalid_doi",
    "no_doi",
    "missing_entry",
    "unverified",
]
STATUSES: tuple[Status, ...] = get_args(Status)
# Statuses that say something about the work itself (a notice is in force), in severity order.
FLAGGED_STATUSES: tuple[Status, ...] = STATUSES[: STATUSES.index("clean")]
# Flagged statuses whose notice weakens the work itself (not a mere correction): these travel
# with an exported BibTeX entry and make a verified match "retracted".
SERIOUS_STATUSES: tuple[Status, ...] = STATUSES[: STATUSES.index("corrected")]
RETRACTED_LIKE: tuple[Status, ...] = STATUSES[: STATUSES.index("expression_of_concern")]
# Statuses of works that could not be judged (no source said anything about the work).
UNJUDGED_STATUSES: tuple[Status, ...] = STATUSES[STATUSES.index("clean") + 1 :]
Action = Literal["fail", "annotate", "warn", "ignore"]
ACTIONS: tuple[Action, ...] = get_args(Action)
