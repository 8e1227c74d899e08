"""What the layer above a `JsonRpcPeer` provides and sees: the handler seam, a handler's
`Reply` (with a result it may have encoded itself), the tracer hook and the request being
handled (its `Exchange`)."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from acp_bridge._json import JsonValue
from acp_bridge.jsonrpc._envelope import RequestId

__all__ = [
    "CANCEL_REQUEST",
    "EncodedResult",
    "Exchange",
    "Handler",
    "Reply",
    "RequestObserver",
    "Tracer",
    "current_exchange",
    "current_request_id",
    "set_current_exchange",
    "traced",
]

CANCEL_REQUEST = "$/cancel_request"
_log = logging.getLogger("acp_bridge.jsonrpc")


@dataclass(slots=True, eq=False)
class Exchange:
    """An inbound request whose handler is running: its id, the peer that answers it, and
    whether that peer wrote its response already (`JsonRpcPeer.respond`)."""

    id: RequestId
    peer: object
    answered: bool = False


_CURRENT: contextvars.ContextVar[Exchange | None] = contextvars.ContextVar(
    "acp_bridge_jsonrpc_request", default=None
)


def current_exchange() -> Exchange | None:
    """The inbound request whose handler is running (None outside a handler)."""
    return _CURRENT.get()


def current_request_id() -> RequestId | None:
    """The id of the inbound request whose handler is running (None outside a handler)."""
    exchange = _CURRENT.get()
    return None if exchange is None else exchange.id


def set_current_exchange(exchange: Exchange) -> None:
    """Marks the running task as handling `exchange` (anyio copies the context per task)."""
    _CURRENT.set(exchange)


Tracer = Callable[[str, JsonValue], None]
"""Called with ("in" | "out", message) for every message, before handling / after encoding."""


def traced(trace: Tracer | None, direction: str, message: JsonValue) -> None:
    """Calls the tracer, if any; a trace is a diagnostic: it never ends the connection."""
    if trace is None:
        return
    try:
        trace(direction, message)
    except Exception as exc:
        _log.warning("could not trace a message (%s)", type(exc).__name__)


@dataclass(frozen=True, slots=True)
class EncodedResult:
    """A result its handler encoded itself (a hot path whose shape is known).

    `text` must be exactly the compact JSON the peer's own encoder writes for `value()`
    (`wire.encode`, newline excluded), and hold no string longer than
    `wire.BIG_STRING_CHARS` (those lines are written in pieces); the peer writes it as the
    response's `result` without encoding or scanning anything. `value` builds the result:
    it is called only for the tracer, or when the line cannot be written as UTF-8 (a lone
    surrogate), where the generic encoder escapes the whole line.
    """

    text: str
    value: Callable[[], JsonValue]


@dataclass(frozen=True, slots=True)
class Reply:
    """A handler's result plus work that must happen after the response is written."""

    result: JsonValue | EncodedResult
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
