"""A prompt turn and its cancellation.

`session/prompt` is answered when the turn ends, after every `session/update` of the turn.
`session/cancel` (a notification) ends the turn with `stopReason: "cancelled"`, never with
an error. `$/cancel_request` cancels any one request, in either direction; the cancelled
request is answered with a (partial) result or error -32800.
"""

from __future__ import annotations

import enum

from acp_bridge.protocol._base import AcpModel
from acp_bridge.protocol._content import ContentBlock

__all__ = [
    "CancelNotification",
    "CancelRequestNotification",
    "PromptRequest",
    "PromptResponse",
    "StopReason",
]


class StopReason(enum.StrEnum):
    END_TURN = "end_turn"
    MAX_TOKENS = "max_tokens"
    MAX_TURN_REQUESTS = "max_turn_requests"
    REFUSAL = "refusal"
    CANCELLED = "cancelled"


class PromptRequest(AcpModel):
    session_id: str
    prompt: list[ContentBlock]


class PromptResponse(AcpModel):
    stop_reason: StopReason


class CancelNotification(AcpModel):
    """`session/cancel`: stop the session's running turn."""

    session_id: str


class CancelRequestNotification(AcpModel):
    """`$/cancel_request`: stop the request with this JSON-RPC id."""

    request_id: int | str | None
