"""``rwgate``: the command line.

Sub-commands import their front end only when they run, so ``rwgate check`` never loads the MCP
SDK and ``rwgate data status`` never loads pandoc.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rwgate import __version__
from rwgate.vocab import STATUSES

EXIT_OK, EXIT_GATE, EXIT_USAGE = 0, 1, 2


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


def add_check_options(p: argparse.ArgumentParser) -> None:
    """Flags shared by every command that judges citations (check, verify, latexmk)."""
    p.add_argument("--policy", choices=["default", "strict", "permissive"])
    p.add_argument("--fail-on", action="append", choices=STATUSES, metavar="STATUS")
    p.add_argument(
        "--offline", action="store_true", default=None, help="no network: cache/snapshot"
    )
    p.add_argument("--no-cache", action="store_true", default=None)
    p.add_argument("--cache-dir", type=Path)
    p.add_argument("--snapshot", type=Path, help="Retraction Watch snapshot (SQLite)")
    p.add_argument("--crossref-url")
    p.add_argument(
        "--recover-dois",
        action="store_true",
        default=None,
        help="look up entries without a DOI by title; judge verified matches",
    )


def flag_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Command-line flags as the last configuration layer."""
    keys = (
        "policy",
        "fail_on",
        "offline",
        "no_cache",
        "cache_dir",
        "snapshot",
        "crossref_url",
        "recover_dois",
    )
    return {k: getattr(args, k, None) for k in keys if getattr(args, k, None) is not None}


def _cmd_check(args: argparse.Namespace) -> int:
    from rwgate.config import ConfigError, load_settings
    from rwgate.core import check
    from rwgate.references.gather import gather_inputs
    from rwgate.render.annotate import TemplateProblem
    from rwgate.render.report import render_text

    if not args.inputs and not args.doi:
        print("rwgate check: error: give a manuscript, a bibliography or --doi", file=sys.stderr)
        return EXIT_USAGE
    gathered = gather_inputs(args.inputs, args.doi or [])
    start = args.inputs[0] if args.inputs else None
    try:
        settings = load_settings(
            start,
            overrides=flag_overrides(args),
            metadata=gathered.metadata,
            metadata_name=f"{start}: rwgate metadata",
        )
    except ConfigError as exc:
        print(f"rwgate: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    result = check(gathered.references, settings, _progress_printer(), gathered.problems)
    code = EXIT_USAGE if gathered.unreadable else result.exit_code
    report = result.report().model_copy(update={"exit_code": code})
    try:
        structured: str | None = None  # SARIF or JUnit, rendered from the same result as the JSON
        if args.format in ("sarif", "junit"):
            from rwgate.render.junit import render_junit
            from rwgate.render.sarif import render_sarif

            renderer = render_sarif if args.format == "sarif" else render_junit
            structured = renderer(result, settings.template)
        if not emit_report(
            args,
            report.to_json(),
            lambda colour: render_text(result, colour, args.verbose, settings.template),
            settings.report,
            structured,
        ):
            return EXIT_USAGE
    except TemplateProblem as exc:  # a user's template that names a value that is not there
        print(f"rwgate: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if gathered.unreadable:
        names = ", ".join(dict.fromkeys(gathered.unreadable))
        print(f"rwgate: exit 2: could not read {names}", file=sys.stderr)
    return code


def emit_report(
    args: argparse.Namespace,
    json_text: str,
    render: Callable[[bool], str],
    also: Path | None = None,
    structured: str | None = None,
) -> bool:
    """The ``--format`` output (JSON, or ``structured``: SARIF/JUnit) to ``--output`` or stdout; the
    ``report`` setting always gets JSON. The human text to stdout, or to stderr when stdout carries
    the structured output. Colour only on a terminal, and never with ``NO_COLOR``.
    False (after a one-line error) when a report file cannot be written."""
    from rwgate.fsutil import write_atomic

    machine = args.format != "text"
    text = json_text if structured is None else structured
    report_path = args.output if machine else None
    colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    if not machine or report_path is not None:
        (sys.stderr if machine else sys.stdout).write(render(colour))
    else:
        sys.stdout.write(text + "\n")
    files = {Path(also): json_text} if also is not None else {}
    if report_path is not None:
        files[Path(report_path)] = text
    for path, data in files.items():
        try:
            write_atomic(path, data + "\n")
        except OSError as exc:
            print(f"rwgate: error: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
            return False
    return True


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rwgate", description="Keep retracted research out of manuscripts.")
    parser.add_argument("--version", action="version", version=f"rwgate {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    check = sub.add_parser("check", help="check the works a manuscript or bibliography cites")
    check.add_argument(
        "inputs", nargs="*", type=Path, help=".md/.tex manuscript, .bib/CSL, DOI list"
    )
    check.add_argument("--doi", action="append", help="check this DOI (repeatable)")
    check.add_argument("--format", choices=["text", "json", "sarif", "junit"], default="text")
    check.add_argument("--output", "-o", type=Path, help="write the --format report here")
    check.add_argument("--verbose", "-v", action="store_true", help="list clean citations too")
    add_check_options(check)
    check.set_defaults(func=_cmd_check)
    _add_optional_commands(sub)
    return parser


def _add_optional_commands(sub: Any) -> None:
    """Sub-commands that live in their own modules (argparse only: each loads its machinery, the
    MCP SDK included, when it runs)."""
    from rwgate.datacmd import add_data_commands
    from rwgate.latex.command import add_latex_commands
    from rwgate.mcp.command import add_mcp_command
    from rwgate.verify.command import add_verify_command

    add_data_commands(sub)
    add_latex_commands(sub)
    add_verify_command(sub)
    add_mcp_command(sub)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from rwgate.config_files import ConfigError  # no Pydantic: `rwgate bibtex` starts often

    try:
        return int(args.func(args))
    except ConfigError as exc:
        print(f"rwgate: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("rwgate: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
