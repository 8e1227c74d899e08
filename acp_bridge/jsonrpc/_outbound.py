"""Outbound requests: the table of calls waiting for the peer's answer, and what an answer
becomes (the result, a `PeerError`, or `PeerGone` when the connection ended first)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.errors import INTERNAL_ERROR, PeerError, PeerGone
from acp_bridge.jsonrpc._envelope import RequestId, Response
from acp_bridge.jsonrpc._limits import scrub

if TYPE_CHECKING:
    import jsonrpc_base

__all__ = ["Outbound", "Pending"]

_log = logging.getLogger("acp_bridge.jsonrpc")


@dataclass(slots=True)
class Pending:
    """One request sent to the peer, waiting for its response."""

    request: jsonrpc_base.Request
    done: anyio.Event = field(default_factory=anyio.Event)
    response: JsonObject | None = None
    gone: bool = False

    def result(self) -> JsonValue:
        """The answer's result, once `done` is set.

        Raises:
            PeerError: the peer answered with an error object.
            PeerGone: the connection ended before the answer.
        """
        if self.gone or self.response is None:
            raise PeerGone()
        import jsonrpc_base

        try:
            result: JsonValue = self.request.parse_response(self.response)
        except jsonrpc_base.ProtocolError as exc:
            raise _peer_error(exc) from None
        return result


class Outbound:
    """Ids for outbound requests and the calls still waiting, keyed by id."""

    def __init__(self) -> None:
        self._pending: dict[RequestId, Pending] = {}
        self._next_id = 0

    def open(self, method: str, params: JsonValue) -> tuple[int, Pending]:
        """A fresh id and its pending entry, registered before the request is written."""
        self._next_id += 1
        request_id = self._next_id
        # Imported on the first request to the peer, not at start (uuid, platform: STARTUP-001).
        import jsonrpc_base

        pending = Pending(jsonrpc_base.Request(method, params, request_id))
        self._pending[request_id] = pending
        return request_id, pending

    def forget(self, request_id: RequestId) -> bool:
        """Drops a call; True when it was still waiting."""
        return self._pending.pop(request_id, None) is not None

    def resolve(self, response: Response) -> None:
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

    def fail_all(self) -> None:
        """The connection ended: every waiting caller gets `PeerGone`."""
        for pending in self._pending.values():
            pending.gone = True
            pending.done.set()


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
