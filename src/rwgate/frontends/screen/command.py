"""``rwgate screen REFERENCES... --out DIR``: the command line of a corpus screen (its contract:
:data:`DESCRIPTION`; exit codes as ``rwgate check``'s)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rwgate.contract.vocab import counted
from rwgate.errors import RwgateError
from rwgate.frontends.extras import MissingExtra

DESCRIPTION = """\
Screen a corpus of references (OpenCitations, the Crossref data file, your own tables) by the
rules of rwgate check. Outputs in --out DIR: flagged.parquet, citing.parquet, summary.json and
summary.html. Exit 0 when screened (flagged citations are findings), 2 when an input, the
snapshot or an output cannot be used (one line naming it).

A table's columns are found by flag (--doi-column NAME, or --column doi=NAME), else by their own
names (citing, cited_doi, cited_pmid, citing_date), else by one common name per role (doi,
reference_doi, pmid, date, year, ...). A missing or doubtful column, or a DOI column that holds
no DOIs, stops the screen with one line naming the flag to use.
"""


def _snapshot_and_cache(args: argparse.Namespace) -> tuple[Path, Path | None]:
    """The snapshot, and the cache folder its verdict table is kept in (None: ``no_cache``):
    the invoking user's (flags, environment, configuration file), never a project's."""
    from rwgate.settings.config import load_settings
    from rwgate.settings.paths import default_snapshot_path

    settings = load_settings(Path.cwd())
    cache = None if settings.no_cache else settings.cache_folder
    given = getattr(args, "snapshot", None)
    if given:
        return Path(given).expanduser(), cache
    return Path(settings.snapshot or default_snapshot_path()), cache


def _given(args: argparse.Namespace) -> dict[str, str | None]:
    """The columns the user named: ``--column ROLE=NAME`` and the one-role flags (the latter win
    when both name a role; ``''`` asks for none)."""
    from rwgate.frontends.screen.columns import parse_column_flags

    given: dict[str, str | None] = dict(parse_column_flags(args.column or []))
    for role in ("citing", "doi", "pmid", "date"):
        value = getattr(args, f"{role}_column")
        if value is not None:
            given[role] = value
    return given


def _works(n: int) -> str:
    return f"{n} citing work{'' if n == 1 else 's'}"


def _counts_line(s: dict[str, Any]) -> str:
    """The counts in ``rwgate check``'s words: flagged as check flags, corrections apart."""
    after = s["cited_after_notice"]
    after_text = "not known" if after is None else str(after)
    line = (
        f"screened {s['references']} references of {_works(s['citing_works'])}:"
        f" {s['flagged']} flagged ({_works(s['citing_works_flagged'])}),"
        f" cited after the notice {after_text}, {s['unverified']} unverified"
    )
    quiet = [f"{n} {counted(st)}" for st, n in s["corrections_by_status"].items()]
    if quiet:
        line += f", {', '.join(quiet)} (no action, as in rwgate check)"
    return line


def _columns_lines(summary: dict[str, Any]) -> list[str]:
    out = []
    for entry in summary["columns"]:
        if entry["shape"] != "table":
            continue
        cols, how = entry["columns"], entry["found"]
        bits = [
            f"{what} {cols[role]!r} ({how[role]})" if cols[role] else f"{what}: none"
            for role, what in (("citing", "citing work"), ("doi", "DOI"),
                               ("pmid", "PubMed id"), ("date", "citing date"))
        ]  # fmt: skip
        out.append(f"columns of {entry['files'][0]}: " + ", ".join(bits))
    return out


def _where(r: dict[str, Any]) -> str:
    if r.get("line") is not None:
        return f"{r['file']} line {r['line']}"
    return f"{r['file']}" + (f" row {r['row']}" if r["row"] is not None else "")


def _bad_lines(bad: dict[str, Any]) -> list[str]:
    out = []
    for reason in bad["by_reason"]:
        shown = "; ".join(f"{_where(r)}: {r['value']!r}" for r in reason["sample"][:3])
        out.append(f"{reason['count']} unusable row(s): {reason['reason']}, e.g. {shown}")
    return out


def cmd_screen(args: argparse.Namespace) -> int:
    if args.engine == "spark":  # missing: rwgate's main names the extra, in one line
        import pyspark  # noqa: F401
    from rwgate.frontends.screen.run import ScreenOptions, screen

    try:
        snapshot, cache = _snapshot_and_cache(args)
        opts = ScreenOptions(
            inputs=args.references,
            out=Path(args.out),
            snapshot=snapshot,
            cache=cache,
            input_format=args.input_format,
            columns=_given(args),
            engine=args.engine,
            master=args.master,
            memory_limit=args.memory_limit,
            threads=args.threads,
            temp_dir=Path(args.temp_dir) if args.temp_dir else None,
            all_citations=args.all_citations,
            encoding=args.encoding,
            delimiter=args.delimiter,
            quote=args.quote,
            list_separator=args.list_separator,
        )
        result = screen(opts)
    except MissingExtra:
        raise
    except RwgateError as exc:
        print(f"rwgate screen: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        name = getattr(exc, "filename", None) or args.out
        print(f"rwgate screen: error: {name}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    summary = result.summary
    print(_counts_line(summary["summary"]))
    for f in summary["files"]:  # every record of every file accounted for
        counts = f"{f['records']} records read, {f['screened']} screened, {f['unusable']} unusable"
        print(f"{f['file']}: {counts}")
    for line in _columns_lines(summary) + _bad_lines(summary["bad_rows"]):
        print(line)
    for warning in summary["warnings"]:
        print(f"WARNING: {warning}")
    print(f"outputs in {opts.out}: " + ", ".join(p.name for p in result.outputs.values()))
    return 0


def add_screen_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``screen`` on the main parser's sub-parsers (its machinery loads when it runs)."""
    p = subparsers.add_parser(
        "screen",
        help="screen a corpus of references (OpenCitations, Crossref dumps, tables)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("references", nargs="+", metavar="REFERENCES", help="files or globs")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the outputs")
    p.add_argument(
        "--input-format",
        choices=["auto", "table", "opencitations", "crossref"],
        default="auto",
        help="what the files are (default: told by their header/first record)",
    )
    p.add_argument(
        "--column",
        action="append",
        metavar="ROLE=NAME",
        help="generic table: the column of a role (citing, doi, pmid, date; NAME '' for none)",
    )
    p.add_argument("--citing-column", metavar="NAME", help="generic table: citing work column")
    p.add_argument("--doi-column", metavar="NAME", help="generic table: cited DOI column")
    p.add_argument("--pmid-column", metavar="NAME", help="cited PubMed id column ('' none)")
    p.add_argument("--date-column", metavar="NAME", help="citing date column ('' none)")
    p.add_argument(
        "--encoding",
        metavar="NAME",
        help="CSV encoding: utf-8 (default; a BOM is read), utf-16 (told by its BOM),"
        " windows-1252, latin-1",
    )
    p.add_argument("--delimiter", metavar="CHAR", help="CSV delimiter (default: DuckDB sniffs it)")
    p.add_argument("--quote", metavar="CHAR", help="CSV quote (default: DuckDB's sniff, else \")")
    p.add_argument(
        "--list-separator",
        metavar="SEP",
        help="a DOI or PubMed id cell holding many, split at SEP (e.g. ';'): one reference each",
    )
    p.add_argument("--engine", choices=["duckdb", "spark"], default="duckdb")
    p.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    p.add_argument("--memory-limit", default="3GB", help="DuckDB memory limit (default 3GB)")
    p.add_argument("--threads", type=int, default=None, help="DuckDB threads (default: all)")
    p.add_argument("--temp-dir", default=None, help="where DuckDB spills beyond its memory")
    p.add_argument(
        "--all-citations",
        action="store_true",
        help="also write citations.parquet: the verdict of every reference",
    )
    p.add_argument(
        "--snapshot",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="snapshot file (default: $RWGATE_SNAPSHOT or the user data directory)",
    )
    p.set_defaults(func=cmd_screen)
    return p
