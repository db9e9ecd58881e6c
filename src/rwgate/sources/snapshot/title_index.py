"""The snapshot's title index: every Retraction Watch row by its normalised title.

An entry without a DOI is matched offline against the titles the registry holds
(:func:`rwgate.titles.title_key`). The keys are computed once, when a file is imported
(:func:`build`, in the import's own transaction), into a table of the snapshot::

    titles(key TEXT NOT NULL, notice INTEGER NOT NULL)   notice: the notices row's rowid
            indexed on key;  meta 'title_index' = the normalisation's version

so a check asks SQLite for its keys (one indexed ``IN`` query) instead of folding 70,000 titles
on every run. A snapshot imported by an rwgate without the index (or with another version of the
normalisation) is still matched, by folding its titles in memory on the first look-up: slower,
never different.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from typing import Any

from rwgate.titles import TitleRow, title_key

VERSION = "3"
"""Bumped whenever :func:`rwgate.titles.title_key` changes what it returns."""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS titles (key TEXT NOT NULL, notice INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS titles_key ON titles(key);
"""
# In the order of TitleRow's fields after its key.
_COLUMNS = "n.work_doi, n.work_pmid, n.record_id, n.title, n.journal, n.year, n.rowid"
Select = Callable[[str, list[str]], list[Any]]
"""The snapshot's batched ``IN ({keys})`` query (:meth:`Snapshot._select`)."""


def build(conn: sqlite3.Connection) -> int:
    """(Re)build the index of the snapshot open on ``conn`` (writable); the rows indexed."""
    conn.executescript(_SCHEMA)
    conn.execute("DELETE FROM titles")
    rows = conn.execute("SELECT rowid, title FROM notices WHERE title IS NOT NULL").fetchall()
    keyed = [(key, rowid) for rowid, title in rows if (key := title_key(title))]
    conn.executemany("INSERT INTO titles (key, notice) VALUES (?, ?)", keyed)
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('title_index', ?)", (VERSION,))
    return len(keyed)


def current(conn: sqlite3.Connection) -> bool:
    """Whether the snapshot has an index this rwgate's normalisation wrote."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'title_index'").fetchone()
    except sqlite3.DatabaseError:
        return False
    return row is not None and row[0] == VERSION


def find(
    conn: sqlite3.Connection, select: Select, keys: Iterable[str], indexed: bool
) -> dict[str, list[TitleRow]]:
    """The registry rows whose title has each key (rows of the same work included once each)."""
    wanted = sorted({k for k in keys if k})
    found: dict[str, list[TitleRow]] = {}
    if not wanted:
        return found
    if indexed:
        sql = (
            f"SELECT t.key, {_COLUMNS} FROM titles t JOIN notices n ON n.rowid = t.notice"
            " WHERE t.key IN ({keys})"
        )
        for row in select(sql, wanted):
            found.setdefault(row[0], []).append(TitleRow(*row))
        return found
    want = set(wanted)  # an index-less snapshot: every title folded here, once per look-up
    for row in conn.execute(f"SELECT {_COLUMNS} FROM notices n WHERE n.title IS NOT NULL"):
        key = title_key(row[3])
        if key in want:
            found.setdefault(key, []).append(TitleRow(key, *row))
    return found
