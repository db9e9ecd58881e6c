"""The filter's stderr lines: ``rw-filter: WARNING: ...`` and ``rw-filter: ERROR: ...``.

pandoc shows a filter's stderr as is; a fixed prefix lets users and CI logs grep for it, and one
line per message (whitespace folded, control characters replaced as in the terminal report) keeps
upstream text (a notice DOI, an error body) from spoofing extra lines or driving the terminal.

Every line written is also remembered, so the verdict memo can print exactly the same lines on a
rebuild that does not run the check.
"""

from __future__ import annotations

import sys

from rwgate.frontends.pandoc.hints import for_filter

PROG = "rw-filter"
_written: list[str] = []


def line(level: str, message: str) -> str:
    """The finished line :func:`say` writes (its hints in the filter's words: :mod:`hints`)."""
    message = for_filter(message)
    if not message.isprintable():
        # Only text with control or format characters needs cleaning, and the report module that
        # cleans it loads the core, which most runs (every memo hit) never need.
        from rwgate.render.safe import term_safe

        message = term_safe(message)
    return f"{PROG}: {level}: {' '.join(message.split())}\n"


def say(level: str, message: str) -> None:
    write_line(line(level, message))


def write_line(line: str) -> None:
    """Write one finished line (from :func:`say`, or replayed from the memo) to stderr."""
    _written.append(line)
    sys.stderr.write(line)
    sys.stderr.flush()


def mark() -> int:
    return len(_written)


def lines_since(bookmark: int) -> list[str]:
    return _written[bookmark:]
