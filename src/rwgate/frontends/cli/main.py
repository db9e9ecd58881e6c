"""``rwgate``: the command line.

Sub-commands import their front end only when they run, so ``rwgate check`` never loads the MCP
SDK and ``rwgate data status`` never loads pandoc. ``rwgate verify``'s report formats and exit
codes are those of ``rwgate check``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from rwgate import __version__
from rwgate.errors import RwgateError, UsageError
from rwgate.frontends.extras import missing_extra
from rwgate.frontends.kit import (
    EXIT_GATE,
    EXIT_OK,
    EXIT_USAGE,
    add_check_options,
    flag_overrides,
    judge,
    print_error,
    record_lock,
)
from rwgate.render import FormatChoice
from rwgate.render.emit import emit


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit 2 with one line (argparse's own default is also 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _progress_printer() -> Any:
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        width = 30
        filled = int(width * done / total) if total else width
        sys.stderr.write(f"\r  checking [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done >= total:
            sys.stderr.write("\r" + " " * (width + 30) + "\r")
        sys.stderr.flush()

    return show


def _cmd_check(args: argparse.Namespace) -> int:
    from rwgate.readers.gather import gather_inputs
    from rwgate.settings.config import load_settings

    if not args.inputs and not args.doi:
        print("rwgate check: error: give a manuscript, a bibliography or --doi", file=sys.stderr)
        return EXIT_USAGE
    if args.update_lock:
        if args.since is None:
            raise UsageError("--update-lock needs --since LOCK (the lockfile to update)")
        args.lock = args.lock or args.since
    gathered = gather_inputs(args.inputs, args.doi or [])
    start = args.inputs[0] if args.inputs else None
    settings = load_settings(
        start,
        overrides=flag_overrides(args),
        metadata=gathered.metadata,
        metadata_name=f"{start}: rwgate metadata",
    )
    outputs = _outputs(args)
    result = judge(gathered.references, settings, gathered.problems, _progress_printer())
    result.project_metadata = gathered.project_metadata
    result.cited_at = gathered.cited_at
    if args.history:
        from rwgate.verdicts.history import add_history

        result = add_history(result)
    code = EXIT_USAGE if gathered.unreadable else result.exit_code
    emit(result, outputs, settings.report, args.verbose, settings.template, code)
    record_lock(result, settings)
    if gathered.unreadable:
        names = ", ".join(dict.fromkeys(gathered.unreadable))
        print(f"rwgate: exit 2: could not read {names}", file=sys.stderr)
    return code


def _outputs(args: argparse.Namespace) -> list[tuple[FormatChoice, Path | None]]:
    """``--format``/``--output`` pairs: one format may go to stdout; several need a file each."""
    formats = [FormatChoice(f) for f in args.format or ["text"]]
    files: list[Path] = args.output or []
    if len(formats) == 1 and not files:
        return [(formats[0], None)]
    if len(files) != len(formats):
        raise UsageError(
            f"{len(formats)} --format and {len(files)} --output: give one --output per --format "
            "(or one --format to standard output)"
        )
    return list(zip(formats, files, strict=True))


def _load_bibliographies(paths: list[Path]) -> tuple[list[Any], list[Any], bool]:
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


def _cmd_verify(args: argparse.Namespace) -> int:
    """The gate fails for an entry ``not_found``, an integrity status the policy fails,
    ``unverified`` where the policy fails it, and ``partial_match`` with ``--fail-on-partial``."""
    from rwgate.frontends.verify.report import build_report, fails, render_verify_text
    from rwgate.frontends.verify.verify import verify_many
    from rwgate.render.emit import emit_texts
    from rwgate.settings.config import load_settings

    cited, problems, unreadable = _load_bibliographies(args.inputs)
    overrides = flag_overrides(args)
    if args.openalex_url:
        overrides["openalex_url"] = args.openalex_url
    try:
        settings = load_settings(args.inputs[0], overrides=overrides)
        policy = settings.to_policy()
        sources = [s for s in (args.sources or "").split(",") if s.strip()] or None
        results = verify_many(cited, settings, sources) if cited else []
    except ValueError as exc:  # (an RwgateError is main's to print)
        return print_error("rwgate", RwgateError(exc))
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


def _add_verify_command(sub: Any) -> None:
    """``rwgate verify``: registering it loads none of the verification machinery (pydantic
    models, rapidfuzz, the OpenAlex client)."""
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
    p.set_defaults(func=_cmd_verify)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rwgate",
        description="Keep retracted research out of manuscripts.",
        epilog="'rwgate COMMAND --help' describes each command.",
    )
    parser.add_argument("--version", action="version", version=f"rwgate {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    check = sub.add_parser(
        "check",
        help="check the works a manuscript or bibliography cites",
        description="Check the works a manuscript or bibliography cites against Retraction "
        "Watch data. Exit status: 0 the gate passed, 1 the policy failed, 2 an input could not "
        "be read or the command line is wrong.",
    )
    check.add_argument(
        "inputs", nargs="*", type=Path, help=".md/.tex manuscript, .bib/CSL, DOI list"
    )
    check.add_argument("--doi", action="append", help="check this DOI (repeatable)")
    check.add_argument(
        "--format",
        action="append",
        choices=[c.value for c in FormatChoice],
        help="report format (repeatable, each with its own --output; default text)",
    )
    check.add_argument(
        "--output", "-o", type=Path, action="append", help="write the --format report here"
    )
    check.add_argument("--verbose", "-v", action="store_true", help="list clean citations too")
    check.add_argument(
        "--since", type=Path, metavar="LOCK", help="report and gate on what changed since LOCK"
    )
    check.add_argument("--lock", type=Path, metavar="LOCK", help="write the lockfile LOCK")
    check.add_argument(
        "--update-lock", action="store_true", help="with --since: write the new state to LOCK"
    )
    check.add_argument(
        "--no-history",
        dest="history",
        action="store_false",
        help="do not ask git when each flagged entry was added",
    )
    add_check_options(check)
    check.set_defaults(func=_cmd_check)
    _add_optional_commands(sub)
    return parser


def _add_optional_commands(sub: Any) -> None:
    """Sub-commands that live in their own modules (argparse only: each loads its machinery, the
    MCP SDK included, when it runs)."""
    from rwgate.frontends.cli.cache import add_cache_command
    from rwgate.frontends.cli.data import add_data_commands
    from rwgate.frontends.latex.command import add_latex_commands
    from rwgate.frontends.lsp.command import add_lsp_command
    from rwgate.frontends.mcp.command import add_mcp_command
    from rwgate.frontends.pandoc.install import add_pandoc_commands
    from rwgate.frontends.screen.command import add_screen_command

    add_data_commands(sub)
    add_latex_commands(sub)
    _add_verify_command(sub)
    add_mcp_command(sub)
    add_lsp_command(sub)
    add_screen_command(sub)
    add_cache_command(sub)
    add_pandoc_commands(sub)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except RwgateError as exc:  # configuration, template, output: one line, exit 2
        return print_error("rwgate", exc)
    except ImportError as exc:  # an optional extra (screen, spark, mcp) that is not installed
        error = missing_extra(exc, f"rwgate {args.command}")
        if error is None:
            raise
        return print_error("rwgate", error)
    except KeyboardInterrupt:
        print("rwgate: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader stopped early (`rwgate check ... | head`): no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python flushes at exit
        return 141  # as a tool ended by SIGPIPE reports in a shell (128 + 13)
