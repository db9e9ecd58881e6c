"""The console scripts' first step: hand the run to the resident worker, or run it here.

``rw-filter``, ``rw-latexmk`` and ``rwgate bibtex|biber`` (the LaTeX hooks, also as
``python -P -m rwgate``) start on every build; :func:`rwgate.resident.delegate` lets a warm worker
run them. Everything else, and every run the worker does not take, goes to the usual entry point
in this process. This module imports nothing heavy before that choice.
"""

from __future__ import annotations

import sys

from rwgate.resident import ENTRIES, delegate


def rw_filter() -> int:
    """``rw-filter FORMAT``: the pandoc JSON filter (:mod:`rwgate.pandoc.filter`)."""
    code = delegate("rw-filter", sys.argv[1:])
    if code is not None:
        return code
    from rwgate.pandoc.filter import main

    return main()


def rw_latexmk() -> int:
    """``rw-latexmk``: latexmk with the gate (:mod:`rwgate.latex.latexmk`); handed over only when
    standard input is not a terminal (see :mod:`rwgate.resident`)."""
    code = delegate("rw-latexmk", sys.argv[1:])
    if code is not None:
        return code
    from rwgate.latex.latexmk import main

    return main()


def rwgate() -> int:
    """``rwgate ...``: the command line (:mod:`rwgate.cli`); its LaTeX hooks may be handed over."""
    argv = sys.argv[1:]
    if argv[:1] and argv[0] in ENTRIES["rwgate"]:
        code = delegate("rwgate", argv)
        if code is not None:
            return code
    from rwgate.cli import main

    return main(argv)
