"""``rwgate data import|update|status|export``: managing the local Retraction Watch snapshot.

The only place a user touches the snapshot directly, so each says plainly what happened
(:data:`_DATA_HELP`). Each imports its machinery when it runs: building rwgate's parser must stay
cheap, because latexmk starts `rwgate bibtex` several times per build.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rwgate.settings.paths import DEFAULT_RW_CSV_URL, default_snapshot_path

if TYPE_CHECKING:
    from rwgate.settings.config import Settings
    from rwgate.sources.snapshot.info import ProvenanceEntry, SnapshotStatus
    from rwgate.sources.snapshot.source import ImportResult, ImportSource


def _err(message: str) -> int:
    """``rwgate: error: MESSAGE`` on standard error; the exit code 2."""
    print(f"rwgate: error: {message}", file=sys.stderr)
    return 2


def snapshot_path(args: argparse.Namespace) -> Path:
    """``--snapshot`` when given (here or on the main parser), else the configured location."""
    given = getattr(args, "snapshot", None)
    if given:
        return Path(given).expanduser()
    return Path(_settings().snapshot or default_snapshot_path())


def _settings() -> Settings:
    from rwgate.settings.config import load_settings

    return load_settings(Path.cwd())


def _print_import(result: ImportResult) -> None:
    for item in result.sources:
        if item.unchanged:
            print(f"unchanged: {item.source} (already imported, sha256 {(item.sha256 or '')[:12]})")
            continue
        export = f", data as of {item.export_date}" if item.export_date else ""
        skipped = f", {item.skipped} skipped" if item.skipped else ""
        what = {
            "retraction-watch-export": "; a full export: the registry of record",
            "retraction-watch-csv": "; an extract (not whole, or under the row floor): its notices"
            " are added, works it does not list stay unverified offline",
        }.get(item.kind or "", "")
        print(f"imported {item.rows} record(s) from {item.source}{skipped}{export}{what}")
    for problem in result.skipped:
        print(f"skipped: {problem}")
    for problem in result.failed:
        _err(str(problem))


def _import(
    path: Path,
    files: Sequence[Path | ImportSource],
    allow_shrink: bool = False,
    require_full: bool = False,
) -> ImportResult | None:
    """Run the import and print what happened; ``None`` (error printed) if the snapshot failed."""
    import sqlite3

    from rwgate.sources.snapshot.source import SnapshotError, import_files

    try:
        result = import_files(path, files, allow_shrink=allow_shrink, require_full=require_full)
    except SnapshotError as exc:
        _err(str(exc))
        return None
    except (OSError, sqlite3.Error) as exc:  # an unwritable folder, a full disk
        _err(f"cannot write the snapshot {path}: {getattr(exc, 'strerror', None) or exc}")
        return None
    _print_import(result)
    return result


SAMPLE_NOTE = (
    "rwgate: the bundled SAMPLE (9 Retraction Watch rows, 6 Crossref records), not the full"
    " database: it never makes a work it does not list clean; `rwgate data update` fetches the"
    " whole of it"
)


def sample_sources() -> list[ImportSource]:
    """The sample data shipped in the package (``rwgate/sample``), each named ``sample:PATH``
    in the snapshot's provenance, so ``data status`` and every report say it is the sample."""
    from rwgate.sources.snapshot.source import ImportSource

    folder = Path(__file__).resolve().parents[2] / "sample"
    files = [folder / "retraction-watch" / "rw-sample.csv"]
    files += sorted((folder / "crossref").glob("*.json"))
    return [ImportSource(f, url=f"sample:{f.relative_to(folder).as_posix()}") for f in files]


def cmd_import(args: argparse.Namespace) -> int:
    """Import CSV files and Crossref JSON bodies (or the bundled sample); 2 when any file could
    not be read."""
    path = snapshot_path(args)
    if not args.files and not args.sample:
        return _err("data import: give FILE(s) to import, or --sample for the bundled sample")
    rows, failed = 0, False
    if args.sample:
        print(SAMPLE_NOTE)
        # Never a full export, whatever --allow-shrink says: a sample is an extract.
        result = _import(path, sample_sources())
        if result is None:
            return 2
        rows, failed = result.rows, bool(result.failed)
    if args.files:
        result = _import(path, [Path(f) for f in args.files], args.allow_shrink)
        if result is None:
            return 2
        rows, failed = rows + result.rows, failed or bool(result.failed)
    print(f"snapshot: {path} ({rows} record(s) imported now)")
    return 2 if failed else 0


def _last_download(path: Path, url: str) -> ProvenanceEntry | None:
    """The last import of ``url``; raises SnapshotError before a download that could not land."""
    from rwgate.sources.snapshot.source import Snapshot

    if not path.exists():
        return None
    with Snapshot(path) as snap:
        entries = [p for p in snap.provenance() if p.source == url]
    return entries[-1] if entries else None


def cmd_update(args: argparse.Namespace) -> int:
    """Download the current CSV (conditionally, resumably) and import it; with ``--preprints``,
    harvest the preprint withdrawals instead (:func:`cmd_update_preprints`)."""
    if getattr(args, "preprints", False):
        return cmd_update_preprints(args)
    from rwgate.sources.snapshot.download import (
        DownloadError,
        TerminalProgress,
        discard_part,
        download,
    )
    from rwgate.sources.snapshot.source import ImportSource, SnapshotError

    path = snapshot_path(args)
    # The invoking user's choice only (flag or environment): a mirror, or a loopback fake in tests.
    url: str = args.url or os.environ.get("RWGATE_RW_CSV_URL", "").strip() or DEFAULT_RW_CSV_URL
    try:
        last = _last_download(path, url)
    except SnapshotError as exc:
        return _err(str(exc))
    progress = TerminalProgress()
    try:
        got = download(
            url,
            path.parent,
            etag=last.etag if last else None,
            last_modified=last.last_modified if last else None,
            progress=progress,
        )
    except DownloadError as exc:
        progress.finish()
        return _err(str(exc))
    progress.finish()
    if got.path is None:
        when = f" (last import {last.imported_at:%Y-%m-%d})" if last else ""
        print(f"not modified: {url}{when}; snapshot unchanged")
        return 0
    if got.resumed_from:
        print(f"resumed download at byte {got.resumed_from}")
    source = ImportSource(got.path, url=url, etag=got.etag, last_modified=got.last_modified)
    # A download must be the whole export: anything less is refused and changes nothing.
    result = _import(path, [source], allow_shrink=args.allow_shrink, require_full=True)
    discard_part(url, path.parent)  # imported or refused, a finished download is not resumed
    if result is None:
        return 2
    print(f"snapshot: {path}")
    return 2 if result.failed else 0


def cmd_update_preprints(args: argparse.Namespace) -> int:
    """Harvest withdrawn arXiv, bioRxiv and medRxiv preprints into the snapshot, each part from
    its last harvest on; 2 when a part was cut short (what it found still lands, its date not)."""
    import sqlite3

    from rwgate.errors import RwgateError
    from rwgate.sources.arxiv import ArxivSource
    from rwgate.sources.biorxiv import BiorxivSource
    from rwgate.sources.snapshot import preprints as tables
    from rwgate.sources.snapshot.store import updating

    path = snapshot_path(args)
    settings = _settings()
    now = dt.datetime.now(dt.UTC)
    try:
        since, known = tables.last_harvest(path)
    except (RwgateError, sqlite3.Error) as exc:
        return _err(str(exc))
    arxiv = ArxivSource(settings.arxiv_url, settings.arxiv_oai_url, timeout=settings.timeout)
    biorxiv = BiorxivSource(settings.biorxiv_url, settings.timeout)
    harvests = [tables.harvest_arxiv(arxiv, since.get("arxiv"), now.date(), known["arxiv"])]
    for server in ("biorxiv", "medrxiv"):
        harvests.append(
            tables.harvest_biorxiv(biorxiv, server, since.get(server), now.date(), known[server])
        )
    try:
        with updating(path, now) as conn:
            for harvest in harvests:
                tables.store(conn, harvest, now)
    except (OSError, sqlite3.Error) as exc:
        return _err(f"cannot write the snapshot {path}: {getattr(exc, 'strerror', None) or exc}")
    for harvest in harvests:
        _print_harvest(harvest)
    print(f"snapshot: {path}")
    return 2 if any(h.error for h in harvests) else 0


def _print_harvest(harvest: Any) -> None:
    found = f"{len(harvest.withdrawn)} withdrawal(s) seen, {len(harvest.live)} lifted"
    if harvest.error:
        _err(
            f"{harvest.part}: cut short after {harvest.requests} request(s): {harvest.error};"
            f" {found} kept, the part's date unchanged (run it again)"
        )
        return
    print(
        f"{harvest.part}: {found}, harvested through {harvest.through}"
        f" ({harvest.requests} request(s))"
    )


def _status_lines(status: SnapshotStatus) -> list[str]:
    lines = [
        f"snapshot: {status.path}",
        f"schema: {status.schema_version}",
        f"notices: {status.notices} (works with notices: {status.works})",
        f"newest notice: {status.newest_notice or 'none'}",
        "registry: yes (a full Retraction Watch export: unlisted works are clean offline)"
        if status.registry
        else "registry: no (extracts only: unlisted works stay unverified offline)",
    ]
    if status.as_of is not None:
        lines.append(f"data as of: {status.as_of} ({status.age_days} days old)")
    if status.updated is not None:
        lines.append(f"last import: {status.updated:%Y-%m-%d %H:%M} UTC")
    for part in status.preprints:
        lines.append(
            f"preprints {part.part}: {part.withdrawals} withdrawal(s), harvested through"
            f" {part.through or 'never (cut short)'}"
            + (f" ({part.age_days} days old)" if part.age_days is not None else "")
            + f", last run {part.harvested_at:%Y-%m-%d %H:%M} UTC"
        )
    lines.append("sources:")
    for entry in status.provenance:
        lines.append(
            f"  - {entry.source}: {entry.kind}, {entry.rows} record(s), "
            f"{entry.skipped} skipped, data as of {entry.export_date or 'unknown'}, "
            f"imported {entry.imported_at:%Y-%m-%d %H:%M}, sha256 {entry.sha256[:12]}"
        )
    return lines


def cmd_status(args: argparse.Namespace) -> int:
    """Where the snapshot is, what it holds, how old it is; exit 0 also when there is none."""
    from rwgate.sources.snapshot.source import SnapshotError, snapshot_status

    path = snapshot_path(args)
    max_age = getattr(args, "max_age_days", None)
    max_age = _settings().max_snapshot_age_days if max_age is None else max_age
    try:
        status = snapshot_status(path, now=dt.datetime.now(dt.UTC))
    except SnapshotError as exc:
        return _err(str(exc))
    warnings: list[str] = []  # the age warning, in the text and the JSON output
    if status.exists and status.age_days is not None and status.age_days > max_age:
        warnings.append(
            f"snapshot data is {status.age_days} days old (more than {max_age}); "
            "run `rwgate data update`"
        )
    if getattr(args, "json", False):
        data: dict[str, Any] = status.model_dump(mode="json")
        data["max_age_days"] = max_age
        data["warnings"] = warnings
        print(json.dumps(data, indent=2))
        return 0
    if not status.exists:
        print(f"no snapshot at {path}; run `rwgate data import FILE` or `rwgate data update`")
        return 0
    print("\n".join(_status_lines(status)))
    for warning in warnings:
        print(f"WARNING: {warning}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """The verdict table (``rwgate check``'s verdict on every work the snapshot knows) as Parquet.

    Written through DuckDB to a temporary name and renamed, so a reader never sees half a file.
    """
    from rwgate.errors import RwgateError
    from rwgate.frontends.screen.verdicts import build, write_parquet

    path = snapshot_path(args)
    try:
        table = build(path)
        write_parquet(table, Path(args.output))
    except RwgateError as exc:
        return _err(str(exc))
    except ImportError:
        return _err("`rwgate data export` needs DuckDB: pip install 'rwgate[screen]'")
    except OSError as exc:
        return _err(f"cannot write {args.output}: {exc.strerror or exc}")
    full = "a full export" if table.full_export else "no full export: unlisted works unverified"
    print(f"exported {len(table.rows)} verdict(s) of {path} ({full}) to {args.output}")
    return 0


def _snapshot_option(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS keeps a --snapshot given to the main parser from being reset by this sub-parser.
    parser.add_argument(
        "--snapshot",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="snapshot file (default: $RWGATE_SNAPSHOT or the user data directory)",
    )


_DATA_HELP = (
    "Manage the local Retraction Watch snapshot, which lets checks run offline. Each command "
    "says what happened: rows imported, rows skipped (with file and line), files that could not "
    "be read, whether a download was unchanged, and how old the data is. Exit status: 0 done, "
    "2 bad input or no network (the other files of an import still land)."
)


def add_data_commands(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``data import|update|status|export`` on the main parser's sub-parsers."""
    data = subparsers.add_parser(
        "data", help="manage the local Retraction Watch snapshot", description=_DATA_HELP
    )
    commands = data.add_subparsers(dest="data_command", metavar="COMMAND", required=True)

    imp = commands.add_parser("import", help="import Retraction Watch CSV / Crossref JSON files")
    imp.add_argument("files", nargs="*", metavar="FILE")
    imp.add_argument(
        "--sample",
        action="store_true",
        help="import the bundled sample (9 Retraction Watch rows, 6 Crossref records: an"
        " extract, which never makes an unlisted work clean), e.g. to try rwgate offline",
    )
    imp.add_argument(
        "--allow-shrink",
        action="store_true",
        help="take a whole CSV as a full export even under the row floor (30,000 rows, or 95%%"
        " of the previous export)",
    )
    _snapshot_option(imp)
    imp.set_defaults(func=cmd_import)

    upd = commands.add_parser(
        "update",
        help="download the current Retraction Watch CSV (or, with --preprints, harvest"
        " preprint withdrawals)",
    )
    upd.add_argument(
        "--preprints",
        action="store_true",
        help="harvest withdrawn arXiv (OAI-PMH, at arXiv's pace of one request per 3 s),"
        " bioRxiv and medRxiv preprints into the snapshot, each from its last harvest on"
        " ($RWGATE_ARXIV_OAI_URL, $RWGATE_BIORXIV_URL choose the servers)",
    )
    upd.add_argument(
        "--url",
        default=None,
        help=f"CSV to download (default: $RWGATE_RW_CSV_URL or {DEFAULT_RW_CSV_URL})",
    )
    upd.add_argument(
        "--allow-shrink",
        action="store_true",
        help="accept a download under 95%% of the previous export's rows",
    )
    _snapshot_option(upd)
    upd.set_defaults(func=cmd_update)

    stat = commands.add_parser("status", help="where the snapshot is, its provenance and age")
    stat.add_argument("--json", action="store_true", help="machine-readable output")
    stat.add_argument(
        "--max-age-days",
        type=int,
        default=None,
        help="warn when the data is older than this (default: max_snapshot_age_days, 30)",
    )
    _snapshot_option(stat)
    stat.set_defaults(func=cmd_status)

    exp = commands.add_parser(
        "export", help="the verdict of every work the snapshot knows, as a table (Parquet)"
    )
    exp.add_argument("--format", choices=["parquet"], default="parquet")
    exp.add_argument("--output", "-o", required=True, metavar="FILE")
    _snapshot_option(exp)
    exp.set_defaults(func=cmd_export)
    return data


def main(argv: Sequence[str] | None = None) -> int:
    """The data commands on their own (tests)."""
    parser = argparse.ArgumentParser(prog="rwgate")
    add_data_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))
