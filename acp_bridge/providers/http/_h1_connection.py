"""One HTTP/1.1 connection on an anyio byte stream, and the body stream of its response.

`H1Connection` sends one request at a time and reads its response with `_h1_parse`; every
failure is an httpx exception (WriteError, WriteTimeout, ReadError, ReadTimeout,
`FirstTokenTimeout`, RemoteProtocolError), so the providers' classification (`_failures`)
sees what it saw with httpcore. `H1Body` is the response's `httpx.AsyncByteStream`: each item
is ALL the body bytes one socket read decoded to, and it iterates without an async
generator (`__anext__` directly).

Read deadlines come from the request's `timeout` extension (a `SwitchedReadTimeout` for
TIMEOUT-001). On a plain TCP socket a read first polls the socket: if the kernel already holds
data (the hot path when the bridge falls behind a fast stream), the read cannot wait long
and gets no cancel scope; only a read that may wait is bounded by one. TLS reads always are
(a readable socket may hold half a TLS record).

Reuse: `reusable` once the body was read to its end on a keep-alive response with nothing
after it; `stale()` says an idle connection has something to read (the server closed it, or
sent what nobody asked for), so the pool drops it before reuse rather than fail a request.
"""

from __future__ import annotations

import math
import select
from collections.abc import Awaitable, Callable
from typing import Self

import anyio
import anyio.abc
import httpx

from acp_bridge.providers.http._h1_parse import ResponseHead, ResponseParser
from acp_bridge.providers.http._read_timeout import FirstTokenTimeout, SwitchedReadTimeout

__all__ = ["H1Body", "H1Connection", "ReadTimeoutValue"]

# asyncio's transports read up to 256 KiB at a time: take all of it in one item.
_READ_SIZE = 256 * 1024
ReadTimeoutValue = float | SwitchedReadTimeout | None
_ReadErrors = (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)


class H1Connection:
    """An open HTTP/1.1 connection to one origin (see the module docstring)."""

    def __init__(self, stream: anyio.abc.ByteStream, *, tls: bool) -> None:
        self._stream = stream
        self.closed = False
        self.reusable = False
        self._poll: select.poll | None = None
        self._stale_poll: select.poll | None = None
        self._socket = sock = stream.extra(anyio.abc.SocketAttribute.raw_socket, None)
        if sock is not None and hasattr(select, "poll"):
            poller = select.poll()
            poller.register(sock.fileno(), select.POLLIN)
            self._stale_poll = poller
            if not tls:
                self._poll = poller

    def stale(self) -> bool:
        """True if the idle connection has anything to read: EOF, a reset or stray bytes."""
        if self.closed or (self._socket is not None and self._socket.fileno() < 0):
            return True
        if self._stale_poll is None:
            return False
        return bool(self._stale_poll.poll(0))

    async def send(self, data: bytes, bound: float | None) -> None:
        try:
            with anyio.fail_after(math.inf if bound is None else bound):
                await self._stream.send(data)
        except TimeoutError:
            raise httpx.WriteTimeout("timed out writing the request") from None
        except _ReadErrors as exc:
            raise httpx.WriteError(_describe(exc, "writing the request failed")) from exc

    async def receive(self, bound: ReadTimeoutValue) -> bytes:
        """The next bytes from the server; b"" once it closed. `bound` is the request's
        read timeout (a `SwitchedReadTimeout`, seconds, or None)."""
        poll = self._poll
        if poll is not None and poll.poll(0):
            # The kernel holds data (or EOF): this read completes at once, no deadline.
            return await self._read()
        now = anyio.current_time()
        if bound is None:
            deadline = math.inf
        elif isinstance(bound, SwitchedReadTimeout):
            deadline = bound.read_deadline(now)
        else:
            deadline = now + bound
        data = None
        with anyio.CancelScope(deadline=deadline):
            data = await self._read()
        if data is None:
            if isinstance(bound, SwitchedReadTimeout) and not bound.switched:
                raise FirstTokenTimeout("no response within the first-token timeout")
            raise httpx.ReadTimeout("timed out reading the response")
        return data

    async def _read(self) -> bytes:
        try:
            return await self._stream.receive(_READ_SIZE)
        except anyio.EndOfStream:
            return b""
        except _ReadErrors as exc:
            raise httpx.ReadError(_describe(exc, "reading the response failed")) from exc

    async def response_head(self, parser: ResponseParser, bound: ReadTimeoutValue) -> ResponseHead:
        """Reads until `parser` has the final response head."""
        while True:
            data = await self.receive(bound)
            if not data:
                raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
            head = parser.head(data)
            if head is not None:
                return head

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            self.reusable = False
            await anyio.aclose_forcefully(self._stream)


def _describe(exc: BaseException, what: str) -> str:
    cause = exc.__cause__ or exc.__context__
    detail = str(exc) or (str(cause) if cause is not None else "") or type(exc).__name__
    return f"{what}: {detail}"


class H1Body(httpx.AsyncByteStream):
    """The body of one response: decoded body bytes, one item per socket read.

    At its end the connection goes back to `release` (reusable or not); closed before its
    end (a cancelled, failed or abandoned read), the connection is closed.
    """

    def __init__(
        self,
        connection: H1Connection,
        parser: ResponseParser,
        head: ResponseHead,
        timeout: ReadTimeoutValue,
        release: Callable[[H1Connection], Awaitable[None]],
    ) -> None:
        self._connection = connection
        self._parser = parser
        self._keep_alive = head.keep_alive
        self._timeout = timeout
        self._release: Callable[[H1Connection], Awaitable[None]] | None = release
        self._first = parser.pending()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> bytes:
        first = self._first
        if first:
            self._first = b""
            return first
        parser = self._parser
        connection = self._connection
        try:
            while not parser.complete:
                data = await connection.receive(self._timeout)
                if not data:
                    parser.eof()  # raises unless the body ends with the connection
                    self._keep_alive = False
                    break
                piece = parser.body(data)
                if piece:
                    return piece
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.aclose()
            raise
        await self._finish()
        raise StopAsyncIteration

    async def _finish(self) -> None:
        release, self._release = self._release, None
        if release is not None:
            connection = self._connection
            connection.reusable = self._keep_alive and not self._parser.extra
            await release(connection)

    async def aclose(self) -> None:
        if self._release is None:
            return
        if not self._parser.complete:
            await self._connection.aclose()  # abandoned mid-body: it cannot be reused
        await self._finish()
