"""Issue 48.2: one expiry. How long a verdict holds is the run's record's
(rwgate.settings.recorded), the
one every memo uses, the snapshot's stale day included; the verdict carries no second figure."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from rwgate.contract.models import Reference
from rwgate.core import check
from rwgate.settings import recorded
from rwgate.settings.config import Settings
from rwgate.sources.snapshot.source import Snapshot
from rwgate.sources.snapshot.store import import_files

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def test_the_verdicts_end_is_the_records_and_includes_the_snapshots_stale_day(
    tmp_path: Path,
) -> None:
    db = tmp_path / "rw.sqlite"
    import_files(db, sorted((FIXTURES / "rw").glob("*.csv")))
    with Snapshot(db) as snap:
        as_of = snap.info().as_of
    assert as_of is not None
    settings = Settings(offline=True, snapshot=str(db), no_cache=True, max_snapshot_age_days=10)
    with recorded.recording() as run:
        result = check([Reference(key="k", doi="10.1038/171737a0")], settings)
    age = (dt.datetime.now(dt.UTC) - as_of).days
    stale_day = (as_of + dt.timedelta(days=max(age, 10) + 1)).timestamp()
    assert run.expires is not None and run.expires <= stale_day
    assert not hasattr(result, "expires")  # no parallel channel to disagree with the record
