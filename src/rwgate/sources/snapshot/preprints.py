"""Preprint withdrawals in the local snapshot: the harvest that fills them (``rwgate data update
--preprints``), the tables that hold them, and the offline source that answers from them.

Two tables, added beside the Retraction Watch ones (an rwgate that does not know them ignores
them, so the schema version stays)::

    preprint_withdrawals(server TEXT,   'arxiv', 'biorxiv' or 'medrxiv'
                         ident TEXT,    arXiv id without version, or the canonical DOI
                         version INTEGER, date TEXT (ISO), reason TEXT, title TEXT,
                         published_doi TEXT, PRIMARY KEY (server, ident))
    preprint_parts(part TEXT PRIMARY KEY, source TEXT, harvested_at TEXT (ISO, UTC),
                   through TEXT (ISO date: harvested up to; the next ``from``), rows INTEGER)

Each part is harvested on its own, from its last harvest on, and says how old it is: a snapshot
whose arXiv part is a year old still answers for arXiv, and ``data status`` says so. A preprint
whose latest version is withdrawn is kept with its date, version and reason; one whose withdrawal
was lifted (a new version) is dropped. A harvest cut short (the server down past the retries, an
answer that does not validate) keeps what it found but not its date: the next one starts from
the same ``from`` again.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rwgate.contract.doi import try_normalize
from rwgate.contract.models import Lookup, Notice, SourceInfo
from rwgate.settings.config import Settings
from rwgate.settings.paths import default_snapshot_path
from rwgate.sources.arxiv import ArxivSource, oai_answer
from rwgate.sources.biorxiv import BiorxivSource, details, withdrawal_of
from rwgate.sources.cache import Cache
from rwgate.sources.interface import IdKind, IntegritySource, Progress
from rwgate.sources.net.http import GaveUp
from rwgate.sources.paced import PacedSource
from rwgate.sources.preprint_ids import arxiv_of_doi, biorxiv_doi
from rwgate.sources.snapshot.schema import check_schema, connect_ro

SCHEMA = """
CREATE TABLE IF NOT EXISTS preprint_withdrawals (
    server TEXT NOT NULL, ident TEXT NOT NULL, version INTEGER, date TEXT, reason TEXT,
    title TEXT, published_doi TEXT, PRIMARY KEY (server, ident));
CREATE TABLE IF NOT EXISTS preprint_parts (
    part TEXT PRIMARY KEY, source TEXT NOT NULL, harvested_at TEXT NOT NULL, through TEXT,
    rows INTEGER NOT NULL);
"""
PARTS = ("arxiv", "biorxiv", "medrxiv")
FIRST_DAY = {"biorxiv": dt.date(2013, 11, 1), "medrxiv": dt.date(2019, 6, 1)}
"""When each server opened: a first harvest starts there."""
NAME = "preprint_withdrawals"


class PreprintPart(BaseModel):
    """One harvested part of the snapshot, as ``data status`` lists it."""

    part: str
    source: str
    harvested_at: dt.datetime
    through: dt.date | None = None
    withdrawals: int = 0
    age_days: int | None = None


class Harvested(BaseModel):
    """What one harvest of one part brought (complete or cut short)."""

    part: str
    source: str
    withdrawn: list[tuple[str, int | None, str | None, str | None, str | None, str | None]] = []
    """(ident, version, date, reason, title, published DOI) of each withdrawal seen."""
    live: list[str] = []
    """Idents seen whose latest version is not withdrawn (a withdrawal lifted, or never)."""
    through: dt.date | None = None
    """Harvested up to this date; None: cut short (the part keeps its old date)."""
    requests: int = 0
    error: str | None = None


# --- the harvest --------------------------------------------------------------------------------


@contextmanager
def _until_cut_short(got: Harvested, source: PacedSource, today: dt.date) -> Iterator[None]:
    """Dates ``got`` ``today`` when the block ends; a :class:`GaveUp` ends it early, undated."""
    try:
        yield
        got.through = today
    except GaveUp as exc:
        got.error = str(exc)
    finally:
        source.close()


def harvest_arxiv(
    source: ArxivSource, since: dt.date | None, today: dt.date, known: set[str]
) -> Harvested:
    """Every record changed since ``since`` (all of arXiv when None), in OAI-PMH ``arXivRaw`` (the
    only format with the per-version flags). ``known``: ids the snapshot lists as withdrawn, so a
    record seen live again is dropped."""
    got = Harvested(part="arxiv", source=source.oai_url)
    params: dict[str, str] = {"verb": "ListRecords", "metadataPrefix": "arXivRaw"}
    if since is not None:
        params["from"] = since.isoformat()
    with _until_cut_short(got, source, today):
        while True:
            run = source.run()  # each page its own deadline: a harvest takes hours
            page = source.http.get(run, source.oai_url, params, oai_answer)
            got.requests += 1
            for record in page.records:
                w = record.withdrawal()
                if w is not None:
                    day = w.date.isoformat() if w.date else None
                    row = (w.ident, w.version, day, w.reason, record.title, record.doi)
                    got.withdrawn.append(row)
                elif record.arxiv.id in known:
                    got.live.append(record.arxiv.id)
            if not page.token:
                break
            params = {"verb": "ListRecords", "resumptionToken": page.token}
    return got


def harvest_biorxiv(
    source: BiorxivSource, server: str, since: dt.date | None, today: dt.date, known: set[str]
) -> Harvested:
    """Every version ``server`` posted from ``since`` (its first day when None) to ``today``;
    ``known`` as for :func:`harvest_arxiv`."""
    start = since or FIRST_DAY[server]
    got = Harvested(part=server, source=f"{source.base_url}/details/{server}")
    latest: dict[str, dict[str, Any]] = {}
    cursor = 0
    with _until_cut_short(got, source, today):
        while True:
            url = f"{source.base_url}/details/{server}/{start}/{today}/{cursor}/json"
            answer = source.http.get(source.run(), url, {}, details)
            got.requests += 1
            for item in answer.items:
                doi = try_normalize(str(item["doi"]))
                if doi and int(item["version"]) >= int(latest.get(doi, {}).get("version", 0)):
                    latest[doi] = item
            cursor += len(answer.items)
            if not answer.items or answer.total is None or cursor >= answer.total:
                break
    for doi, item in latest.items():
        notice = withdrawal_of([item])
        if notice is None:
            if doi in known:
                got.live.append(doi)
            continue
        title = " ".join(str(item.get("title") or "").split()).removeprefix("Withdrawn:").strip()
        published = try_normalize(str(item.get("published") or ""))
        date = notice.date.isoformat() if notice.date else None
        got.withdrawn.append(
            (doi, int(item["version"]), date, notice.label, title or None, published)
        )
    return got


# --- the tables ---------------------------------------------------------------------------------


def has_tables(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'preprint_parts'"
    ).fetchone()
    return row is not None


def parts(conn: sqlite3.Connection, now: dt.datetime | None = None) -> list[PreprintPart]:
    """Every harvested part, with its withdrawals and how old it is (empty before a harvest)."""
    if not has_tables(conn):
        return []
    now = now or dt.datetime.now(dt.UTC)
    keys = ("part", "source", "harvested_at", "through", "withdrawals")
    out = []
    for row in conn.execute(
        "SELECT part, source, harvested_at, through, (SELECT count(*) FROM preprint_withdrawals"
        " WHERE server = part) FROM preprint_parts ORDER BY part"
    ):
        part = PreprintPart.model_validate(dict(zip(keys, row, strict=True)))
        part.age_days = (now.date() - part.through).days if part.through else None
        out.append(part)
    return out


def through(conn: sqlite3.Connection, part: str) -> dt.date | None:
    """Up to when ``part`` was harvested (the next harvest's ``from``)."""
    if not has_tables(conn):
        return None
    row = conn.execute("SELECT through FROM preprint_parts WHERE part = ?", (part,)).fetchone()
    return dt.date.fromisoformat(row[0]) if row and row[0] else None


def last_harvest(path: Path) -> tuple[dict[str, dt.date | None], dict[str, set[str]]]:
    """Each part's last harvest date (the next ``from``) and the idents it lists as withdrawn;
    :class:`~rwgate.sources.snapshot.schema.SnapshotError` for a file that is no snapshot."""
    since: dict[str, dt.date | None] = {}
    known: dict[str, set[str]] = {part: set() for part in PARTS}
    if not path.exists():
        return since, known
    conn = connect_ro(path)
    try:
        check_schema(conn, path)
        if has_tables(conn):
            since = {part: through(conn, part) for part in PARTS}
            for server, ident in conn.execute("SELECT server, ident FROM preprint_withdrawals"):
                known.setdefault(server, set()).add(ident)
    finally:
        conn.close()
    return since, known


def store(conn: sqlite3.Connection, harvest: Harvested, now: dt.datetime) -> None:
    """Write one part's harvest: withdrawals upserted, lifted ones deleted, the part's date moved
    on only when the harvest was complete (a cut-short one keeps what it found, not its date)."""
    conn.executescript(SCHEMA)
    conn.executemany(
        "INSERT OR REPLACE INTO preprint_withdrawals VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(harvest.part, *row) for row in harvest.withdrawn],
    )
    withdrawn = {row[0] for row in harvest.withdrawn}
    conn.executemany(
        "DELETE FROM preprint_withdrawals WHERE server = ? AND ident = ?",
        [(harvest.part, ident) for ident in harvest.live if ident not in withdrawn],
    )
    count = conn.execute(
        "SELECT count(*) FROM preprint_withdrawals WHERE server = ?", (harvest.part,)
    ).fetchone()[0]
    day = harvest.through or through(conn, harvest.part)
    conn.execute(
        "INSERT OR REPLACE INTO preprint_parts VALUES (?, ?, ?, ?, ?)",
        (harvest.part, harvest.source, now.isoformat(), day.isoformat() if day else None, count),
    )


def withdrawals(
    conn: sqlite3.Connection, servers: Sequence[str], idents: Iterable[str]
) -> dict[str, tuple[Notice, str | None]]:
    """The withdrawal notice (and published DOI) of each of ``idents`` any of ``servers``
    lists; idents it does not list are absent (offline, that proves nothing)."""
    wanted = list(dict.fromkeys(idents))
    if not wanted or not has_tables(conn):
        return {}
    marks = ",".join("?" * len(servers))
    found: dict[str, tuple[Notice, str | None]] = {}
    for start in range(0, len(wanted), 400):
        chunk = wanted[start : start + 400]
        rows = conn.execute(
            "SELECT server, ident, version, date, reason, published_doi FROM preprint_withdrawals"
            f" WHERE server IN ({marks}) AND ident IN ({','.join('?' * len(chunk))})",
            (*servers, *chunk),
        )
        for server, ident, version, date, reason, published in rows:
            where = f"{'arXiv' if server == 'arxiv' else server}:{ident}"
            notice = Notice(
                type="withdrawal",
                date=dt.date.fromisoformat(date) if date else None,
                source=[server],
                label=reason or f"withdrawn ({server} gives no reason)",
                record_id=f"{where}v{version}" if version else where,
            )
            found[ident] = (notice, published)
    return found


# --- the offline source -------------------------------------------------------------------------


def _where(doi: str) -> tuple[tuple[str, ...], str] | None:
    """The snapshot parts and the ident a preprint DOI is stored under, if it is a preprint's."""
    arxiv = arxiv_of_doi(doi)
    if arxiv is not None:
        return ("arxiv",), arxiv.id
    preprint = biorxiv_doi(doi)
    if preprint is not None:
        return ("biorxiv", "medrxiv"), preprint
    return None


class HarvestedWithdrawals(IntegritySource):
    """Harvested withdrawals of arXiv and bioRxiv/medRxiv, read offline from the snapshot (online
    the live sources answer and this one is not opened). A listed preprint is ``found`` with its
    withdrawal notice; an unlisted one proves nothing (it was not withdrawn when its part was
    harvested, or is newer than the harvest), so it stays ``unverified`` unless a cached live
    answer clears it."""

    name = NAME
    title = "harvested preprint withdrawals"
    settings = frozenset({"snapshot", "offline"})
    absence = "nothing"  # only withdrawals are stored: an unlisted preprint is not cleared
    vouches = True  # every "found" of it carries its withdrawal notice
    servers = frozenset({"arXiv", "bioRxiv/medRxiv"})

    def __init__(self, path: Path, parts: list[PreprintPart]) -> None:
        self.path = path
        days = [p.through for p in parts if p.through]
        self.as_of = dt.datetime.combine(min(days), dt.time(), dt.UTC) if days else None
        self.conn = connect_ro(path, threads=True)

    @classmethod
    def open(cls, settings: Settings, cache: Cache) -> IntegritySource | None:
        """Offline only, and only when the snapshot holds a harvested part."""
        if not settings.offline:
            return None
        path = Path(settings.snapshot or default_snapshot_path())
        if not path.is_file():
            return None
        conn = connect_ro(path)
        try:
            harvested = parts(conn)
        finally:
            conn.close()
        return cls(path, harvested) if harvested else None

    def takes(self, kind: IdKind, ident: str) -> bool:
        return kind == "doi" and _where(ident) is not None

    def query(self, ident: str, kind: IdKind = "doi") -> Lookup:
        return self.query_all([ident], kind=kind)[ident]

    def query_all(
        self, idents: Sequence[str], progress: Progress | None = None, kind: IdKind = "doi"
    ) -> dict[str, Lookup]:
        """``found`` with the withdrawal notice of each listed preprint, else ``not_found``."""
        now = dt.datetime.now(dt.UTC)
        out = {i: Lookup(doi=i, outcome="not_found", source=NAME, as_of=now) for i in idents}
        by_parts: dict[tuple[str, ...], dict[str, str]] = {}
        for ident in out:
            where = _where(ident) if kind == "doi" else None
            if where is not None:
                by_parts.setdefault(where[0], {})[ident] = where[1]
        for servers, wanted in by_parts.items():
            listed = withdrawals(self.conn, servers, wanted.values())
            for ident, key in wanted.items():
                if key in listed:
                    notice, published = listed[key]
                    out[ident] = Lookup(
                        doi=ident,
                        outcome="found",
                        source=NAME,
                        notices=[notice],
                        published_doi=published,
                        as_of=self.as_of,
                    )
        if progress is not None:
            progress(len(out), len(out))
        return out

    def info(self) -> SourceInfo:
        return SourceInfo(name=self.name, url=str(self.path), as_of=self.as_of)

    def close(self) -> None:
        self.conn.close()
