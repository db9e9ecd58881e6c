"""``rwgate data update --preprints``: withdrawn arXiv, bioRxiv and medRxiv preprints harvested
from the loopback fakes into the snapshot, each part dated, at arXiv's pace (counted against an
injected clock), increments from the last harvest, and a harvest cut short never moves its date."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.arxiv import FakeArxiv
from fakes.biorxiv import FakeBiorxiv
from rwgate.frontends.cli import data as datacmd
from rwgate.sources.net.ratelimit import Pacer, use_pacer
from rwgate.sources.snapshot import preprints as snapshot_preprints


class Clock:
    def __init__(self) -> None:
        self.now = 50.0
        self.starts: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeArxiv, FakeBiorxiv, Clock]]:
    clock = Clock()
    previous = use_pacer(Pacer(clock=clock, sleep=clock.sleep, on_start=clock.starts.append))
    with FakeArxiv(page_size=2) as arxiv, FakeBiorxiv(page_size=3) as biorxiv:
        monkeypatch.setenv("RWGATE_ARXIV_URL", arxiv.api_url)
        monkeypatch.setenv("RWGATE_ARXIV_OAI_URL", arxiv.oai_url)
        monkeypatch.setenv("RWGATE_BIORXIV_URL", biorxiv.url)
        try:
            yield arxiv, biorxiv, clock
        finally:
            use_pacer(previous)


def rows(path: Path) -> dict[tuple[str, str], tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        return {
            (r[0], r[1]): r[2:]
            for r in conn.execute("SELECT * FROM preprint_withdrawals ORDER BY server, ident")
        }


def test_harvest_lands_every_withdrawal_with_date_version_and_reason(servers, tmp_path: Path):
    arxiv, _, clock = servers
    path = tmp_path / "snap.sqlite3"
    assert datacmd.main(["data", "update", "--preprints", "--snapshot", str(path)]) == 0
    got = rows(path)
    assert set(got) == {
        ("arxiv", "2104.01234"),
        ("arxiv", "hep-th/0601001"),
        ("biorxiv", "10.1101/2020.01.30.927871"),
        ("biorxiv", "10.1101/2021.06.15.448512"),
        ("medrxiv", "10.1101/2020.05.02.20080111"),
    }
    version, date, reason, _title, _ = got[("arxiv", "2104.01234")]
    assert (version, date) == (2, "2021-05-11")
    assert str(reason).startswith("This paper has been withdrawn by the authors")
    assert (
        got[("biorxiv", "10.1101/2021.06.15.448512")][3] == "A Screen for Regulators of Axon Growth"
    )
    # Five records at two a page: three ListRecords requests, resumption tokens followed.
    listed = arxiv.requests_to("/oai")
    assert len(listed) == 3
    assert "from" not in listed[0].query  # a first harvest takes everything
    assert [r.query.get("resumptionToken") is not None for r in listed] == [False, True, True]
    gaps = [b - a for a, b in zip(clock.starts, clock.starts[1:], strict=False)]
    assert len(clock.starts) == 3 and all(gap >= 3.0 for gap in gaps)
    assert arxiv.peak_in_flight == 1


def test_status_says_how_old_each_part_is(servers, tmp_path: Path, capsys):
    path = tmp_path / "snap.sqlite3"
    datacmd.main(["data", "update", "--preprints", "--snapshot", str(path)])
    capsys.readouterr()
    assert datacmd.main(["data", "status", "--json", "--snapshot", str(path)]) == 0
    status = json.loads(capsys.readouterr().out)
    parts = {p["part"]: p for p in status["preprints"]}
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert {name: (p["withdrawals"], p["through"]) for name, p in parts.items()} == {
        "arxiv": (2, today),
        "biorxiv": (2, today),
        "medrxiv": (1, today),
    }
    assert datacmd.main(["data", "status", "--snapshot", str(path)]) == 0
    text = capsys.readouterr().out
    assert f"preprints arxiv: 2 withdrawal(s), harvested through {today} (0 days old)" in text


def test_an_increment_asks_from_the_last_harvest_and_drops_lifted_withdrawals(
    servers, tmp_path: Path
):
    arxiv, _, _ = servers
    path = tmp_path / "snap.sqlite3"
    datacmd.main(["data", "update", "--preprints", "--snapshot", str(path)])
    today = dt.datetime.now(dt.UTC).date().isoformat()
    lifted = dict(arxiv.papers["2104.01234"])
    lifted["versions"] = [
        *lifted["versions"],
        {"date": "Mon, 1 Jan 2024 00:00:00 GMT", "size": "520kb", "source_type": "D"},
    ]
    lifted["datestamp"] = today
    arxiv.add_paper(lifted)
    arxiv.requests.clear()
    assert datacmd.main(["data", "update", "--preprints", "--snapshot", str(path)]) == 0
    [first, *_] = arxiv.requests_to("/oai")
    assert first.query["from"] == [today]
    assert ("arxiv", "2104.01234") not in rows(path)
    assert ("arxiv", "hep-th/0601001") in rows(path)


def test_a_harvest_cut_short_keeps_its_finds_but_not_its_date(servers, tmp_path: Path, capsys):
    arxiv, _, _ = servers
    path = tmp_path / "snap.sqlite3"
    arxiv.fail_next("pass")  # the first page lands...
    arxiv.fail_next("503", times=20)  # ...the rest never comes
    assert datacmd.main(["data", "update", "--preprints", "--snapshot", str(path)]) == 2
    assert "arxiv: cut short after 1 request(s): arxiv: HTTP 503" in capsys.readouterr().err
    with sqlite3.connect(path) as conn:
        assert snapshot_preprints.through(conn, "arxiv") is None
        assert snapshot_preprints.through(conn, "biorxiv") is not None


@pytest.mark.parametrize("fault", ["html", "badtoken"])
def test_an_answer_that_does_not_validate_lands_nothing_false(servers, tmp_path, fault, capsys):
    arxiv, _, _ = servers
    path = tmp_path / "snap.sqlite3"
    arxiv.fail_next("pass")
    arxiv.fail_next(fault, times=20)
    assert datacmd.main(["data", "update", "--preprints", "--snapshot", str(path)]) == 2
    assert "cut short" in capsys.readouterr().err
    # Only the first page's finds (the oldest two records: one withdrawn) landed.
    assert [ident for server, ident in rows(path) if server == "arxiv"] == ["hep-th/0601001"]
