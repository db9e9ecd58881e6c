"""Preprint withdrawals in the local snapshot: the tables, what ``data status`` says of them, and
the offline answer for an arXiv id or a bioRxiv/medRxiv DOI.

Two tables, added beside the Retraction Watch ones (an rwgate that does not know them ignores
them, so the schema version stays)::

    preprint_withdrawals(server TEXT,   'arxiv', 'biorxiv' or 'medrxiv'
                         ident TEXT,    arXiv id without version, or the canonical DOI
                         version INTEGER, date TEXT (ISO), reason TEXT, title TEXT,
                         published_doi TEXT, PRIMARY KEY (server, ident))
    preprint_parts(part TEXT PRIMARY KEY, source TEXT, harvested_at TEXT (ISO, UTC),
                   through TEXT (ISO date: harvested up to; the next ``from``), rows INTEGER)

Each part is harvested on its own and says how old it is: a snapshot whose arXiv part is a year
old still answers for arXiv, and ``data status`` says so.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterable, Sequence

from pydantic import BaseModel

from rwgate.contract.models import Notice

SCHEMA = """
CREATE TABLE IF NOT EXISTS preprint_withdrawals (
    server TEXT NOT NULL, ident TEXT NOT NULL, version INTEGER, date TEXT, reason TEXT,
    title TEXT, published_doi TEXT, PRIMARY KEY (server, ident));
CREATE TABLE IF NOT EXISTS preprint_parts (
    part TEXT PRIMARY KEY, source TEXT NOT NULL, harvested_at TEXT NOT NULL, through TEXT,
    rows INTEGER NOT NULL);
"""
PARTS = ("arxiv", "biorxiv", "medrxiv")


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
