"""A real HTTP/1.1 server on 127.0.0.1 that plays scripted replies and breaks them on purpose.

Each accepted connection reads one request and plays the next `Reply` of the server's list
(every reply closes its connection). A reply is a status line and headers, then steps:

    Send(data)        one HTTP chunk (chunked framing) or raw bytes (close-delimited framing)
    SendRaw(data)     bytes exactly as given, e.g. a chunk header promising more than follows
    WaitFor(event)    pause until the test sets the anyio.Event (a stall, or "after you read X")
    Pause(seconds)    say nothing for that long (a model processing a long prompt): a stimulus
    AwaitHangup(event) wait until the client closes the connection, then set the event
    Fin()             close the socket in order (FIN) without finishing the body
    Rst()             reset the connection (SO_LINGER 0): the client sees ECONNRESET
    End()             finish the body cleanly (last chunk) and close

A `GET .../models` (the bridge's background fetch of the provider's model list: OpenAI-compatible
`/models`, Anthropic `/v1/models`, Gemini `/models`) is answered by the server's `models` reply
(by default an empty listing, which keeps the configured models) and recorded in
`model_requests`, never taking a scripted reply: the scripted replies stay in the order of the
model calls.

`sse_reply(...)` and `json_reply(...)` build the common replies; `drain(stream)` collects a
provider stream's events and its `ModelStreamError`; `stream_at(...)` streams one request
of a provider at a server of these replies, and `assert_fault` checks the error it ended
with. Everything runs on real sockets; the tests never sleep: stalls are released by events,
and waits are bounded by `fail_after`.
"""

from __future__ import annotations

import json
import socket
import struct
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, Self, TypeAlias

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from acp_bridge.providers import FaultKind, ModelRequest, ModelStreamError, Phase, StreamEvent
from acp_bridge.providers.http import HttpProviderOptions

__all__ = [
    "AwaitHangup",
    "End",
    "Fin",
    "KeepAlive",
    "LoopbackServer",
    "Pause",
    "ReceivedRequest",
    "Reply",
    "Rst",
    "Run",
    "Send",
    "SendRaw",
    "Step",
    "WaitFor",
    "assert_cut_after",
    "assert_fault",
    "drain",
    "empty_listing",
    "is_model_listing",
    "json_reply",
    "sse",
    "sse_reply",
    "stream_at",
]

_HEAD_LIMIT = 64 * 1024
_DRAIN_LIMIT = 5.0
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
    529: "Overloaded",
}


@dataclass(frozen=True, slots=True)
class Send:
    data: bytes | str


@dataclass(frozen=True, slots=True)
class SendRaw:
    data: bytes


@dataclass(frozen=True, slots=True)
class WaitFor:
    event: anyio.Event


@dataclass(frozen=True, slots=True)
class Pause:
    seconds: float


@dataclass(frozen=True, slots=True)
class AwaitHangup:
    event: anyio.Event


@dataclass(frozen=True, slots=True)
class KeepAlive:
    """Sends `data` (an SSE comment) every `every` seconds until the client hangs up: a
    server keeping an idle stream open, as proxies and some providers do."""

    data: str = ": keep-alive\n\n"
    every: float = 0.02


@dataclass(frozen=True, slots=True)
class Fin:
    pass


@dataclass(frozen=True, slots=True)
class Rst:
    pass


@dataclass(frozen=True, slots=True)
class End:
    pass


Step: TypeAlias = Send | SendRaw | WaitFor | Pause | AwaitHangup | KeepAlive | Fin | Rst | End


@dataclass(frozen=True, slots=True)
class Reply:
    """What one connection gets. `framing="close"` sends no Transfer-Encoding at all."""

    status: int = 200
    headers: Sequence[tuple[str, str]] = (("content-type", "text/event-stream"),)
    steps: Sequence[Step] = ()
    framing: Literal["chunked", "close"] = "chunked"


@dataclass(frozen=True, slots=True)
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def sse(data: Any, *, event: str | None = None) -> str:
    """One SSE event; `data` that is not a string is JSON-encoded on one line."""
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return head + "".join(f"data: {line}\n" for line in text.split("\n")) + "\n"


def sse_reply(*events: str | Step, then: Step | None = None, **kwargs: Any) -> Reply:
    """A 200 event stream: each string is sent as its own chunk, then `then` (default End)."""
    steps: list[Step] = [Send(item) if isinstance(item, str) else item for item in events]
    steps.append(End() if then is None else then)
    return Reply(steps=tuple(steps), **kwargs)


def json_reply(status: int, body: Any, headers: Sequence[tuple[str, str]] = ()) -> Reply:
    """A complete JSON response (Content-Length framing), e.g. an HTTP error."""
    payload = body if isinstance(body, str) else json.dumps(body)
    return Reply(
        status=status,
        headers=(("content-type", "application/json"), *headers),
        steps=(SendRaw(payload.encode()), End()),
        framing="close",
    )


def empty_listing() -> Reply:
    """A model listing with no models, in every provider's shape (PICK-002: nothing changes)."""
    return json_reply(200, {"object": "list", "data": [], "models": []})


def is_model_listing(request: ReceivedRequest) -> bool:
    return request.method == "GET" and request.path.split("?", 1)[0].endswith("/models")


@dataclass
class LoopbackServer:
    """Serves `replies` in order, one per connection, on 127.0.0.1 and an ephemeral port;
    model-list GETs get `models` (see the module docstring)."""

    replies: Sequence[Reply]
    models: Reply = field(default_factory=empty_listing)
    requests: list[ReceivedRequest] = field(default_factory=list)
    model_requests: list[ReceivedRequest] = field(default_factory=list)
    port: int = 0
    _task_group: anyio.abc.TaskGroup | None = None
    _listener: anyio.abc.Listener[anyio.abc.SocketStream] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> Self:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self._listener = listener
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(listener.serve, self._handle)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        assert self._task_group is not None
        assert self._listener is not None
        self._task_group.cancel_scope.cancel()
        await self._task_group.__aexit__(None, None, None)
        await self._listener.aclose()

    async def _handle(self, stream: anyio.abc.SocketStream) -> None:
        try:
            request = await _read_request(stream)
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
            await stream.aclose()
            return
        if is_model_listing(request):
            self.model_requests.append(request)
            reply = self.models
        else:
            index = len(self.requests)
            self.requests.append(request)
            reply = self.replies[index] if index < len(self.replies) else _unexpected(index)
        try:
            await _play(stream, reply)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the client went away first; that is its right
        finally:
            await stream.aclose()


def _unexpected(index: int) -> Reply:
    return json_reply(500, {"error": {"message": f"no reply scripted for request {index + 1}"}})


async def _read_request(stream: anyio.abc.SocketStream) -> ReceivedRequest:
    buffered = BufferedByteReceiveStream(stream)
    head = await buffered.receive_until(b"\r\n\r\n", _HEAD_LIMIT)
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, path, _version = request_line.split(" ", 2)
    headers: dict[str, str] = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    body = await buffered.receive_exactly(length) if length else b""
    return ReceivedRequest(method=method, path=path, headers=headers, body=body)


async def _play(stream: anyio.abc.SocketStream, reply: Reply) -> None:
    chunked = reply.framing == "chunked"
    lines = [f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}"]
    lines += [f"{name}: {value}" for name, value in reply.headers]
    lines.append("connection: close")
    if chunked:
        lines.append("transfer-encoding: chunked")
    await stream.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    for step in reply.steps:
        if isinstance(step, Send):
            data = step.data.encode() if isinstance(step.data, str) else step.data
            await stream.send(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
        elif isinstance(step, SendRaw):
            await stream.send(step.data)
        elif isinstance(step, WaitFor):
            await step.event.wait()
        elif isinstance(step, Pause):
            await anyio.sleep(step.seconds)  # the server's silence, not a wait for a result
        elif isinstance(step, KeepAlive):
            data = step.data.encode()
            try:
                while True:
                    await stream.send(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
                    await anyio.sleep(step.every)  # the server's keep-alive interval
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                return
        elif isinstance(step, AwaitHangup):
            await _wait_for_hangup(stream)
            step.event.set()
            return
        elif isinstance(step, Fin):
            await _close_after_flush(stream)
            return
        elif isinstance(step, Rst):
            raw = stream.extra(anyio.abc.SocketAttribute.raw_socket)
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return  # aclose() now resets the connection
        elif isinstance(step, End):
            if chunked:
                await stream.send(b"0\r\n\r\n")
            await _close_after_flush(stream)
            return


async def _close_after_flush(stream: anyio.abc.SocketStream) -> None:
    """FIN after everything sent, then wait for the client to hang up (aclose would abort)."""
    await stream.send_eof()
    await _wait_for_hangup(stream)


async def _wait_for_hangup(stream: anyio.abc.SocketStream) -> None:
    try:
        while await stream.receive():
            pass
    except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
        return


async def drain(
    stream: AsyncIterator[StreamEvent],
    *,
    on_event: Callable[[StreamEvent], None] | None = None,
) -> tuple[list[StreamEvent], ModelStreamError | None]:
    """All events of a provider stream and the `ModelStreamError` that ended it, if any."""
    events: list[StreamEvent] = []
    error: ModelStreamError | None = None
    with anyio.fail_after(_DRAIN_LIMIT):
        try:
            async for event in stream:
                events.append(event)
                if on_event is not None:
                    on_event(event)
        except ModelStreamError as exc:
            error = exc
    return events, error


async def stream_at(
    provider_type: Callable[[HttpProviderOptions], Any],
    base_path: str,
    replies: Sequence[Reply],
    request: ModelRequest,
    *,
    on_event: Callable[[StreamEvent], None] | None = None,
    **settings: Any,
) -> tuple[list[StreamEvent], ModelStreamError | None, LoopbackServer]:
    """One request of a provider (`model`, `idle_timeout` 2 s unless given) at a server
    playing `replies` under `base_path`: its events (each to `on_event` as it comes), its
    error, and the server."""
    async with LoopbackServer(replies) as server:
        options = HttpProviderOptions(
            **{"idle_timeout": 2.0, **settings}, base_url=server.base_url + base_path
        )
        async with provider_type(options) as provider:
            events, error = await drain(provider.stream(request), on_event=on_event)
    return events, error, server


Run: TypeAlias = Callable[
    ..., Awaitable[tuple[list[StreamEvent], ModelStreamError | None, "LoopbackServer"]]
]
"""A provider test file's `run(*replies, on_event=...)`: `stream_at` for its provider."""


async def assert_cut_after(
    run: Run, reply: Reply, release: Any, expected: list[StreamEvent], unseen: type
) -> None:
    """The server cuts the stream once `expected[-1]` was decoded (`release` is set then):
    the provider gave exactly `expected`, never an `unseen` event, and failed as
    stream_interrupted after one request (no transport-level retry)."""
    events, error, server = await run(
        reply, on_event=lambda event: release.set() if event == expected[-1] else None
    )
    assert events == expected
    assert not any(isinstance(e, unseen) for e in events)
    assert_fault(error, FaultKind.STREAM_INTERRUPTED)
    assert len(server.requests) == 1


def assert_fault(
    error: ModelStreamError | None,
    kind: FaultKind,
    *,
    phase: Phase = Phase.STREAM,
    retryable: bool = True,
    status: int | None = None,
    retry_after: float | None = None,
) -> None:
    """The stream failed with this classification (PROV-001: kind, phase, retryability)."""
    assert error is not None, "expected the stream to fail"
    assert (error.kind, error.phase, error.retryable, error.status, error.retry_after) == (
        kind,
        phase,
        retryable,
        status,
        retry_after,
    )
