"""The filter's stderr lines: ``rw-filter: WARNING: ...`` and ``rw-filter: ERROR: ...``.

pandoc shows a filter's stderr as is; a fixed prefix lets users and CI logs grep for it, and one
line per message (whitespace folded, control characters replaced as in the terminal report) keeps
upstream text (a notice DOI, an error body) from spoofing extra lines or driving the terminal.
"""

from __future__ import annotations

import sys

PROG = "rw-filter"


def say(level: str, message: str) -> None:
    """Write one diagnostic line to stderr."""
    # Imported here: the report module loads the core, which a message-free run may never need.
    from rwgate.render.report import term_safe

    sys.stderr.write(f"{PROG}: {level}: {' '.join(term_safe(message).split())}\n")
    sys.stderr.flush()
