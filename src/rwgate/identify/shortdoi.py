"""ShortDOIs (``10/f8vrcz``) to the DOIs they stand for, through the DOI resolver's handle API.

Zotero exports shortDOIs; read as DOIs they are malformed. They are aliases the resolver knows:
``GET {doi_url}/api/handles/10/f8vrcz`` answers the handle record, whose ``HS_ALIAS`` value is the
full DOI. Answers are cached 30 days (an alias does not change), errors never. A shortDOI that
cannot be resolved stays ``unverified`` with its value, never ``invalid_doi``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rwgate.contract.doi import try_normalize
from rwgate.settings.config import Settings
from rwgate.sources.cache import TTL_AGENCY, Cache

if TYPE_CHECKING:
    import httpx

_KEY = "shortdoi:"
_NAME = "doi.org handles"
_MAX_RECORD = 100_000  # a handle record is a few hundred bytes


def resolve_short_dois(
    shorts: Sequence[str], settings: Settings, cache: Cache
) -> dict[str, str | None]:
    """shortDOI -> full DOI, or None when it cannot be resolved (offline, unknown, no answer).

    Asked through the project's one retrying GET (:class:`~rwgate.sources.net.http.Retrying`): an
    overall deadline, bounded bodies, same-host redirects only, as every other upstream."""
    found: dict[str, str | None] = {}
    ask: list[str] = []
    for short in dict.fromkeys(shorts):
        cached = cache.get(_KEY + short)
        if isinstance(cached, str) and try_normalize(cached):
            found[short] = cached
        else:
            ask.append(short)
    if not ask:
        return found
    if settings.offline:
        return {**found, **dict.fromkeys(ask)}
    from rwgate.sources.net.http import GaveUp, Retrying
    from rwgate.sources.net.ratelimit import Limiter, shared_limiter

    base = settings.doi_url.rstrip("/")
    limiter = shared_limiter(_NAME, base, lambda: Limiter(concurrency=1, limit=5, interval=1.0))
    http = Retrying(
        _NAME,
        limiter,
        timeout=settings.timeout,
        max_total_seconds=settings.max_total_seconds,
        max_attempts=3,
        backoff_base=0.5,
        backoff_cap=10.0,
        mailto=settings.mailto,
    )
    try:
        run = http.run()
        for short in ask:
            try:
                found[short] = http.get(run, f"{base}/api/handles/{short}", {}, _alias)
            except GaveUp:
                found[short] = None
            if found[short] is not None:
                cache.set(_KEY + short, found[short], TTL_AGENCY)
    finally:
        http.close()
    return found


def _alias(response: httpx.Response) -> str | None:
    """The DOI a handle record's ``HS_ALIAS`` names; None for anything else."""
    from rwgate.sources.net.http import json_body

    if response.status_code != 200 or len(response.content) > _MAX_RECORD:
        return None
    record = json_body(response)
    values = record.get("values") if isinstance(record, dict) else None
    for value in values if isinstance(values, list) else []:
        if isinstance(value, dict) and value.get("type") == "HS_ALIAS":
            data = value.get("data")
            alias = data.get("value") if isinstance(data, dict) else None
            return try_normalize(alias) if isinstance(alias, str) else None
    return None
