"""A JSON-RPC 2.0 peer over a byte transport. It knows nothing of ACP.

Contract:
- Inbound requests and notifications each run in their own task, concurrently, under the
  one task group of `serve`; each request has its own cancel scope, so `$/cancel_request`
  (in either direction) ends it with -32800. A handler that is also a `RequestObserver` hears
  of each request synchronously, in read order, before its task is scheduled (so state a later
  line refers to exists from the moment the request was read); inside the handler,
  `current_request_id()` is the id of the request being handled, and `respond` writes its
  response before the handler returns (the turn's own task writes it, issue 15.2).
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

import logging
from collections.abc import Callable, Sequence

import anyio
from anyio.abc import TaskGroup

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    REQUEST_CANCELLED,
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
from acp_bridge.jsonrpc._errors import error_object, error_to_wire, single_error
from acp_bridge.jsonrpc._handler import (
    CANCEL_REQUEST,
    Exchange,
    Handler,
    Reply,
    RequestObserver,
    Tracer,
    current_exchange,
    set_current_exchange,
    traced,
)
from acp_bridge.jsonrpc._limits import params_problem
from acp_bridge.jsonrpc._outbound import Outbound
from acp_bridge.jsonrpc._writer import LineWriter
from acp_bridge.wire import DEFAULT_MAX_LINE_BYTES, BadFrame, NdjsonDecoder, Transport, encode

__all__ = ["JsonRpcPeer"]

_log = logging.getLogger("acp_bridge.jsonrpc")


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
        self._writer = LineWriter(transport, trace, self._stopped_reading)
        self._send = self._writer.send  # bound once: every message goes through it
        self._inflight: dict[RequestId, anyio.CancelScope] = {}
        self._outbound = Outbound()
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
                self._outbound.fail_all()
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
                traced(self._trace, "in", item.value)
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
            self._outbound.resolve(message)
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
        exchange = Exchange(request.id, self)
        set_current_exchange(exchange)  # this task's own context
        try:
            with scope:
                reply = await handler.handle_request(request.method, request.params)
            if scope.cancelled_caught:
                error = error_object(REQUEST_CANCELLED, "Request cancelled")
        except Exception as exc:
            if exchange.answered:
                _log.error("%s failed after its response was written", request.method, exc_info=exc)
            error = error_to_wire(single_error(exc), method=request.method)
        finally:
            if self._inflight.get(request.id) is scope:
                del self._inflight[request.id]
        if exchange.answered:
            pass  # written by `respond`: nothing more for this request, not even an error
        elif error is not None:
            await self._send({"jsonrpc": "2.0", "id": request.id, "error": error})
            return
        else:
            result = reply.result if isinstance(reply, Reply) else reply
            await self._writer.send_response(request.id, result)
        if isinstance(reply, Reply) and reply.then is not None:
            try:
                await reply.then()
            except Exception as exc:
                _log.error("follow-up of %s failed", request.method, exc_info=exc)

    async def respond(self, reply: Reply) -> bool:
        """Writes, from a handler of this peer, the response of the request it handles, before
        the handler returns (then it returns `reply`, whose `then` runs once it did). Nothing
        else is written for that request: not an error it raises after, nor a cancellation
        (a `$/cancel_request` from now on finds no request). False, writing nothing, outside
        a handler of this peer or when its response is written already."""
        exchange = current_exchange()
        if exchange is None or exchange.peer is not self or exchange.answered:
            return False
        # From now on a $/cancel_request finds nothing; a cancellation before the write (it
        # writes nothing then) is answered by the request's own cancellation error.
        self._inflight.pop(exchange.id, None)
        await self._writer.send_response(exchange.id, reply.result)
        exchange.answered = True
        return True

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
        request_id, pending = self._outbound.open(method, params)
        try:
            await self._send(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
            await pending.done.wait()
        except anyio.get_cancelled_exc_class():
            if self._outbound.forget(request_id) and not self._closed:
                # Courtesy cancel (ACP cancellation.mdx): shielded and bounded, so a stuck
                # writer cannot keep a cancelled turn alive.
                with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
                    await self.notify(CANCEL_REQUEST, {"requestId": request_id})
            raise
        finally:
            self._outbound.forget(request_id)
        return pending.result()

    # -- writing -------------------------------------------------------------------------

    async def _send_error(
        self, request_id: RequestId | None, code: int, message: str, data: JsonValue = None
    ) -> None:
        error = error_object(code, message, data)
        await self._send({"jsonrpc": "2.0", "id": request_id, "error": error})

    async def notify_encoded(self, line: bytes, message: Callable[[], JsonObject]) -> None:
        """Writes a notification the caller encoded itself: `line` must be exactly
        `encode(message())` (the per-chunk hot path keeps a template per message);
        `message` is only called for the tracer."""
        await self._writer.send_encoded(line, message)

    async def notify_lines(self, lines: Sequence[bytes]) -> None:
        """Writes notifications the caller encoded itself, each of `lines` exactly one
        `encode(message)`, in one write (a `session/load` replay writes many at once)."""
        await self._writer.send_lines(lines)

    def notify_with_next(self, method: str, params: JsonValue) -> None:
        """Sends a notification with the next message this peer writes: just before it, in
        the same write (the reader is woken once for both). Only from a request's handler,
        whose response (or error) is that next message at the latest."""
        message: JsonObject = {"jsonrpc": "2.0", "method": method, "params": params}
        self._writer.hold(encode(message), lambda: message)

    def notify_encoded_with_next(self, line: bytes, message: Callable[[], JsonObject]) -> None:
        """`notify_with_next` of a notification the caller encoded itself: `line` must be
        exactly `encode(message())`; `message` is only called for the tracer."""
        self._writer.hold(line, message)

    def _stopped_reading(self) -> None:
        """The editor stopped reading: nothing more can be delivered."""
        self._closed = True
        self._outbound.fail_all()
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
