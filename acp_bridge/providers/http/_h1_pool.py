"""A small keep-alive pool of `H1Connection`s, one list of idle connections per origin.

`acquire` takes a slot (at most `max_connections` requests in flight; waiting for one is
bounded by the `pool` timeout: PoolTimeout) and returns the newest idle connection to the
origin that is not `stale()` (the ones the server closed meanwhile are dropped, never tried),
else connects: TCP with `anyio.connect_tcp`, then TLS with the transport's `ssl.SSLContext`,
both within the `connect` timeout (ConnectTimeout; other failures ConnectError, the cause
chained for `_hints.connect_failure`). `release` gives the slot back and keeps the
connection if it is reusable (at most `max_idle` per origin), else closes it.
"""

from __future__ import annotations

import math
import ssl
from collections.abc import Callable

import anyio
import anyio.abc
import httpx
from anyio.streams.tls import TLSStream

from acp_bridge.providers.http._h1_connection import H1Connection

__all__ = ["H1Pool", "Origin"]

Origin = tuple[str, str, int]  # scheme, host, port


class H1Pool:
    """The connections of one transport (see the module docstring)."""

    def __init__(
        self,
        ssl_context: Callable[[], ssl.SSLContext],
        *,
        max_connections: int = 100,
        max_idle: int = 8,
    ) -> None:
        self._ssl_context = ssl_context
        self._max_connections = max_connections
        self._max_idle = max_idle
        self._idle: dict[Origin, list[H1Connection]] = {}
        self._slots: anyio.Semaphore | None = None
        self._closed = False

    def idle(self, origin: Origin) -> int:
        """How many idle connections to `origin` are kept."""
        return len(self._idle.get(origin, ()))

    async def acquire(
        self, origin: Origin, *, connect: float | None, pool: float | None
    ) -> H1Connection:
        if self._slots is None:
            self._slots = anyio.Semaphore(self._max_connections)
        try:
            with anyio.fail_after(math.inf if pool is None else pool):
                await self._slots.acquire()
        except TimeoutError:
            raise httpx.PoolTimeout("timed out waiting for a free connection") from None
        try:
            idle = self._idle.get(origin)
            while idle:
                connection = idle.pop()
                if not connection.stale():
                    return connection
                await connection.aclose()
            return await self._connect(origin, connect)
        except BaseException:
            self._slots.release()
            raise

    async def _connect(self, origin: Origin, bound: float | None) -> H1Connection:
        scheme, host, port = origin
        stream: anyio.abc.ByteStream | None = None
        try:
            with anyio.fail_after(math.inf if bound is None else bound):
                stream = await anyio.connect_tcp(host, port)
                if scheme == "https":
                    stream = await TLSStream.wrap(
                        stream,
                        hostname=host,
                        ssl_context=self._ssl_context(),
                        standard_compatible=False,
                    )
        except TimeoutError:
            if stream is not None:
                await anyio.aclose_forcefully(stream)
            raise httpx.ConnectTimeout(f"timed out connecting to {host}:{port}") from None
        except (OSError, ssl.SSLError, anyio.BrokenResourceError, anyio.EndOfStream) as exc:
            if stream is not None:
                await anyio.aclose_forcefully(stream)
            raise httpx.ConnectError(_connect_text(exc)) from exc
        return H1Connection(stream, tls=scheme == "https")

    async def release(self, origin: Origin, connection: H1Connection) -> None:
        """Called once per acquired connection, when its response is done with: keeps it
        for the next request if it is reusable, else closes it."""
        if self._slots is not None:
            self._slots.release()
        if self._closed or not connection.reusable or connection.closed:
            await connection.aclose()
            return
        idle = self._idle.setdefault(origin, [])
        if len(idle) >= self._max_idle:
            await connection.aclose()
            return
        idle.append(connection)

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                await connection.aclose()


def _connect_text(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    cause = exc.__cause__
    if cause is not None and str(cause) and str(cause) not in text:
        text = f"{text} ({cause})"
    return text
