"""A loopback fake of ``api.biorxiv.org``: the ``details`` endpoint by DOI and by interval.

Serves ``tests/fixtures/biorxiv/preprints.json`` (see PROVENANCE.md there) in the API's shape:
``/details/{server}/{doi}/na/json`` lists every version of a DOI the server holds, else ``no posts
found``; ``/details/{server}/{from}/{until}/{cursor}/json`` pages every version posted in the
interval (:attr:`FakeBiorxiv.page_size` a page). Faults (:meth:`fail_next`): ``429`` with
``Retry-After``, ``503``, ``html``, ``empty`` (``ok`` with an empty collection), ``pass``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from fakes.arxiv import LoopbackServer, Seen

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "biorxiv"
_INTERVAL = re.compile(r"^(\d{4}-\d{2}-\d{2})/(\d{4}-\d{2}-\d{2})/(\d+)$")


def load_preprints() -> dict[str, list[dict[str, Any]]]:
    data = json.loads((FIXTURES / "preprints.json").read_text(encoding="utf-8"))
    return {server: list(data[server]) for server in ("biorxiv", "medrxiv")}


class FakeBiorxiv(LoopbackServer):
    def __init__(self, page_size: int = 100) -> None:
        super().__init__()
        self.items = load_preprints()
        self.page_size = page_size

    def answer(
        self, seen: Seen, fault: tuple[str, float | None] | None
    ) -> tuple[int, str, bytes, dict[str, str]]:
        failed = self.common_fault(fault)
        if failed is not None:
            return failed
        parts = seen.path.split("/", 3)  # "", "details", server, rest
        if len(parts) < 4 or parts[1] != "details" or parts[2] not in self.items:
            return 404, "text/plain", b"not found", {}
        server, rest = parts[2], parts[3].removesuffix("/json")
        if fault and fault[0] == "empty":
            return self._json({"messages": [{"status": "ok"}], "collection": []})
        interval = _INTERVAL.match(rest)
        if interval:
            return self._interval(server, *interval.groups())
        doi = rest.removesuffix("/na").lower()
        found = [i for i in self.items[server] if i["doi"].lower() == doi]
        if not found:
            return self._json({"messages": [{"status": "no posts found"}], "collection": []})
        return self._json({"messages": [{"status": "ok"}], "collection": found})

    def _interval(
        self, server: str, since: str, until: str, cursor: str
    ) -> tuple[int, str, bytes, dict[str, str]]:
        chosen = [i for i in self.items[server] if since <= i["date"] <= until]
        start = int(cursor)
        page = chosen[start : start + self.page_size]
        if not chosen:
            return self._json({"messages": [{"status": "no posts found"}], "collection": []})
        message = {
            "status": "ok",
            "interval": f"{since}/{until}",
            "cursor": start,
            "count": len(page),
            "total": len(chosen),
        }
        return self._json({"messages": [message], "collection": page})

    @staticmethod
    def _json(data: Any) -> tuple[int, str, bytes, dict[str, str]]:
        return 200, "application/json; charset=UTF-8", json.dumps(data).encode(), {}
