"""Every socket wait of a GET bounded by the run's deadline, the response headers included.

httpx's timeouts bound each read, not a response: a server that sends its headers (or its body) a
byte a second never trips a 30 s read timeout. So the network streams httpx reads from are
wrapped: each connect, read and write waits at most until the calling thread's :data:`DEADLINE`,
and one attempted after it fails at once as a timeout. Loaded only where a request really goes
out (it imports httpcore).
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import httpcore

if TYPE_CHECKING:
    import httpx

DEADLINE: ContextVar[float | None] = ContextVar("rwgate_io_deadline", default=None)
"""``time.monotonic()`` by which the request of this thread must be done; None: no bound."""


def _within(timeout: float | None, late: type[Exception]) -> float | None:
    """``timeout`` cut to what is left of the deadline; ``late`` raised when nothing is left."""
    deadline = DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise late("the run's deadline passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _within(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _within(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        bound = _within(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, bound))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        bound = _within(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.connect_tcp(host, port, bound, local_address, socket_options))

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        bound = _within(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.connect_unix_socket(path, bound, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def bound_by_deadline(client: httpx.Client) -> None:
    """Make every connection ``client`` opens (direct or through a proxy) keep :data:`DEADLINE`.

    httpx offers no public hook for the network backend, so it is swapped on each transport's
    httpcore pool; a transport of another shape is an error here, not a deadline quietly lost
    (``tests/unit/test_http.py`` holds a client to the deadline against a header drip)."""
    transports = [client._transport, *client._mounts.values()]
    for transport in transports:
        if transport is None:  # a pattern mounted to go direct (NO_PROXY)
            continue
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is None:
            raise RuntimeError(f"cannot bound {type(transport).__name__} by the run's deadline")
        if not isinstance(backend, _Backend):
            pool._network_backend = _Backend(backend)  # type: ignore[union-attr]
