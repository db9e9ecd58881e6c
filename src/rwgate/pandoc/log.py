"""The filter's stderr lines: ``rw-filter: WARNING: ...`` and ``rw-filter: ERROR: ...``.

pandoc shows a filter's stderr as is; a fixed prefix lets users and CI logs grep for it, and one
line per message (whitespace folded) keeps upstream text from spoofing extra lines.
"""

from __future__ import annotations

import sys

PROG = "rw-filter"


def say(level: str, message: str) -> None:
    """Write one diagnostic line to stderr."""
    sys.stderr.write(f"{PROG}: {level}: {' '.join(message.split())}\n")
    sys.stderr.flush()
