"""The offline harvest of preprint withdrawals: arXiv over OAI-PMH, bioRxiv/medRxiv by interval.

arXiv: ``ListRecords`` in ``arXivRaw`` (the only format with the per-version flags), ``from=`` the
part's last harvest for increments, every ``resumptionToken`` followed, at arXiv's pace (the
process's one :class:`~rwgate.sources.net.ratelimit.Pacer`). A record whose latest version is
withdrawn is kept with its date, version and reason; a record seen again whose withdrawal was
lifted (a new version) is dropped from the snapshot.

bioRxiv/medRxiv: ``/details/{server}/{from}/{until}/{cursor}/json`` pages every version posted in
the interval; a DOI whose latest version seen is ``withdrawn`` is kept.

A harvest cut short (the server down past the retries, an answer that does not validate) keeps
what it found but not its date: the next one starts from the same ``from`` again.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from rwgate.contract.doi import try_normalize
from rwgate.sources.arxiv import ArxivSource, oai_answer
from rwgate.sources.biorxiv import BiorxivSource, details, withdrawal_of
from rwgate.sources.net.http import GaveUp
from rwgate.sources.snapshot.preprints import Harvested

FIRST_DAY = {"biorxiv": dt.date(2013, 11, 1), "medrxiv": dt.date(2019, 6, 1)}
"""When each server opened: a first harvest starts there."""


def harvest_arxiv(
    source: ArxivSource, since: dt.date | None, today: dt.date, known: set[str]
) -> Harvested:
    """Every record changed since ``since`` (all of arXiv when None). ``known``: ids the snapshot
    lists as withdrawn, so a record seen live again is dropped."""
    got = Harvested(part="arxiv", source=source.oai_url)
    params: dict[str, str] = {"verb": "ListRecords", "metadataPrefix": "arXivRaw"}
    if since is not None:
        params["from"] = since.isoformat()
    try:
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
        got.through = today
    except GaveUp as exc:
        got.error = str(exc)
    finally:
        source.close()
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
    try:
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
        got.through = today
    except GaveUp as exc:
        got.error = str(exc)
    finally:
        source.close()
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
