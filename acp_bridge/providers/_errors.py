"""How a model call fails: one exception, classified, so the turn engine can decide to retry.

Adapters map every transport exception, HTTP status and in-band error event to a
`ModelStreamError` at one boundary. Messages are for humans and must never contain secrets
(API keys, auth headers).
"""

from __future__ import annotations

import enum

from acp_bridge.errors import AcpBridgeError

__all__ = ["FaultKind", "ModelStreamError", "Phase", "kind_for_status"]


class Phase(enum.StrEnum):
    """Where the failure happened: before the first byte of the body, or inside the stream."""

    CONNECT = "connect"
    STREAM = "stream"


class FaultKind(enum.StrEnum):
    """What went wrong. The value is the machine-readable retry reason on the wire."""

    CONNECTION_FAILED = "connection_failed"
    STREAM_INTERRUPTED = "stream_interrupted"
    INCOMPLETE_STREAM = "incomplete_stream"
    IDLE_TIMEOUT = "idle_timeout"
    FIRST_TOKEN_TIMEOUT = "first_token_timeout"
    RATE_LIMITED = "rate_limited"
    OVERLOADED = "overloaded"
    SERVER_ERROR = "server_error"
    MALFORMED_TOOL_CALL = "malformed_tool_call"
    CONTENT_FILTERED = "content_filtered"
    AUTH_FAILED = "auth_failed"
    BAD_REQUEST = "bad_request"
    NOT_FOUND = "not_found"
    QUOTA_EXHAUSTED = "quota_exhausted"
    PROVIDER_ERROR = "provider_error"
    CONTEXT_LENGTH_EXCEEDED = "context_length_exceeded"  # final: compact, never retry as is
    UNPARSED_OUTPUT = "unparsed_output"  # final: the server could not parse the model's output


_RETRYABLE_BY_DEFAULT = frozenset(
    {
        FaultKind.CONNECTION_FAILED,
        FaultKind.STREAM_INTERRUPTED,
        FaultKind.INCOMPLETE_STREAM,
        FaultKind.IDLE_TIMEOUT,
        FaultKind.FIRST_TOKEN_TIMEOUT,
        FaultKind.RATE_LIMITED,
        FaultKind.OVERLOADED,
        FaultKind.SERVER_ERROR,
        FaultKind.MALFORMED_TOOL_CALL,
    }
)


class ModelStreamError(AcpBridgeError):
    """A model call failed; raised out of `ModelProvider.stream`.

    Attributes:
        kind: the classified fault.
        phase: before the body started, or mid-stream.
        retryable: whether another attempt may succeed (defaults from `kind`).
        status: the HTTP status when there was one.
        provider_code: the provider's own error type or code, e.g. ``overloaded_error``.
        retry_after: seconds the server asked us to wait, uncapped (the policy caps it).
        context: for `CONTEXT_LENGTH_EXCEEDED`, the (prompt tokens, window) the provider
            named, when it named them (either may be None).
    """

    def __init__(
        self,
        kind: FaultKind,
        message: str,
        *,
        phase: Phase = Phase.STREAM,
        retryable: bool | None = None,
        status: int | None = None,
        provider_code: str | None = None,
        retry_after: float | None = None,
        context: tuple[int | None, int | None] | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.phase = phase
        self.retryable = kind in _RETRYABLE_BY_DEFAULT if retryable is None else retryable
        self.status = status
        self.provider_code = provider_code
        self.retry_after = retry_after
        self.context = context

    def __repr__(self) -> str:
        return (
            f"ModelStreamError(kind={self.kind.value!r}, phase={self.phase.value!r}, "
            f"retryable={self.retryable}, status={self.status}, message={self.message!r})"
        )


def kind_for_status(status: int) -> tuple[FaultKind, bool]:
    """The fault and its retryability for an HTTP status alone (model-streams.md §4.1).

    One table for every provider, the scripted one included, so a scripted 503 is
    classified exactly like a real one.
    """
    if status in (401, 403):
        return FaultKind.AUTH_FAILED, False
    if status == 404:
        return FaultKind.NOT_FOUND, False
    if status in (400, 413, 422):
        return FaultKind.BAD_REQUEST, False
    if status == 402:
        return FaultKind.QUOTA_EXHAUSTED, False
    if status == 429:
        return FaultKind.RATE_LIMITED, True
    if status in (503, 529):
        return FaultKind.OVERLOADED, True
    if status in (408, 409, 499) or 500 <= status <= 599:
        return FaultKind.SERVER_ERROR, True
    return FaultKind.PROVIDER_ERROR, False
