"""The one door front ends take to the data layer: what the MCP server holds of it.

Front ends judge through :mod:`rwgate.kit`; the MCP server also answers questions about the
registry itself (a record, an author's works, the notices of a kind, the snapshot's status) and
searches Crossref. What it uses of :mod:`rwgate.sources` and :mod:`rwgate.identify` is named
here, once, so the import contract can say that no front end imports ``rwgate.sources``
(``pyproject.toml``): a change to a source's insides shows here, not in every front end.
"""

from __future__ import annotations

from rwgate.identify.crossref_search import CrossrefQuery, SourceUnavailable
from rwgate.sources import snapshot_queries
from rwgate.sources.cache import TTL_FEED, TTL_SEARCH, TTL_WORK
from rwgate.sources.http import CANCEL, remember_failures, share_connections
from rwgate.sources.interface import Progress
from rwgate.sources.snapshot import Snapshot, SnapshotError, snapshot_status
from rwgate.sources.snapshot_crossref import author_names
from rwgate.sources.snapshot_info import SnapshotStatus
from rwgate.sources.snapshot_queries import AuthoredWork

__all__ = [
    "CANCEL",
    "TTL_FEED",
    "TTL_SEARCH",
    "TTL_WORK",
    "AuthoredWork",
    "CrossrefQuery",
    "Progress",
    "Snapshot",
    "SnapshotError",
    "SnapshotStatus",
    "SourceUnavailable",
    "author_names",
    "remember_failures",
    "share_connections",
    "snapshot_queries",
    "snapshot_status",
]
