"""What the layer above a `JsonRpcPeer` provides and sees: the handler seam, a handler's
`Reply`, the tracer hook and the id of the request being handled."""

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
    "Handler",
    "Reply",
    "RequestObserver",
    "Tracer",
    "current_request_id",
    "set_current_request_id",
    "traced",
]

CANCEL_REQUEST = "$/cancel_request"
_log = logging.getLogger("acp_bridge.jsonrpc")
_CURRENT_REQUEST: contextvars.ContextVar[RequestId | None] = contextvars.ContextVar(
    "acp_bridge_jsonrpc_request", default=None
)


def current_request_id() -> RequestId | None:
    """The id of the inbound request whose handler is running (None outside a handler)."""
    return _CURRENT_REQUEST.get()


def set_current_request_id(request_id: RequestId) -> None:
    """Marks the running task as handling `request_id` (anyio copies the context per task)."""
    _CURRENT_REQUEST.set(request_id)


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
