"""The forms "no network" takes on a laptop, known from the first request.

A name that does not resolve and a refused connection say so plainly (:func:`unreachable_reason`).
The other forms look like answers, or like a server's passing trouble, and would cost a build
every retry of every request: a corporate proxy refusing the request (a ``403`` whose headers or
page say a proxy, a ``407``, a refused ``CONNECT`` tunnel), a firewall resetting the connection
before the server ever answered this run, a captive portal (a ``200`` web page where an API
answers JSON, or a redirect to another host). None heals within a run: each is a reason that
ends the look-ups of that server after one request; the report then says once what to do.
"""

from __future__ import annotations

import errno
import socket
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

_PROXY_HEADERS = ("via", "x-squid-error", "proxy-authenticate", "proxy-agent", "x-proxy-error")
_PROXY_WORDS = (
    "proxy",
    "squid",
    "firewall",
    "web filter",
    "access denied",
    "blocked",
    "zscaler",
    "forcepoint",
    "fortiguard",
    "bluecoat",
)
_SNIFF = 4096
"""Characters of a refusal page read for a proxy's words."""
NO_NETWORK_HINT = "(no network?)"
REFUSED = "connection refused"
_UNREACHABLE_ERRNOS = frozenset(
    {errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ENETDOWN, errno.EHOSTDOWN}
)


def _host(server: str) -> str:
    return server.partition("://")[2] or server


def _proxy_sign(response: httpx.Response) -> str | None:
    """What says a proxy answered: a proxy header (its value), or a proxy's words in the page."""
    for name in _PROXY_HEADERS:
        value = response.headers.get(name)
        if value is not None:
            return f"{name}: {' '.join(value.split())[:60]}"
    ctype = response.headers.get("content-type", "").lower()
    if "json" in ctype:
        return None  # an API's own refusal
    page = response.content[:_SNIFF].decode("utf-8", "replace").lower()
    found = next((word for word in _PROXY_WORDS if word in page), None)
    return f"a page saying {found!r}" if found else None


def _is_page(response: httpx.Response) -> bool:
    ctype = response.headers.get("content-type", "").lower()
    if "html" in ctype:
        return True
    start = response.content[:256].lstrip().lower()
    return start.startswith((b"<!doctype html", b"<html"))


def blocked_answer(response: httpx.Response, server: str) -> str | None:
    """Why ``response`` is the network in the way rather than ``server`` answering (a proxy's
    refusal, a captive portal's page), or None for an answer of the server's own."""
    host, status = _host(server), response.status_code
    if status == 407:
        return f"{host}: a proxy asks for a login (HTTP 407) {NO_NETWORK_HINT}"
    if status == 403:
        sign = _proxy_sign(response)
        if sign is not None:
            return f"{host}: refused by a proxy (HTTP 403, {sign}) {NO_NETWORK_HINT}"
    if status == 200 and _is_page(response):
        return (
            f"{host}: answered with a web page, not data (a captive portal or login page?) "
            f"{NO_NETWORK_HINT}"
        )
    return None


def redirected_away(server: str, target: str) -> str:
    """The reason for a redirect to another host: an API never sends one, a portal does."""
    return (
        f"{_host(server)}: redirected to another host ({target[:60]}; a captive portal or login "
        f"page?) {NO_NETWORK_HINT}"
    )


def blocked_transport(exc: Exception, server: str, answered_before: bool) -> str | None:
    """Why a transport failure is the network in the way: a proxy that refused the tunnel, or a
    connection reset before ``server`` ever answered this run (``answered_before``: a reset
    after an answer is the server's passing trouble, and is retried). None otherwise."""
    import httpx

    host = _host(server)
    if isinstance(exc, httpx.ProxyError):
        said = " ".join(str(exc).split())[:60] or "refused"
        return f"{host}: the proxy refused the connection ({said}) {NO_NETWORK_HINT}"
    if answered_before:
        return None
    if any(isinstance(e, OSError) and e.errno == errno.ECONNRESET for e in _chain(exc)):
        return f"{host}: the connection was reset before any answer (a firewall?) {NO_NETWORK_HINT}"
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < 8:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def unreachable_reason(exc: Exception, server: str) -> str | None:
    """Why ``server`` cannot be reached this run (its name does not resolve, no route to it, the
    connection refused), or None for a failure that may heal (a reset, a timeout)."""
    host = _host(server)
    for error in _chain(exc):
        if isinstance(error, socket.gaierror):
            return f"{host}: the name does not resolve (no network?)"
        if isinstance(error, OSError) and error.errno in _UNREACHABLE_ERRNOS:
            if error.errno == errno.ECONNREFUSED:
                return f"{host}: {REFUSED}"
            return f"{host}: no route to the host (no network?)"
    return None


def transport_reason(exc: Exception) -> str:
    """A short name for a network failure; the full chain goes nowhere near the report."""
    chain = _chain(exc)
    if any(isinstance(e, ConnectionRefusedError) or "refused" in str(e).lower() for e in chain):
        return REFUSED
    if any("disconnected" in str(e).lower() or isinstance(e, ConnectionResetError) for e in chain):
        return "connection dropped by the server"
    return f"connection failed ({type(exc).__name__}: {str(exc)[:80]})"
