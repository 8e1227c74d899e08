"""Loopback servers for the HTTP/1.1 transport's tests: a keep-alive server and a proxy.

`KeepAliveServer` serves many requests per connection (unlike `loopback_http`, whose replies
close theirs): each request takes the next script of steps, bytes sent as given, an
`anyio.Event` waited for (or the client's hangup), `CLOSE` closing the connection; it
records which connection carried each request and when the client hung up on each. Optionally TLS
(an `ssl.SSLContext` for the server side, from trustme).

`ForwardProxy` is a real HTTP proxy: absolute-form requests are forwarded (the request line
rewritten to origin-form) and `CONNECT host:port` opens a tunnel; every host name is sent to
`upstream` (the test's "DNS"), and every request line it saw is recorded.
"""

from __future__ import annotations

import contextlib
import json
import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.tls import TLSListener

__all__ = ["CLOSE", "ForwardProxy", "KeepAliveServer", "Seen", "chunked", "sse_events"]

CLOSE = "close"
Step = bytes | anyio.Event | str


def chunked(*pieces: bytes, head: bytes = b"") -> bytes:
    """A complete chunked 200 response with `pieces` as its chunks."""
    body = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces)
    return (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
        + head
        + b"\r\n"
        + body
        + b"0\r\n\r\n"
    )


def sse_events(*texts: str) -> list[bytes]:
    """OpenAI Chat Completions chunks for `texts`, a stop chunk and [DONE], one per item."""

    def event(delta: dict[str, str], finish: str | None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        payload = {"id": "c", "model": "m", "choices": [choice]}
        return b"data: " + json.dumps(payload).encode() + b"\n\n"

    return [
        *(event({"content": text}, None) for text in texts),
        event({}, "stop"),
        b"data: [DONE]\n\n",
    ]


@dataclass(frozen=True, slots=True)
class Seen:
    connection: int
    request_line: bytes
    headers: dict[str, str]
    body: bytes


async def _read_head(reader: BufferedByteReceiveStream) -> tuple[bytes, dict[str, str], bytes]:
    head = await reader.receive_until(b"\r\n\r\n", 64 * 1024)
    line, *rest = head.split(b"\r\n")
    headers = {}
    for raw in rest:
        name, _, value = raw.partition(b":")
        headers[name.decode().lower()] = value.strip().decode()
    return line, headers, head + b"\r\n\r\n"


class _Serving:
    """A loopback listener whose connections go to `_handle`, from enter to exit."""

    port = 0
    _group: anyio.abc.TaskGroup | None = None
    _listener: anyio.abc.Listener[anyio.abc.SocketStream] | None = None

    def _server_tls(self) -> ssl.SSLContext | None:
        return None

    async def _handle(self, stream: Any) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        self._listener = listener
        served: anyio.abc.Listener[Any] = listener
        tls = self._server_tls()
        if tls is not None:
            served = TLSListener(listener, tls, standard_compatible=False)
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(served.serve, self._handle)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._group is not None
        assert self._listener is not None
        self._group.cancel_scope.cancel()
        await self._group.__aexit__(None, None, None)
        await self._listener.aclose()


@dataclass
class KeepAliveServer(_Serving):
    scripts: Sequence[Sequence[Step]]
    tls: ssl.SSLContext | None = None
    seen: list[Seen] = field(default_factory=list)
    connections: int = 0
    hung_up: list[anyio.Event] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def _server_tls(self) -> ssl.SSLContext | None:
        return self.tls

    async def _handle(self, stream: anyio.abc.ByteStream) -> None:
        number = self.connections
        self.connections += 1
        hung_up = anyio.Event()
        self.hung_up.append(hung_up)
        reader = BufferedByteReceiveStream(stream)
        try:
            while True:
                try:
                    line, headers, _ = await _read_head(reader)
                except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
                    return
                body = await reader.receive_exactly(int(headers.get("content-length", "0")))
                index = len(self.seen)
                self.seen.append(Seen(number, line, headers, body))
                for step in self.scripts[index]:
                    if isinstance(step, anyio.Event):
                        if await _hangup_before(step, reader):
                            return
                    elif step == CLOSE:
                        return
                    else:
                        assert isinstance(step, bytes)
                        await stream.send(step)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream):
            pass
        finally:
            hung_up.set()
            await anyio.aclose_forcefully(stream)


async def _hangup_before(event: anyio.Event, reader: BufferedByteReceiveStream) -> bool:
    """Waits for `event`; True if the client hung up first (no request is pipelined, so
    anything read meanwhile is the hangup)."""
    hung_up = False
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            nonlocal hung_up
            with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                await reader.receive()
            hung_up = True
            group.cancel_scope.cancel()

        group.start_soon(watch)
        await event.wait()
        group.cancel_scope.cancel()
    return hung_up


@dataclass
class ForwardProxy(_Serving):
    upstream: tuple[str, int]
    lines: list[bytes] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _handle(self, client: anyio.abc.SocketStream) -> None:
        reader = BufferedByteReceiveStream(client)
        try:
            line, _, head = await _read_head(reader)
            self.lines.append(line)
            method, target, version = line.split(b" ")
            upstream = await anyio.connect_tcp(*self.upstream)
            if method == b"CONNECT":
                await client.send(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:  # absolute-form: forward with the origin-form path
                path = b"/" + target.split(b"://", 1)[1].partition(b"/")[2]
                await upstream.send(b" ".join((method, path, version)) + head[len(line) :])
            async with upstream, anyio.create_task_group() as group:
                group.start_soon(_pipe, reader, upstream)
                await _pipe(upstream, client)
                group.cancel_scope.cancel()
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, OSError):
            pass
        finally:
            await anyio.aclose_forcefully(client)


async def _pipe(source: anyio.abc.ByteReceiveStream, sink: anyio.abc.ByteSendStream) -> None:
    try:
        while True:
            await sink.send(await source.receive())
    except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass
