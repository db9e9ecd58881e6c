"""Crossref REST ``/works`` as an integrity source: batched, polite, and honest about failure.

Crossref carries the Retraction Watch notices in each work's ``updated-by``. A bibliography is asked
in batches (``filter=doi:A,doi:B,...``) because Crossref rate-limits per request, not per DOI. A
DOI a batch answer leaves out is asked once more on its own (``/works/{doi}``) before it is called
``not_found``: a list that silently leaves a DOI out is no proof that the DOI does not exist. A
request that finally fails gives every DOI in it ``outcome="error"`` (``unverified``, never
``clean``). Retries, ``Retry-After``, the deadline and the rate limits are
:mod:`rwgate.sources.net.http`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from rwgate.contract.doi import doi_path, try_normalize
from rwgate.contract.evidence import lookup_from_crossref, merge_notices
from rwgate.contract.models import Lookup
from rwgate.sources.interface import IdKind, Progress
from rwgate.sources.net.http import Failure, GaveUp, Run, json_body
from rwgate.sources.net.ratelimit import Limiter, shared_limiter
from rwgate.sources.paced import PacedSource, now

if TYPE_CHECKING:
    import httpx

SELECT = "DOI,title,container-title,issued,update-to,updated-by"
_MAX_THREADS = 8
_RA_BATCH = 100
Kind = Literal["list", "work", "text", "ra"]
"""What a readable answer is: a work list, one work or plain text (``transform``; 404 = unknown)."""


@dataclass
class Reply:
    """One finished GET: a readable answer (status 200 or 404) or the reason there is none."""

    status: int = 0
    data: Any = None
    error: str | None = None


_Result = tuple[dict[str, Lookup], list[str]]
"""What a worker returns: the look-ups it settled and the DOIs still to confirm one by one."""


class CrossrefSource(PacedSource):
    """The Crossref REST API as an integrity source: a DOI registry (``not_found`` = unknown)."""

    name = "crossref"
    title = "Crossref"
    settings = frozenset(
        {"crossref_url", "doi_url", "mailto", "timeout", "max_total_seconds", "offline"}
    )
    absence = "unknown"
    vouches = True  # a record without ``updated-by`` is a work with no notice registered
    url_setting = "crossref_url"
    arg_settings: ClassVar[dict[str, str]] = {
        "base_url": "crossref_url",
        "mailto": "mailto",
        "doi_url": "doi_url",
    }
    connections = _MAX_THREADS

    def __init__(
        self,
        base_url: str = "https://api.crossref.org",
        mailto: str | None = None,
        timeout: float = 10.0,
        max_total_seconds: float = 60.0,
        max_attempts: int = 5,
        backoff_base: float = 0.5,
        batch_size: int = 100,
        doi_url: str | None = None,
    ) -> None:
        if not 1 <= batch_size <= 1000:
            raise ValueError(
                f"crossref batch_size must be 1..1000 (Crossref's rows limit), not {batch_size}"
            )
        if max_attempts < 1:
            raise ValueError(f"crossref max_attempts must be at least 1, not {max_attempts}")
        mailto = (mailto or "").strip() or None
        if mailto and any(c in mailto for c in "\r\n;()"):
            raise ValueError(f"crossref mailto is not an e-mail address: {mailto!r}")
        self.base_url = base_url.rstrip("/")
        # The DOI resolver's registration-agency API: which agency holds each DOI a batch left
        # out, for many DOIs in one request (None: confirm each with /works/{doi} instead).
        self.doi_url = doi_url.rstrip("/") if doi_url else None
        self.batch_size = batch_size
        # Public-pool defaults until the first answer says otherwise; kept across calls.
        self.limiter = shared_limiter(
            self.name,
            self.base_url,
            lambda: Limiter(concurrency=1, limit=5, interval=1.0, max_concurrency=_MAX_THREADS),
        )
        super().__init__(
            self.base_url,
            self.limiter,
            timeout,
            max_total_seconds,
            max_attempts,
            backoff_base=backoff_base,
            learn_limits=True,
            mailto=mailto,
        )

    def query_all(
        self, dois: Sequence[str], progress: Progress | None = None, kind: IdKind = "doi"
    ) -> dict[str, Lookup]:
        """One Lookup per distinct DOI; failures become ``outcome="error"``, never an exception."""
        wanted = list(dict.fromkeys(dois))
        if not wanted:
            return {}
        # A comma would split the DOI inside filter=doi:A,doi:B, so such DOIs are asked alone.
        batchable = [d for d in wanted if "," not in d]
        batches = [
            batchable[i : i + self.batch_size] for i in range(0, len(batchable), self.batch_size)
        ]
        singles = [d for d in wanted if "," in d]
        run = self.run()
        pool = ThreadPoolExecutor(max_workers=_MAX_THREADS, thread_name_prefix="rwgate-crossref")
        completed = False
        try:
            results = self._drive(pool, run, batches, singles, len(wanted), progress)
            completed = True
        finally:
            if not completed:  # Ctrl-C or a failing progress callback: stop the workers now
                run.cancel.set()
                self.limiter.wake()
                self.close()  # their connections too (a later call opens another client)
            pool.shutdown(wait=completed, cancel_futures=True)
        answers = {doi: results[doi] for doi in wanted}
        self._tally(answers.values())
        return answers

    def _drive(
        self,
        pool: ThreadPoolExecutor,
        run: Run,
        batches: list[list[str]],
        singles: list[str],
        total: int,
        progress: Progress | None,
    ) -> dict[str, Lookup]:
        """Hand batches to the workers; confirm what a batch left out, one DOI at a time."""
        results: dict[str, Lookup] = {}
        tasks: dict[Future[_Result], tuple[str, list[str]]] = {}
        for batch in batches:
            tasks[pool.submit(self._fetch_batch, run, batch)] = ("batch", batch)
        for doi in singles:
            tasks[pool.submit(self._fetch_one, run, doi)] = ("one", [doi])
        left_out: list[str] = []  # by every batch: asked of the resolver together, at the end
        while tasks:
            finished, _ = wait(tasks, return_when=FIRST_COMPLETED)
            for future in finished:
                stage, dois = tasks.pop(future)
                lookups, missing = self._collect(future, dois)
                results.update(lookups)
                if stage == "batch" and self.doi_url:
                    left_out += missing
                else:
                    for doi in missing:
                        tasks[pool.submit(self._fetch_one, run, doi)] = ("one", [doi])
                if progress is not None and lookups:
                    progress(len(results), total)
            if left_out and not any(stage == "batch" for stage, _ in tasks.values()):
                # Which agency holds each left-out DOI, 100 to a request; only Crossref's (or
                # unanswered) ones are then confirmed one by one.
                for i in range(0, len(left_out), _RA_BATCH):
                    chunk = left_out[i : i + _RA_BATCH]
                    tasks[pool.submit(self._fetch_agencies, run, chunk)] = ("ra", chunk)
                left_out = []
        return results

    def _fetch_agencies(self, run: Run, dois: list[str]) -> _Result:
        """DOIs another agency holds become ``foreign``, ones no agency knows ``not_found``; the
        rest (Crossref's, unanswered, or all when the resolver fails) go on to ``/works/{doi}``."""
        url = f"{self.doi_url}/ra/" + ",".join(doi_path(d) for d in dois)
        reply = self._get(run, url, {}, "ra")
        if reply.error is not None or not isinstance(reply.data, list):
            return {}, dois
        said: dict[str, dict[str, Any]] = {}
        for item in reply.data:
            key = try_normalize(item.get("DOI")) if isinstance(item, dict) else None
            if key in dois and key not in said:
                said[key] = item
        settled: dict[str, Lookup] = {}
        for doi, item in said.items():
            agency = str(item.get("RA") or "").strip()
            if agency and agency.lower() != "crossref":
                text = f"registered with {agency[:40]}, not Crossref"
                settled[doi] = self._answer(doi, "foreign", text)
            elif str(item.get("status") or "").lower() == "doi does not exist":
                settled[doi] = self._answer(doi, "not_found")
        return settled, [d for d in dois if d not in settled]

    # --- workers (run on pool threads; they never raise) ------------------------------------

    def _collect(self, future: Future[_Result], dois: list[str]) -> _Result:
        try:
            return future.result()
        except Exception as exc:  # a bug must not cost the other DOIs their answers
            return {d: self._error(d, f"crossref: internal error: {exc}") for d in dois}, []

    def _fetch_batch(self, run: Run, dois: list[str]) -> _Result:
        params = {"filter": ",".join(f"doi:{d}" for d in dois), "select": SELECT}
        params["rows"] = str(len(dois))
        reply = self._get(run, f"{self.base_url}/works", params, "list")
        if reply.error is not None:
            return {d: self._error(d, reply.error) for d in dois}, []
        wanted = set(dois)
        found: dict[str, Lookup] = {}
        for item in reply.data["message"]["items"]:
            key = try_normalize(item.get("DOI")) if isinstance(item, dict) else None
            if key is None or key not in wanted:
                continue  # not asked for: never counted for another DOI
            lookup = self._parse(key, item)
            found[key] = _merge(found[key], lookup) if key in found else lookup
        return found, [d for d in dois if d not in found]

    def _fetch_one(self, run: Run, doi: str) -> _Result:
        url = f"{self.base_url}/works/{doi_path(doi)}"
        reply = self._get(run, url, {}, "work")
        if reply.error is not None:
            lookup = self._error(doi, reply.error)
        elif reply.status == 404:
            lookup = self._answer(doi, "not_found")
        else:
            message = reply.data["message"]
            own = try_normalize(message.get("DOI"))
            if own != doi:  # a record of another DOI (or of none) is no record of this one
                return {doi: self._error(doi, f"crossref: answer is the record of {own!r}")}, []
            lookup = self._parse(doi, message)
        return {doi: lookup}, []

    def _parse(self, doi: str, message: Mapping[str, Any]) -> Lookup:
        for field in ("updated-by", "update-to"):
            entries = message.get(field)
            if entries is not None and not (
                isinstance(entries, list) and all(isinstance(e, dict) for e in entries)
            ):
                return self._answer(
                    doi, "error", f"crossref: malformed {field} in the record of {doi}"
                )
        try:
            lookup = lookup_from_crossref(message, source=self.name)
        except (ValueError, TypeError, AttributeError) as exc:
            return self._error(doi, f"crossref: unreadable record for {doi}: {exc}")
        return lookup.model_copy(update={"doi": doi, "as_of": now()})

    def _error(self, doi: str, text: str) -> Lookup:
        return self._answer(doi, "error", text)

    # --- HTTP --------------------------------------------------------------------------------

    def request(self, url: str, params: Mapping[str, str], kind: Kind) -> Reply:
        """One GET on the source's client and the same retry, ``Retry-After`` and rate-limit path
        as :meth:`query_all` (the searches of DOI recovery and verification use it).

        Never raises for HTTP trouble: the one-line reason is ``Reply.error``.
        """
        return self._get(self.run(), url, params, kind)

    def _get(self, run: Run, url: str, params: Mapping[str, str], kind: Kind) -> Reply:
        try:
            return self.http.get(run, url, params, partial(_interpret, kind=kind))
        except GaveUp as exc:
            return Reply(error=str(exc))


def _merge(first: Lookup, second: Lookup) -> Lookup:
    """Two items for one DOI in one answer: one record with the union of their notices (an
    error in either makes the whole an error: never first-wins)."""
    if first.outcome == "error":
        return first
    if second.outcome == "error":
        return second
    notices = merge_notices([*first.notices, *second.notices])
    notice_for = list(dict.fromkeys([*first.notice_for, *second.notice_for]))
    return first.model_copy(update={"notices": notices, "notice_for": notice_for})


def _crossref_message(response: httpx.Response) -> str:
    """Crossref's own words from a ``validation-failure`` body, if it sent one."""
    try:
        messages = response.json().get("message")
        first = messages[0] if isinstance(messages, list) and messages else {}
        return str(first.get("message") or "").strip()
    except (ValueError, AttributeError, TypeError):
        return response.text.strip()[:200]


_MESSAGE_TYPES = {"list": "work-list", "work": "work"}


def _interpret(response: httpx.Response, kind: Kind) -> Reply:
    """A readable answer of the expected shape; raises :class:`Failure` otherwise (429 and 5xx
    never get here). Shape: HTTP 200, a JSON content type, ``status: ok``, the expected
    ``message-type`` and a ``message`` object (with an ``items`` list for a work list)."""
    status = response.status_code
    if status == 200 and kind == "text":
        return Reply(status=200, data=response.text)
    if status == 200 and kind == "ra":  # the resolver's /ra/ answer: a JSON list of objects
        data = json_body(response)
        if not isinstance(data, list) or not all(isinstance(i, dict) for i in data):
            raise Failure("malformed registration-agency answer", retry=False)
        return Reply(status=200, data=data)
    if status == 200:
        ctype = response.headers.get("content-type", "")
        if "json" not in ctype.lower():
            raise Failure(f"answer is not JSON (content type {ctype[:40] or 'missing'!r})")
        data = json_body(response)
        if not isinstance(data, dict) or data.get("status") != "ok":
            said = data.get("status") if isinstance(data, dict) else type(data).__name__
            raise Failure(f"answer status {str(said)[:40]!r}, not 'ok'", retry=False)
        if data.get("message-type") != _MESSAGE_TYPES[kind]:
            raise Failure(
                f"answer is a {str(data.get('message-type'))[:40]!r}, not a"
                f" {_MESSAGE_TYPES[kind]!r}",
                retry=False,
            )
        message = data.get("message")
        shaped = (
            isinstance(message, dict)
            and bool(message)
            and (kind != "list" or isinstance(message.get("items"), list))
        )
        if not shaped:
            raise Failure("malformed response (no message)")
        return Reply(status=200, data=data)
    if status == 404 and kind != "list" and response.text.strip().startswith("Resource not found"):
        return Reply(status=404)
    detail = _crossref_message(response) if status == 400 else ""
    raise Failure(f"HTTP {status}" + (f": {detail}" if detail else ""), retry=False)
