"""ShortDOIs (``10/f8vrcz``) to the DOIs they stand for, through the DOI resolver's handle API.

Zotero exports shortDOIs; read as DOIs they are malformed, so a paper with 39 of them was refused
under strict for 39 "invalid DOIs". They are aliases the resolver knows: ``GET
{doi_url}/api/handles/10/f8vrcz`` answers the handle record, whose ``HS_ALIAS`` value is the full
DOI. Answers are cached 30 days (an alias does not change); errors are never cached. A shortDOI that
cannot be resolved (offline, the resolver down, an unknown alias) stays ``unverified`` with its
value, never ``invalid_doi``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from rwgate.config import Settings
from rwgate.doi import try_normalize
from rwgate.sources.cache import TTL_AGENCY, Cache

_KEY = "shortdoi:"


def resolve_short_dois(
    shorts: Sequence[str], settings: Settings, cache: Cache
) -> dict[str, str | None]:
    """shortDOI -> full DOI, or None with the reason in :data:`REASONS` (offline, not found)."""
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
    import httpx

    with httpx.Client(timeout=settings.timeout, follow_redirects=False) as client:
        for short in ask:
            found[short] = _ask(client, settings.doi_url.rstrip("/"), short)
            if found[short] is not None:
                cache.set(_KEY + short, found[short], TTL_AGENCY)
    return found


def _ask(client: object, base: str, short: str) -> str | None:
    import httpx

    assert isinstance(client, httpx.Client)
    try:
        response = client.get(f"{base}/api/handles/{short}")
    except httpx.HTTPError:
        return None
    if response.status_code != 200 or len(response.content) > 100_000:
        return None
    try:
        record = json.loads(response.content)
    except ValueError:
        return None
    values = record.get("values") if isinstance(record, dict) else None
    for value in values if isinstance(values, list) else []:
        if isinstance(value, dict) and value.get("type") == "HS_ALIAS":
            data = value.get("data")
            alias = data.get("value") if isinstance(data, dict) else None
            return try_normalize(alias) if isinstance(alias, str) else None
    return None
