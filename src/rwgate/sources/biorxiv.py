"""bioRxiv and medRxiv as an integrity source: their API lists every version with its type.

``api.biorxiv.org/details/{biorxiv|medrxiv}/{DOI}/na/json`` answers ``{"messages": [{"status":
"ok"}], "collection": [...]}``, one item per version (``doi``, ``title``, ``date``, ``version``,
``type``, ``abstract``, ``published``, ``server``); a DOI the server does not hold answers
``"status": "no posts found"``. The withdrawing version has ``"type": "withdrawn"`` (and, since
2023-08-01, a title beginning ``Withdrawn:``), its abstract the withdrawal statement;
``published`` is the journal version's DOI (``NA`` when none).

``10.1101/`` is both servers' (and the Cold Spring Harbor journals'), so a preprint DOI is asked
of bioRxiv, then of medRxiv; a journal DOI (``10.1101/gr.…``) is never asked
(:func:`~rwgate.sources.preprint_ids.biorxiv_doi`). A preprint whose latest version is not
withdrawn is found with no notices (vouched); an answer that does not validate is an ``error``
look-up, and neither server holding the DOI proves nothing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rwgate.contract.doi import doi_path, try_normalize
from rwgate.contract.models import Lookup, Notice
from rwgate.sources.interface import IdKind, Progress
from rwgate.sources.net.http import Failure, GaveUp, Run, json_body
from rwgate.sources.net.ratelimit import Limiter, shared_limiter
from rwgate.sources.paced import PacedSource, now
from rwgate.sources.preprint_ids import biorxiv_doi

if TYPE_CHECKING:
    import httpx

NAME = "biorxiv"
SERVERS = ("biorxiv", "medrxiv")
_REASON_MAX = 300


@dataclass(frozen=True)
class Details:
    """One ``details`` answer: ``ok`` with the items, or ``no posts found`` (empty)."""

    items: list[dict[str, Any]]
    total: int | None = None


def details(response: httpx.Response) -> Details:
    """A ``details`` answer, validated; :class:`Failure` for anything else (an HTML page, a
    message that is neither ``ok`` nor ``no posts found``, items that are not version records)."""
    if response.status_code != 200:
        raise Failure(f"HTTP {response.status_code}", retry=False)
    data = json_body(response)
    if not isinstance(data, dict):
        raise Failure("answer is not a bioRxiv API object", retry=False)
    messages, collection = data.get("messages"), data.get("collection")
    if not isinstance(messages, list) or not messages or not isinstance(messages[0], dict):
        raise Failure("answer has no messages", retry=False)
    if not isinstance(collection, list):
        raise Failure("answer has no collection", retry=False)
    status = str(messages[0].get("status", "")).strip().lower()
    if status == "no posts found":
        return Details([])
    if status != "ok":
        raise Failure(f"answer status {status[:40]!r}, not 'ok'", retry=False)
    for item in collection:
        ok = isinstance(item, dict) and try_normalize(str(item.get("doi", ""))) is not None
        if not ok or not str(item.get("version", "")).isdigit() or "type" not in item:
            raise Failure("answer has an item that is not a version record", retry=False)
    return Details(collection, _int(messages[0].get("total")))


def _int(value: Any) -> int | None:
    text = str(value).strip()
    return int(text) if text.isdigit() else None


def _version(item: Mapping[str, Any]) -> int:
    return int(str(item["version"]))


def withdrawal_of(items: Sequence[Mapping[str, Any]]) -> Notice | None:
    """The withdrawal in force: the latest version's, when its type is ``withdrawn``."""
    latest = max(items, key=_version)
    if str(latest.get("type", "")).strip().lower() != "withdrawn":
        return None
    reason = " ".join(str(latest.get("abstract") or "").split())[:_REASON_MAX] or None
    server = str(latest.get("server") or "bioRxiv")
    return Notice(
        type="withdrawal",
        date=_date(latest.get("date")),
        source=[NAME],
        label=reason or f"withdrawn ({server} gives no reason)",
        record_id=f"{server}:{try_normalize(str(latest['doi']))}v{latest['version']}",
    )


def published_of(items: Sequence[Mapping[str, Any]]) -> str | None:
    """The journal version's DOI, as the server states it (``NA``: none)."""
    for item in sorted(items, key=lambda i: -_version(i)):
        found = try_normalize(str(item.get("published") or ""))
        if found:
            return found
    return None


def _date(value: Any) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


class BiorxivSource(PacedSource):
    """bioRxiv and medRxiv, through ``api.biorxiv.org`` (see the module docstring)."""

    name = NAME
    title = "bioRxiv/medRxiv"
    settings = frozenset({"biorxiv_url", "timeout", "max_total_seconds", "offline"})
    absence = "nothing"  # neither server holding a 10.1101 DOI proves nothing: Crossref's to say
    vouches = True  # every version is listed with its type
    servers = frozenset({"bioRxiv/medRxiv"})
    url_setting = "biorxiv_url"
    arg_settings: ClassVar[dict[str, str]] = {"base_url": "biorxiv_url"}

    def __init__(
        self,
        base_url: str = "https://api.biorxiv.org",
        timeout: float = 20.0,
        max_total_seconds: float = 60.0,
        max_attempts: int = 4,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        limiter = shared_limiter(
            NAME, self.base_url, lambda: Limiter(concurrency=1, limit=2, interval=1.0)
        )
        super().__init__(self.base_url, limiter, timeout, max_total_seconds, max_attempts)

    def takes(self, kind: IdKind, ident: str) -> bool:
        """Only bioRxiv/medRxiv preprint DOIs (not the Cold Spring Harbor journals')."""
        return kind == "doi" and biorxiv_doi(ident) is not None

    def query_all(
        self, idents: Sequence[str], progress: Progress | None = None, kind: IdKind = "doi"
    ) -> dict[str, Lookup]:
        """One Lookup per distinct DOI: a DOI that is no bioRxiv/medRxiv preprint's is
        ``not_found`` without a request (this source proves nothing by absence)."""
        wanted = list(dict.fromkeys(idents))
        out: dict[str, Lookup] = {}
        run = self.run()
        for done, ident in enumerate(wanted, start=1):
            preprint = biorxiv_doi(ident) if kind == "doi" else None
            out[ident] = (
                self._ask(run, preprint) if preprint else self._answer(ident, "not_found")
            ).model_copy(update={"doi": ident})
            if progress is not None:
                progress(done, len(wanted))
        self._tally(out.values())
        return out

    def _ask(self, run: Run, doi: str) -> Lookup:
        for server in SERVERS:
            url = f"{self.base_url}/details/{server}/{doi_path(doi)}/na/json"
            try:
                answer = self.http.get(run, url, {}, details)
            except GaveUp as exc:
                return self._answer(doi, "error", str(exc))
            items = [i for i in answer.items if try_normalize(str(i["doi"])) == doi]
            if len(items) != len(answer.items):
                return self._answer(doi, "error", f"biorxiv: {server} answered with another DOI")
            if items:
                return self._found(doi, items)
        return self._answer(doi, "not_found")

    def _found(self, doi: str, items: list[dict[str, Any]]) -> Lookup:
        latest = max(items, key=_version)
        title = " ".join(str(latest.get("title") or "").split()) or None
        if title and title.lower().startswith("withdrawn:"):
            title = title[len("withdrawn:") :].strip() or None
        first = _date(min(items, key=_version).get("date"))
        notice = withdrawal_of(items)
        return Lookup(
            doi=doi,
            outcome="found",
            source=NAME,
            notices=[notice] if notice else [],
            title=title,
            journal=str(latest.get("server") or "") or None,
            year=first.year if first else None,
            published_doi=published_of(items),
            as_of=now(),
        )
