"""Cancel scopes of prompt turns, from the moment their request is read (AGENT-CANCEL-002).

A `session/cancel` may arrive right behind its `session/prompt` (in the same write), before
the prompt's handler ran at all. So the turn's cancel scope is made when the JSON-RPC peer
reads the request (`RequestObserver.request_received`, called in read order), not when the
turn starts: a cancel that finds a scope nobody has entered yet cancels it anyway, and the
turn, once it enters the scope, ends at its first checkpoint with `stopReason: "cancelled"`.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from acp_bridge._json import JsonValue
from acp_bridge.jsonrpc import RequestId

__all__ = ["TurnTickets"]

PROMPT = "session/prompt"


@dataclass(slots=True)
class _Ticket:
    """A prompt turn's session and the cancel scope a `session/cancel` cancels."""

    session_id: str
    scope: anyio.CancelScope


class TurnTickets:
    """The cancel scope of every `session/prompt` read and not yet answered."""

    __slots__ = ("_tickets",)

    def __init__(self) -> None:
        self._tickets: dict[RequestId, _Ticket] = {}

    def received(self, request_id: RequestId, method: str, params: JsonValue) -> None:
        """A request was read: a prompt gets its cancel scope now (bad params are the
        handler's to refuse; a ticket for them is released with the request)."""
        if method != PROMPT or not isinstance(params, dict):
            return
        session_id = params.get("sessionId")
        if isinstance(session_id, str):
            self._tickets[request_id] = _Ticket(session_id, anyio.CancelScope())

    def scope(self, request_id: RequestId | None, session_id: str) -> anyio.CancelScope:
        """The scope the turn of this request runs in (a fresh one when the request was
        not seen arriving, or named another session)."""
        ticket = None if request_id is None else self._tickets.get(request_id)
        if ticket is None or ticket.session_id != session_id:
            ticket = _Ticket(session_id, anyio.CancelScope())
            if request_id is not None:
                self._tickets[request_id] = ticket
        return ticket.scope

    def release(self, request_id: RequestId | None) -> None:
        if request_id is not None:
            self._tickets.pop(request_id, None)

    def cancel(self, session_id: str) -> bool:
        """Cancels every prompt of the session read so far; True when there was one."""
        found = False
        for ticket in self._tickets.values():
            if ticket.session_id == session_id:
                ticket.scope.cancel()
                found = True
        return found
