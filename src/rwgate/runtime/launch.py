"""The console scripts' first step: hand the run to the resident worker, or run it here.

``rw-filter``, ``rw-latexmk`` and ``rwgate bibtex|biber`` (the LaTeX hooks, also as
``python -P -m rwgate``) start on every build; :func:`rwgate.runtime.resident.delegate` lets a warm
worker run them. Everything else, and every run the worker does not take, goes to the usual entry
point in this process. This module imports nothing heavy before that choice.

``--help`` and ``--version`` are answered here, before anything reads standard input: pandoc
gives ``rw-filter`` a document there, and a person typing ``rw-filter --help`` gives it nothing.
"""

from __future__ import annotations

import sys

from rwgate.runtime.resident import delegate

FILTER_HELP = """usage: pandoc INPUT --citeproc --filter rw-filter [pandoc options]

rw-filter is a pandoc JSON filter: pandoc runs it with the document on standard input.
Each flagged work of the rendered bibliography ends with its notice (e.g. "Retracted 2010;
notice doi:..."); when the policy fails, each offending citation is an ERROR line on standard
error and the filter exits 1, so pandoc writes no output.

Settings: the document's rwgate: metadata block (policy only), rwgate.toml or [tool.rwgate] in
pyproject.toml searched upward from the working directory, and the RWGATE_* environment
variables (RWGATE_POLICY, RWGATE_OFFLINE, RWGATE_SNAPSHOT, RWGATE_REPORT, RWGATE_VERBOSE, ...).
See the README's "Pandoc: rw-filter" section.
"""
_HELP = frozenset(("-h", "--help"))


def answer_itself(entry: str, argv: list[str]) -> str | None:
    """The text ``entry --help`` or ``entry --version`` prints, or None for any other run (the
    only arguments pandoc ever passes are the output format, and latexmk's own ``-help`` and
    ``-version`` keep their single dash)."""
    if entry == "rwgate" or len(argv) != 1:
        return None
    from rwgate import __version__

    if argv[0] == "--version":
        return f"{entry} (rwgate {__version__})\n"
    if argv[0] in _HELP and entry == "rw-filter":
        return FILTER_HELP
    if argv[0] in _HELP:
        from rwgate.frontends.latex.hooks import documented_options
        from rwgate.frontends.latex.latexmk_run import usage

        return usage(documented_options())
    return None


def run_here(entry: str, argv: list[str]) -> int:
    """``entry argv`` in this process: the entry points the console scripts name, and the worker
    runs (:mod:`rwgate.runtime.worker`)."""
    if entry == "rw-filter":
        from rwgate.frontends.pandoc.filter import main as filter_main

        return filter_main(argv)
    if entry == "rw-latexmk":
        from rwgate.frontends.latex.latexmk import main as latexmk_main

        return latexmk_main(argv)
    from rwgate.frontends.cli.main import main as cli_main

    return cli_main(argv)


def _launch(entry: str) -> int:
    argv = sys.argv[1:]
    text = answer_itself(entry, argv)
    if text is not None:
        sys.stdout.write(text)
        return 0
    code = delegate(entry, argv)
    return code if code is not None else run_here(entry, argv)


def rw_filter() -> int:
    """``rw-filter FORMAT``: the pandoc JSON filter (:mod:`rwgate.frontends.pandoc.filter`)."""
    return _launch("rw-filter")


def rw_latexmk() -> int:
    """``rw-latexmk``: latexmk with the gate (:mod:`rwgate.frontends.latex.latexmk`); handed over
    only when standard input is not a terminal (see :mod:`rwgate.runtime.resident`)."""
    return _launch("rw-latexmk")


def rwgate() -> int:
    """``rwgate ...``: the command line (:mod:`rwgate.frontends.cli.main`); only its LaTeX hooks are
    handed over (:func:`rwgate.runtime.resident.accepts`)."""
    return _launch("rwgate")
