"""``rwgate verify``: its command line only.

Registering the sub-command must not load the verification machinery (pydantic models, rapidfuzz,
the OpenAlex client): every ``rwgate`` start builds this parser. :mod:`rwgate.verify.run` does the
work.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def _run(args: argparse.Namespace) -> int:
    from rwgate.verify.run import run_verify

    return run_verify(args)


def add_verify_command(sub: Any) -> None:
    from rwgate.cli import add_check_options

    p = sub.add_parser("verify", help="check that every cited work exists and matches its entry")
    p.add_argument("inputs", nargs="+", type=Path, help=".bib or CSL bibliography")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--output", "-o", type=Path, help="write the JSON report here")
    p.add_argument("--verbose", "-v", action="store_true", help="show BibTeX of every match")
    p.add_argument("--sources", help="comma-separated: crossref,openalex (default both)")
    p.add_argument("--openalex-url")
    p.add_argument("--fail-on-partial", action="store_true", help="partial matches fail the gate")
    add_check_options(p)
    p.set_defaults(func=_run)
