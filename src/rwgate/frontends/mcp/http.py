"""Serving over streamable HTTP safely: loopback by default, a bearer token beyond it.

The SDK checks Host and Origin (DNS rebinding) only when it binds loopback. Here, on loopback
(127.0.0.1, localhost, ::1) that check stays, plus the bearer token when one is given; any other
address requires a token (``--auth-token`` or ``RWGATE_MCP_TOKEN``, at least 16 characters, sent as
``Authorization: Bearer TOKEN``, compared in constant time) and keeps Host and Origin checked
against the ``--allowed-host`` names (the bind address itself when it is a name or a single
address; a wildcard bind needs them spelled out).
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from rwgate.frontends.mcp.safety import BadArgument

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARD = frozenset({"0.0.0.0", "::", ""})
MIN_TOKEN = 16

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
_REFUSAL = b'{"error": "a bearer token is required"}'
_HEADERS = [
    (b"content-type", b"application/json"),
    (b"www-authenticate", b'Bearer realm="rwgate"'),
    (b"content-length", str(len(_REFUSAL)).encode()),
]


def _split(name: str) -> tuple[str, str]:
    """``(host as it appears in a Host header, port or "*")`` for ``name``, ``name:port``,
    ``[v6]:port`` or a bare IPv6 address."""
    if name.startswith("["):
        host, _, rest = name.partition("]")
        return host + "]", rest.lstrip(":") or "*"
    if name.count(":") == 1:
        host, port = name.split(":")
        return host, port or "*"
    return (f"[{name}]" if ":" in name else name), "*"


def security_settings(host: str, token: str | None, allowed: Sequence[str]) -> Any:
    """The SDK's TransportSecuritySettings for this bind; BadArgument when it would be unsafe."""
    from mcp.server.transport_security import TransportSecuritySettings

    if token is not None and len(token) < MIN_TOKEN:
        raise BadArgument(f"--auth-token: at least {MIN_TOKEN} characters (a random string)")
    if host not in LOOPBACK and token is None:
        raise BadArgument(
            f"--host {host} serves beyond this machine: give a bearer token (--auth-token or "
            "RWGATE_MCP_TOKEN), or bind 127.0.0.1"
        )
    names = list(allowed)
    if not names and host in LOOPBACK:
        names = ["127.0.0.1", "localhost", "::1"]
    elif not names and host in WILDCARD:
        raise BadArgument(
            f"--host {host or '0.0.0.0'}: name the host names clients use with --allowed-host "
            "(e.g. --allowed-host mcp.example.org), so requests for other names are refused"
        )
    elif not names:
        names = [host]
    parts = [_split(n) for n in names]
    hosts = [f"{h}:{p}" for h, p in parts] + [h for h, p in parts if p == "*"]  # port 80/443
    origins = [f"{scheme}://{h}:{p}" for h, p in parts for scheme in ("http", "https")]
    origins += [f"{scheme}://{h}" for h, _ in parts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


class BearerToken:
    """ASGI middleware: every HTTP request carries ``Authorization: Bearer TOKEN`` or gets 401."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send({"type": "http.response.start", "status": 401, "headers": _HEADERS})
                await send({"type": "http.response.body", "body": _REFUSAL})
                return
        await self.app(scope, receive, send)


def serve_http(
    server: Any, host: str, port: int, token: str | None, allowed: Sequence[str]
) -> None:
    """Run ``server`` (an MCPServer) over streamable HTTP with the checks above."""
    import uvicorn

    security = security_settings(host, token, allowed)
    app: Any = server.streamable_http_app(transport_security=security, host=host)
    if token is not None:
        app = BearerToken(app, token)
    uvicorn.run(app, host=host, port=port, log_level="warning")
