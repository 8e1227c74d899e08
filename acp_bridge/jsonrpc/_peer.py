"""A JSON-RPC 2.0 peer over a byte transport. It knows nothing of ACP.

Contract:
- Inbound requests and notifications each run in their own task, concurrently, under the
  one task group of `serve`; each request has its own cancel scope, so `$/cancel_request`
  (in either direction) ends it with -32800. A handler that is also a `RequestObserver` hears
  of each request synchronously, in read order, before its task is scheduled (so state a later
  line refers to exists from the moment the request was read); inside the handler,
  `current_request_id()` is the id of the request being handled.
- Every inbound request gets exactly one response; notifications never get one; a line that
  is not JSON-RPC gets an error with `id: null` (or the request's id when one is usable),
  and the connection keeps serving.
- Writes are serialised: a message is written whole, in the order it was queued. A
  handler's `Reply.then` runs after its response is on the wire.
- Outbound requests correlate by id. When the caller is cancelled, the peer is told with
  `$/cancel_request`; when the peer goes away, every waiting caller gets `PeerGone`.
- At end of input the in-flight requests are allowed to finish (bounded by
  `drain_timeout`), so a client that writes its requests and closes stdin still gets its
  answers.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import anyio
from anyio.abc import TaskGroup

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    PeerError,
    PeerGone,
    quote,
)
from acp_bridge.jsonrpc._envelope import (
    Invalid,
    Notification,
    Request,
    RequestId,
    Response,
    classify,
)
from acp_bridge.jsonrpc._errors import error_object, error_to_wire
from acp_bridge.jsonrpc._limits import params_problem, scrub
from acp_bridge.wire import DEFAULT_MAX_LINE_BYTES, BadFrame, NdjsonDecoder, Transport, encode

if TYPE_CHECKING:
    import jsonrpc_base

__all__ = [
    "CANCEL_REQUEST",
    "Handler",
    "JsonRpcPeer",
    "Reply",
    "RequestObserver",
    "Tracer",
    "current_request_id",
]

CANCEL_REQUEST = "$/cancel_request"
_log = logging.getLogger("acp_bridge.jsonrpc")
_CURRENT_REQUEST: contextvars.ContextVar[RequestId | None] = contextvars.ContextVar(
    "acp_bridge_jsonrpc_request", default=None
)


def current_request_id() -> RequestId | None:
    """The id of the inbound request whose handler is running (None outside a handler)."""
    return _CURRENT_REQUEST.get()


Tracer = Callable[[str, JsonValue], None]
"""Called with ("in" | "out", message) for every message, before handling / after encoding."""


@dataclass(frozen=True, slots=True)
class Reply:
    """A handler's result plus work that must happen after the response is written."""

    result: JsonValue
    then: Callable[[], Awaitable[None]] | None = None


class Handler(Protocol):
    """What the layer above provides.

    `handle_request` returns the result (or a `Reply`) or raises; raise
    `acp_bridge.errors.MethodNotFound` for a method it does not know. `handle_notification`
    must not raise for unknown methods (notifications are never answered).
    """

    async def handle_request(self, method: str, params: JsonValue) -> JsonValue | Reply: ...

    async def handle_notification(self, method: str, params: JsonValue) -> None: ...


@runtime_checkable
class RequestObserver(Protocol):
    """Optional for a `Handler`: told of each inbound request as soon as it is read.

    Called synchronously in read order, before the request's task is scheduled and before
    any later line is read; it must not block, and what it raises is logged and ignored.
    """

    def request_received(self, request_id: RequestId, method: str, params: JsonValue) -> None: ...


@dataclass(slots=True)
class _Pending:
    request: jsonrpc_base.Request
    done: anyio.Event = field(default_factory=anyio.Event)
    response: JsonObject | None = None
    gone: bool = False


class JsonRpcPeer:
    """One JSON-RPC connection. Create it, then `await serve(handler)`."""

    def __init__(
        self,
        transport: Transport,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        trace: Tracer | None = None,
        drain_timeout: float = 60.0,
    ) -> None:
        self._transport = transport
        self._decoder = NdjsonDecoder(max_line_bytes)
        self._trace = trace
        self._drain_timeout = drain_timeout
        self._write_lock = anyio.Lock(fast_acquire=True)  # per-message hot path
        self._inflight: dict[RequestId, anyio.CancelScope] = {}
        self._pending: dict[RequestId, _Pending] = {}
        self._next_id = 0
        self._closed = False
        self._tg: TaskGroup | None = None
        self._drained = anyio.Event()
        self._running = 0

    @property
    def closed(self) -> bool:
        """True once the peer stopped sending (end of input) or stopped reading."""
        return self._closed

    # -- serving -------------------------------------------------------------------------

    async def serve(self, handler: Handler) -> None:
        """Reads and dispatches until end of input, then drains in-flight requests."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                await self._read_loop(handler, tg)
            finally:
                self._closed = True
                self._fail_pending()
            with anyio.move_on_after(self._drain_timeout) as drain:
                if self._running:
                    await self._drained.wait()
            if drain.cancelled_caught:
                _log.warning("in-flight requests did not finish after end of input; cancelling")
            tg.cancel_scope.cancel()
        self._tg = None

    async def _read_loop(self, handler: Handler, tg: TaskGroup) -> None:
        while True:
            try:
                data = await self._transport.receive()
            except anyio.EndOfStream:
                frames = self._decoder.close()
                eof = True
            else:
                frames = self._decoder.feed(data)
                eof = False
            for item in frames:
                if isinstance(item, BadFrame):
                    await self._send_error(None, PARSE_ERROR, f"Parse error: {item.reason}")
                    continue
                self._traced("in", item.value)
                await self._dispatch(classify(item.value), handler, tg)
            if eof:
                return

    async def _dispatch(self, message: object, handler: Handler, tg: TaskGroup) -> None:
        if isinstance(message, Request):
            if message.id in self._inflight:
                await self._send_error(
                    message.id, INVALID_REQUEST, f"request id {quote(message.id)} is already in use"
                )
                return
            problem = params_problem(message.params)
            if problem is not None:  # ROBUST-TEXT-001: refused before any handler stores it
                field_path, text = problem
                await self._send_error(
                    message.id,
                    INVALID_PARAMS,
                    f"Invalid params for {quote(message.method)}: {field_path}: {text}",
                    {"errors": [{"field": field_path, "problem": text}]},
                )
                return
            # Registered before the task starts, so a $/cancel_request on the very next
            # line still finds it.
            scope = anyio.CancelScope()
            self._inflight[message.id] = scope
            self._running += 1  # counted now: the drain at end of input must wait for it
            if isinstance(handler, RequestObserver):
                try:
                    handler.request_received(message.id, message.method, message.params)
                except Exception as exc:
                    _log.error("request_received for %s failed", message.method, exc_info=exc)
            tg.start_soon(self._run_request, message, handler, scope)
        elif isinstance(message, Notification):
            if message.method == CANCEL_REQUEST:
                self._cancel_inflight(message.params)
            else:
                tg.start_soon(self._run_notification, message, handler)
        elif isinstance(message, Response):
            self._resolve(message)
        elif isinstance(message, Invalid):
            await self._send_error(
                message.id, INVALID_REQUEST, f"Invalid request: {message.reason}"
            )

    async def _run_request(
        self, request: Request, handler: Handler, scope: anyio.CancelScope
    ) -> None:
        try:
            await self._answer(request, handler, scope)
        finally:
            self._running -= 1
            if self._closed and not self._running:
                self._drained.set()

    async def _answer(self, request: Request, handler: Handler, scope: anyio.CancelScope) -> None:
        reply: JsonValue | Reply = None
        error: JsonObject | None = None
        _CURRENT_REQUEST.set(request.id)  # this task's own context (anyio copies it per task)
        try:
            with scope:
                reply = await handler.handle_request(request.method, request.params)
            if scope.cancelled_caught:
                error = error_object(REQUEST_CANCELLED, "Request cancelled")
        except Exception as exc:
            error = error_to_wire(_single(exc), method=request.method)
        finally:
            self._inflight.pop(request.id, None)
        if error is not None:
            await self._send({"jsonrpc": "2.0", "id": request.id, "error": error})
            return
        result = reply.result if isinstance(reply, Reply) else reply
        await self._send({"jsonrpc": "2.0", "id": request.id, "result": result})
        if isinstance(reply, Reply) and reply.then is not None:
            try:
                await reply.then()
            except Exception as exc:
                _log.error("follow-up of %s failed", request.method, exc_info=exc)

    async def _run_notification(self, note: Notification, handler: Handler) -> None:
        try:
            await handler.handle_notification(note.method, note.params)
        except Exception as exc:
            _log.error("notification %s failed", note.method, exc_info=exc)

    def _cancel_inflight(self, params: JsonValue) -> None:
        request_id = params.get("requestId") if isinstance(params, dict) else None
        scope = self._inflight.get(request_id) if isinstance(request_id, int | str) else None
        if scope is None:
            _log.debug("%s for unknown or finished request %r", CANCEL_REQUEST, request_id)
            return
        scope.cancel()

    # -- outbound ------------------------------------------------------------------------

    async def notify(self, method: str, params: JsonValue) -> None:
        """Sends a notification; returns once it is written."""
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: JsonValue) -> JsonValue:
        """Sends a request and waits for its result.

        Raises:
            PeerError: the peer answered with an error object.
            PeerGone: the connection ended before the answer.
        """
        if self._closed:
            raise PeerGone()
        self._next_id += 1
        request_id = self._next_id
        # Imported on the first request to the peer, not at start (uuid, platform: STARTUP-001).
        import jsonrpc_base

        pending = _Pending(jsonrpc_base.Request(method, params, request_id))
        self._pending[request_id] = pending
        try:
            await self._send(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
            await pending.done.wait()
        except anyio.get_cancelled_exc_class():
            if self._pending.pop(request_id, None) is not None and not self._closed:
                # Courtesy cancel (ACP cancellation.mdx): shielded and bounded, so a stuck
                # writer cannot keep a cancelled turn alive.
                with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
                    await self.notify(CANCEL_REQUEST, {"requestId": request_id})
            raise
        finally:
            self._pending.pop(request_id, None)
        if pending.gone or pending.response is None:
            raise PeerGone()
        try:
            result: JsonValue = pending.request.parse_response(pending.response)
        except jsonrpc_base.ProtocolError as exc:
            raise _peer_error(exc) from None
        return result

    def _resolve(self, response: Response) -> None:
        pending = self._pending.get(response.id)
        if pending is None:
            _log.debug("response for unknown or abandoned request %r ignored", response.id)
            return
        message: JsonObject = {"jsonrpc": "2.0", "id": response.id}
        # What the editor sent back is data (a file's text...): half characters become U+FFFD.
        if response.error is not None:
            message["error"] = scrub(response.error)
        else:
            message["result"] = scrub(response.result)
        pending.response = message
        pending.done.set()

    def _fail_pending(self) -> None:
        for pending in self._pending.values():
            pending.gone = True
            pending.done.set()

    # -- writing -------------------------------------------------------------------------

    async def _send_error(
        self, request_id: RequestId | None, code: int, message: str, data: JsonValue = None
    ) -> None:
        error = error_object(code, message, data)
        await self._send({"jsonrpc": "2.0", "id": request_id, "error": error})

    def _traced(self, direction: str, message: JsonValue) -> None:
        if self._trace is None:
            return
        try:
            self._trace(direction, message)
        except Exception as exc:  # a trace is a diagnostic: it never ends the connection
            _log.warning("could not trace a message (%s)", type(exc).__name__)

    async def notify_encoded(self, line: bytes, message: Callable[[], JsonObject]) -> None:
        """Writes a notification the caller encoded itself: `line` must be exactly
        `encode(message())` (the per-chunk hot path keeps a template per message);
        `message` is only called for the tracer."""
        if self._trace is not None:
            self._traced("out", message())
        await self._write(line)

    async def _send(self, message: JsonObject) -> None:
        data = encode(message)
        self._traced("out", message)
        await self._write(data)

    async def _write(self, data: bytes) -> None:
        async with self._write_lock:
            try:
                await self._transport.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                # The editor stopped reading: nothing more can be delivered.
                self._closed = True
                self._fail_pending()
                if self._tg is not None:
                    self._tg.cancel_scope.cancel()
                raise PeerGone("the editor stopped reading") from None


def _single(exc: Exception) -> BaseException:
    """Unwraps exception groups of one, so a handler's inner task group keeps the real error."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        inner = exc.exceptions[0]
        if not isinstance(inner, Exception):
            break
        exc = inner
    return exc


def _peer_error(exc: jsonrpc_base.ProtocolError) -> PeerError:
    args = exc.args
    code = args[0] if args and isinstance(args[0], int) else INTERNAL_ERROR
    message = args[1] if len(args) > 1 and isinstance(args[1], str) else str(exc)
    data: JsonValue = None
    if len(args) > 2 and isinstance(args[2], dict):
        error = args[2].get("error")
        if isinstance(error, dict):
            data = error.get("data")
    return PeerError(code, message, data)
