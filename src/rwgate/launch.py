"""The console scripts' first step: hand the run to the resident worker, or run it here.

``rw-filter``, ``rw-latexmk`` and ``rwgate bibtex|biber`` (the LaTeX hooks, also as
``python -P -m rwgate``) start on every build; :func:`rwgate.resident.delegate` lets a warm worker
run them. Everything else, and every run the worker does not take, goes to the usual entry point
in this process. This module imports nothing heavy before that choice.
"""

from __future__ import annotations

import sys

from rwgate.resident import delegate


def run_here(entry: str, argv: list[str]) -> int:
    """``entry argv`` in this process: the entry points the console scripts name, and the worker
    runs (:mod:`rwgate.worker`)."""
    if entry == "rw-filter":
        from rwgate.pandoc.filter import main as filter_main

        return filter_main(argv)
    if entry == "rw-latexmk":
        from rwgate.latex.latexmk import main as latexmk_main

        return latexmk_main(argv)
    from rwgate.cli import main as cli_main

    return cli_main(argv)


def _launch(entry: str) -> int:
    argv = sys.argv[1:]
    code = delegate(entry, argv)
    return code if code is not None else run_here(entry, argv)


def rw_filter() -> int:
    """``rw-filter FORMAT``: the pandoc JSON filter (:mod:`rwgate.pandoc.filter`)."""
    return _launch("rw-filter")


def rw_latexmk() -> int:
    """``rw-latexmk``: latexmk with the gate (:mod:`rwgate.latex.latexmk`); handed over only when
    standard input is not a terminal (see :mod:`rwgate.resident`)."""
    return _launch("rw-latexmk")


def rwgate() -> int:
    """``rwgate ...``: the command line (:mod:`rwgate.cli`); only its LaTeX hooks are handed over
    (:func:`rwgate.resident.accepts`)."""
    return _launch("rwgate")
