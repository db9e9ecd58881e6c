"""Integrity sources, opened as the settings ask.

The Crossref source sits behind the cache and is created only on a cache miss (so the HTTP client
is imported only then); the Retraction Watch snapshot is used when its file exists.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from rwgate.config import Settings
from rwgate.models import SourceInfo
from rwgate.paths import default_cache_dir, default_snapshot_path
from rwgate.sources.base import IntegritySource
from rwgate.sources.cache import Cache, CachedSource


@dataclass
class OpenSources:
    """The sources one check uses. ``crossref`` is None only when nothing online may be asked."""

    crossref: CachedSource
    snapshot: IntegritySource | None
    cache: Cache
    warnings: list[str] = field(default_factory=list)
    registry: bool = False  # the snapshot holds Retraction Watch rows: unlisted means clean

    def infos(self) -> list[SourceInfo]:
        infos = [self.crossref.info()]
        if self.snapshot is not None:
            infos.append(self.snapshot.info())
        return infos

    def close(self) -> None:
        self.cache.close()
        closer = getattr(self.snapshot, "close", None)
        if closer is not None:
            closer()


def _crossref_factory(settings: Settings) -> IntegritySource:
    from rwgate.sources.crossref import CrossrefSource

    return CrossrefSource(
        base_url=settings.crossref_url,
        mailto=settings.mailto,
        timeout=settings.timeout,
        max_total_seconds=settings.max_total_seconds,
    )


def open_snapshot(settings: Settings) -> IntegritySource | None:
    """The snapshot named by the settings (or the default path), if there is one.

    The snapshot code is imported only when the file exists.
    """
    path = Path(settings.snapshot or default_snapshot_path())
    if not path.is_file():
        return None
    from rwgate.sources.snapshot import Snapshot

    return Snapshot(path)


def _staleness(info: SourceInfo, max_days: int) -> list[str]:
    if info.as_of is None:
        return []
    as_of = info.as_of if info.as_of.tzinfo else info.as_of.replace(tzinfo=dt.UTC)
    age = (dt.datetime.now(dt.UTC) - as_of).days
    if age <= max_days:
        return []
    return [
        f"the Retraction Watch snapshot is {age} days old (data as of {as_of.date()}, more than"
        f" {max_days}); run `rwgate data update`"
    ]


def open_sources(settings: Settings) -> OpenSources:
    cache = Cache(
        None if settings.no_cache else (settings.cache_dir or default_cache_dir()), quiet=True
    )
    factory = None if settings.offline else (lambda: _crossref_factory(settings))
    crossref = CachedSource(
        "crossref", cache, factory, SourceInfo(name="crossref", url=settings.crossref_url)
    )
    warnings: list[str] = []
    if cache.warning:
        warnings.append(cache.warning)
    snapshot = None
    try:
        snapshot = open_snapshot(settings)
    except Exception as exc:  # a broken snapshot must not stop the check
        warnings.append(f"snapshot not usable: {exc}")
    registry = bool(getattr(snapshot, "is_registry", False))
    if snapshot is not None:
        warnings.extend(_staleness(snapshot.info(), settings.max_snapshot_age_days))
        if not registry:
            warnings.append(
                "the snapshot holds no Retraction Watch rows; works it does not list are not"
                " called clean from it (run `rwgate data update`)"
            )
    return OpenSources(
        crossref=crossref, snapshot=snapshot, cache=cache, warnings=warnings, registry=registry
    )
