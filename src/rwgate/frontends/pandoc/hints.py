"""Hints in the words a pandoc filter's user can act on (issue 46 item 5).

The core says what to do in ``rwgate check``'s words (``run with --offline``, ``--recover-dois``);
a pandoc filter takes no options: rw-filter and the Lua filter read the environment and the
document's ``rwgate:`` metadata. Every line rw-filter writes passes through :func:`for_filter`,
so a hint names only what that front end takes (pandoc's own options, such as ``--citeproc``,
are named as pandoc options).
"""

from __future__ import annotations

_FOR_FILTER: tuple[tuple[str, str], ...] = (
    ("run with --offline (or RWGATE_OFFLINE=1)", "set RWGATE_OFFLINE=1"),
    (
        "`--recover-dois` looks them up",
        "RWGATE_RECOVER_DOIS=1 (or `rwgate: {recover-dois: true}` in the metadata) looks them up",
    ),
    ("(--no-memo, RWGATE_NO_MEMO)", "(RWGATE_NO_MEMO=1)"),
    ("(--no-cache, RWGATE_NO_CACHE)", "(RWGATE_NO_CACHE=1)"),
)


def for_filter(message: str) -> str:
    """``message`` with ``rwgate check``'s options said as the filter's settings."""
    if "--" not in message:
        return message
    for said, meant in _FOR_FILTER:
        message = message.replace(said, meant)
    return message
