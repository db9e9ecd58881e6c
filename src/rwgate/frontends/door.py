"""The one door front ends take to the data layer: what the MCP server uses of it.

Front ends judge through :mod:`rwgate.frontends.kit`; the MCP server also answers questions about
the registry itself and searches Crossref. What it uses of :mod:`rwgate.sources` is named here,
once, so the import contract can say that no front end imports ``rwgate.sources``.
"""

from __future__ import annotations

from rwgate.identify.crossref_search import CrossrefQuery as CrossrefQuery
from rwgate.identify.crossref_search import SourceUnavailable as SourceUnavailable
from rwgate.sources.cache import TTL_FEED as TTL_FEED
from rwgate.sources.cache import TTL_SEARCH as TTL_SEARCH
from rwgate.sources.cache import TTL_WORK as TTL_WORK
from rwgate.sources.interface import Progress as Progress
from rwgate.sources.net.http import CANCEL as CANCEL
from rwgate.sources.net.http import remember_failures as remember_failures
from rwgate.sources.net.http import share_connections as share_connections
from rwgate.sources.snapshot import queries as snapshot_queries  # noqa: F401 (the door names the module)
from rwgate.sources.snapshot.crossref_bodies import author_names as author_names
from rwgate.sources.snapshot.info import SnapshotStatus as SnapshotStatus
from rwgate.sources.snapshot.queries import AuthoredWork as AuthoredWork
from rwgate.sources.snapshot.source import Snapshot as Snapshot
from rwgate.sources.snapshot.source import SnapshotError as SnapshotError
from rwgate.sources.snapshot.source import snapshot_status as snapshot_status
