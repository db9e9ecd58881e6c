"""Where rwgate keeps its files, and where the data comes from, without importing anything heavy:
every check asks where the snapshot is long before it loads the snapshot code."""

from __future__ import annotations

from pathlib import Path

from rwgate.settings import recorded

DEFAULT_RW_CSV_URL = (
    "https://gitlab.com/crossref/retraction-watch-data/-/raw/main/retraction_watch.csv"
)


def default_snapshot_path() -> Path:
    """``RWGATE_SNAPSHOT``, else ``snapshot.sqlite3`` in the user data directory. The variables
    that choose it are recorded (:mod:`rwgate.settings.recorded`): moving the snapshot
    invalidates."""
    env = recorded.environ()
    named = env.get("RWGATE_SNAPSHOT")
    if named:
        if named.startswith("~"):
            env.get("HOME")
        return Path(named).expanduser()
    env.get("XDG_DATA_HOME")
    env.get("HOME")
    import platformdirs

    return Path(platformdirs.user_data_dir("rwgate")) / "snapshot.sqlite3"


def default_cache_dir() -> Path:
    """``RWGATE_CACHE_DIR`` is read by the settings; this is the fallback (its variables are
    recorded, as above)."""
    env = recorded.environ()
    env.get("XDG_CACHE_HOME")
    env.get("HOME")
    import platformdirs

    return Path(platformdirs.user_cache_dir("rwgate"))
