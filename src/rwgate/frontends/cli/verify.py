"""``rwgate verify refs.bib``: does every entry exist, does it match, and is it retracted?

Report formats and exit codes are those of ``rwgate check``: text (or ``--format json``, the
``rwgate.frontends.verify/1`` report, also written to ``-o`` and the ``report`` setting); exit 0
when the
gate passes, 1 when it fails, 2 for bad usage or unreadable input. The gate fails for an entry
that is ``not_found`` (the work does not exist as cited), for an integrity status the policy
fails (``--policy strict`` fails retracted works), for ``unverified`` where the policy fails
unverified works, and for ``partial_match`` with ``--fail-on-partial``.

Registering the sub-command must not load the verification machinery (pydantic models, rapidfuzz,
the OpenAlex client): every ``rwgate`` start builds this parser.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rwgate.errors import RwgateError
from rwgate.frontends.kit import EXIT_GATE, EXIT_OK, EXIT_USAGE, add_check_options, print_error


def _load(paths: list[Path]) -> tuple[list[Any], list[Any], bool]:
    from rwgate.contract.models import Problem
    from rwgate.readers import load_bibliography

    cited: list[Any] = []
    problems: list[Problem] = []
    unreadable = False
    for path in paths:
        try:
            bib = load_bibliography(path)
        except (RwgateError, OSError, ValueError) as exc:
            problems.append(Problem(message=str(exc), severity="error"))
            unreadable = True
            continue
        problems += bib.problems
        cited += bib.references  # read as the check reads them: one reading of each entry
    return cited, problems, unreadable


def run_verify(args: argparse.Namespace) -> int:
    from rwgate.frontends.kit import flag_overrides
    from rwgate.frontends.verify.render import render_verify_text
    from rwgate.frontends.verify.report import build_report, fails
    from rwgate.frontends.verify.verify import verify_many
    from rwgate.render.emit import emit_texts
    from rwgate.settings.config import load_settings

    cited, problems, unreadable = _load(args.inputs)
    overrides = flag_overrides(args)
    if args.openalex_url:
        overrides["openalex_url"] = args.openalex_url
    try:
        settings = load_settings(args.inputs[0], overrides=overrides)
        policy = settings.to_policy()
        sources = [s for s in (args.sources or "").split(",") if s.strip()] or None
        results = verify_many(cited, settings, sources) if cited else []
    except (RwgateError, ValueError) as exc:
        return print_error("rwgate", exc if isinstance(exc, RwgateError) else RwgateError(exc))
    failed = sum(fails(r, policy, args.fail_on_partial) for r in results)
    code = EXIT_USAGE if unreadable else (EXIT_GATE if failed else EXIT_OK)
    report = build_report(results, problems, code, failed)
    json_text = report.to_json()
    machine = args.format == "json"
    files = [(settings.report, json_text)] if settings.report is not None else []
    if machine and args.output is not None:
        files.append((args.output, json_text))
    emit_texts(
        json_text if machine and args.output is None else None,
        lambda colour: render_verify_text(report, colour, args.verbose),
        machine,
        files,
    )
    return code


def add_verify_command(sub: Any) -> None:
    p = sub.add_parser(
        "verify",
        help="check that every cited work exists and matches its entry",
        description="Check that every entry of a bibliography names a real work (Crossref and "
        "OpenAlex) and matches it (title, authors, year, venue), with the integrity status of "
        "each match. Exit status: 0 all verified, 1 a work not found or failing the policy, 2 "
        "bad usage.",
    )
    p.add_argument("inputs", nargs="+", type=Path, help=".bib or CSL bibliography")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--output", "-o", type=Path, help="write the JSON report here")
    p.add_argument("--verbose", "-v", action="store_true", help="show BibTeX of every match")
    p.add_argument("--sources", help="comma-separated: crossref,openalex (default both)")
    p.add_argument("--openalex-url", help="OpenAlex API base URL (tests, mirrors)")
    p.add_argument("--fail-on-partial", action="store_true", help="partial matches fail the gate")
    add_check_options(p)
    p.set_defaults(func=run_verify)
