"""``rwgate screen REFERENCES... --out DIR``: the command line of a corpus screen.

Exit codes follow ``rwgate check``: 0 screened (flagged citations are findings, not failures of
the run), 2 an input, the snapshot or an output that could not be used (one line naming it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rwgate.errors import RwgateError


def _snapshot(args: argparse.Namespace) -> Path:
    given = getattr(args, "snapshot", None)
    if given:
        return Path(given).expanduser()
    from rwgate.config import load_settings
    from rwgate.paths import default_snapshot_path

    return Path(load_settings(Path.cwd()).snapshot or default_snapshot_path())


def cmd_screen(args: argparse.Namespace) -> int:
    from rwgate.screen.inputs import Mapping
    from rwgate.screen.run import ScreenOptions, screen

    opts = ScreenOptions(
        inputs=args.references,
        out=Path(args.out),
        snapshot=_snapshot(args),
        input_format=args.input_format,
        mapping=Mapping(
            citing=args.citing_column,
            cited_doi=args.doi_column,
            cited_pmid=args.pmid_column or None,
            citing_date=args.date_column or None,
        ),
        engine=args.engine,
        master=args.master,
        memory_limit=args.memory_limit,
        threads=args.threads,
        temp_dir=Path(args.temp_dir) if args.temp_dir else None,
        all_citations=args.all_citations,
    )
    try:
        result = screen(opts)
    except RwgateError as exc:
        print(f"rwgate screen: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        name = getattr(exc, "filename", None) or opts.out
        print(f"rwgate screen: error: {name}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    s = result.summary["summary"]
    bad = result.summary["bad_rows"]
    print(
        f"screened {s['references']} references of {s['citing_works']} citing works:"
        f" {s['flagged']} flagged ({s['citing_works_flagged']} citing works),"
        f" {s['cited_after_notice']} cited after the notice, {s['unverified']} unverified"
    )
    if bad["count"]:
        print(f"{bad['count']} unusable row(s), e.g. " + "; ".join(bad["sample"][:3]))
    for warning in result.summary["warnings"]:
        print(f"WARNING: {warning}")
    print(f"outputs in {opts.out}: " + ", ".join(p.name for p in result.outputs.values()))
    return 0


def add_screen_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``screen`` on the main parser's sub-parsers (its machinery loads when it runs)."""
    p = subparsers.add_parser(
        "screen",
        help="screen a corpus of references (OpenCitations, Crossref dumps, tables)",
        description=__doc__,
    )
    p.add_argument("references", nargs="+", metavar="REFERENCES", help="files or globs")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the outputs")
    p.add_argument(
        "--input-format",
        choices=["auto", "table", "opencitations", "crossref"],
        default="auto",
        help="what the files are (default: told by their header/first record)",
    )
    p.add_argument("--citing-column", default="citing", help="generic table: citing work column")
    p.add_argument("--doi-column", default="cited_doi", help="generic table: cited DOI column")
    p.add_argument("--pmid-column", default="cited_pmid", help="cited PubMed id column ('' none)")
    p.add_argument("--date-column", default="citing_date", help="citing date column ('' none)")
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
