"""Turn provider failures into classified `ModelStreamError`s. No I/O, no retries.

Two inputs: an HTTP status with its headers and error body (before the stream, phase
CONNECT), and an error object that arrived inside a 200 stream (phase STREAM). Providers
spell errors differently; what they mean is decided here, once:

- 429, 499, 5xx and 529 are retryable; 429/402 for quota or billing are not.
- 400/413/422 (bad request), 401/403 (auth) and 404 are not retryable.
- In-band errors are classified by their type/code (`overloaded_error`, `server_error`,
  `UNAVAILABLE`, ...), then by a numeric code, and are retryable when unknown.
- "The prompt does not fit the context window", in each provider's words (`_overflow`), is
  `context_length_exceeded`, final whatever the status (COMPACT-001): the engine compacts.
- "The model produced output that does not match the expected ... format" (llama.cpp's
  server could not parse the model's output into content and tool calls, `_unparsed`) is
  `unparsed_output`, final: the same request gets the same output (UNPARSED-001).
- The server's wait (`retry-after-ms`, `retry-after` seconds or HTTP date, Gemini
  `RetryInfo.retryDelay`) is kept uncapped in `retry_after`; the retry policy caps it.
"""

from __future__ import annotations

import email.utils
import json
import math
import time
from collections.abc import Mapping
from typing import Any

from acp_bridge.providers._errors import FaultKind, ModelStreamError, Phase, kind_for_status
from acp_bridge.providers.http._overflow import context_overflow
from acp_bridge.providers.http._unparsed import unparsed_output

__all__ = [
    "error_from_payload",
    "error_from_status",
    "parse_duration",
    "parse_retry_after",
    "scrub",
]

_MESSAGE_LIMIT = 300
# Statuses an over-long prompt comes back with (llama.cpp builds before the dedicated error
# type answered 500): other statuses are never taken for one, whatever their text.
_OVERFLOW_STATUSES = frozenset({400, 413, 422, 500})

_KIND_BY_TYPE: Mapping[str, tuple[FaultKind, bool]] = {
    # Anthropic error.type, OpenAI error.type/code, google.rpc status names, llama.cpp/vLLM.
    "overloaded_error": (FaultKind.OVERLOADED, True),
    "unavailable": (FaultKind.OVERLOADED, True),
    "rate_limit_error": (FaultKind.RATE_LIMITED, True),
    "rate_limit_exceeded": (FaultKind.RATE_LIMITED, True),
    "resource_exhausted": (FaultKind.RATE_LIMITED, True),
    "server_error": (FaultKind.SERVER_ERROR, True),
    "api_error": (FaultKind.SERVER_ERROR, True),
    "internal": (FaultKind.SERVER_ERROR, True),
    "internal_error": (FaultKind.SERVER_ERROR, True),
    "timeout_error": (FaultKind.SERVER_ERROR, True),
    "deadline_exceeded": (FaultKind.SERVER_ERROR, True),
    "cancelled": (FaultKind.SERVER_ERROR, True),
    "aborted": (FaultKind.SERVER_ERROR, True),
    "invalid_request_error": (FaultKind.BAD_REQUEST, False),
    "invalid_argument": (FaultKind.BAD_REQUEST, False),
    "failed_precondition": (FaultKind.BAD_REQUEST, False),
    "badrequesterror": (FaultKind.BAD_REQUEST, False),
    "exceed_context_size_error": (FaultKind.CONTEXT_LENGTH_EXCEEDED, False),
    "context_length_exceeded": (FaultKind.CONTEXT_LENGTH_EXCEEDED, False),
    "request_too_large": (FaultKind.BAD_REQUEST, False),
    "authentication_error": (FaultKind.AUTH_FAILED, False),
    "permission_error": (FaultKind.AUTH_FAILED, False),
    "unauthenticated": (FaultKind.AUTH_FAILED, False),
    "permission_denied": (FaultKind.AUTH_FAILED, False),
    "invalid_api_key": (FaultKind.AUTH_FAILED, False),
    "not_found_error": (FaultKind.NOT_FOUND, False),
    "not_found": (FaultKind.NOT_FOUND, False),
    "model_not_found": (FaultKind.NOT_FOUND, False),
    "billing_error": (FaultKind.QUOTA_EXHAUSTED, False),
    "insufficient_quota": (FaultKind.QUOTA_EXHAUSTED, False),
}


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds the server asked to wait: `retry-after-ms`, else `retry-after` (s or date)."""
    lowered = {name.lower(): value for name, value in headers.items()}
    millis = _non_negative(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    value = lowered.get("retry-after")
    if value is None:
        return None
    seconds = _non_negative(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def parse_duration(text: object) -> float | None:
    """A google.protobuf.Duration in JSON form (``"34.4s"``) as seconds."""
    if not isinstance(text, str) or not text.endswith("s"):
        return None
    return _non_negative(text[:-1])


def scrub(text: str, secret: str | None) -> str:
    """`text` without `secret` in it, shortened to a log-friendly length."""
    if secret:
        text = text.replace(secret, "[redacted]")
    text = " ".join(text.split())
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 1] + "…"


def error_from_status(
    provider: str,
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    secret: str | None = None,
) -> ModelStreamError:
    """Classify a non-2xx response that arrived before any stream (phase CONNECT)."""
    payload = _error_object(_loads(body))
    kind, retryable = kind_for_status(status)
    type_code = _type_code(payload)
    if _is_quota(status, type_code, payload):
        kind, retryable = FaultKind.QUOTA_EXHAUSTED, False
    override = {name.lower(): value for name, value in headers.items()}.get("x-should-retry")
    if override in ("true", "false"):
        retryable = override == "true"
    retry_after = parse_retry_after(headers)
    if retry_after is None:
        retry_after = _retry_info(payload)
    overflow = context_overflow(payload, type_code) if status in _OVERFLOW_STATUSES else None
    if overflow is not None:
        kind, retryable = FaultKind.CONTEXT_LENGTH_EXCEEDED, False
    detail = _message(payload) or body.decode("utf-8", "replace").strip() or "no error body"
    if status >= 500 and unparsed_output(detail):  # UNPARSED-001
        kind, retryable = FaultKind.UNPARSED_OUTPUT, False
    return ModelStreamError(
        kind,
        scrub(f"{provider} answered HTTP {status}: {detail}", secret),
        phase=Phase.CONNECT,
        retryable=retryable,
        status=status,
        provider_code=type_code,
        retry_after=retry_after,
        context=overflow,
    )


def error_from_payload(
    provider: str, payload: Any, *, secret: str | None = None
) -> ModelStreamError:
    """Classify an error object received inside a 200 stream (phase STREAM).

    `payload` is the error object itself or a body that wraps it (`{"error": {...}}`).
    """
    error = _error_object(payload)
    type_code = _type_code(error)
    status = _numeric_code(error)
    known = _KIND_BY_TYPE.get((type_code or "").lower())
    if known is not None:
        kind, retryable = known
    elif status is not None:
        kind, retryable = kind_for_status(status)
    else:
        # An unknown failure after the server accepted the request is most often transient:
        # an in-band server error, retried (TURN-009); provider_error is never retried.
        kind, retryable = FaultKind.SERVER_ERROR, True
    if _is_quota(status or 0, type_code, error):
        kind, retryable = FaultKind.QUOTA_EXHAUSTED, False
    overflow = context_overflow(error, type_code)
    if overflow is not None:
        kind, retryable = FaultKind.CONTEXT_LENGTH_EXCEEDED, False
    detail = _message(error) or "error event without a message"
    if unparsed_output(detail):  # UNPARSED-001
        kind, retryable = FaultKind.UNPARSED_OUTPUT, False
    return ModelStreamError(
        kind,
        scrub(f"{provider} stream error: {detail}", secret),
        phase=Phase.STREAM,
        retryable=retryable,
        status=status,
        provider_code=type_code,
        retry_after=_retry_info(error),
        context=overflow,
    )


def _loads(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _error_object(payload: Any) -> dict[str, Any]:
    """The innermost error object of the shapes providers use (incl. Gemini's `[{...}]`)."""
    if isinstance(payload, list) and payload:
        payload = payload[0]
    if not isinstance(payload, dict):
        return {"message": payload} if isinstance(payload, str) else {}
    inner = payload.get("error")
    if isinstance(inner, dict):
        return inner
    if isinstance(inner, str):
        return {"message": inner, **{k: v for k, v in payload.items() if k != "error"}}
    return payload


def _type_code(error: Mapping[str, Any]) -> str | None:
    """The provider's own error name: `type`, else a textual `code`, else the rpc `status`."""
    for key in ("type", "code", "status"):
        value = error.get(key)
        if isinstance(value, str) and value and value != "error":
            return value
    return None


def _numeric_code(error: Mapping[str, Any]) -> int | None:
    for key in ("code", "status"):
        value = error.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return value
        if isinstance(value, str) and value.isdigit() and 100 <= int(value) <= 599:
            return int(value)
    return None


def _message(error: Mapping[str, Any]) -> str:
    message = error.get("message")
    return message if isinstance(message, str) else ""


def _is_quota(status: int, type_code: str | None, error: Mapping[str, Any]) -> bool:
    """Quota or billing exhaustion: waiting will not help (OpenAI, Anthropic, Gemini daily)."""
    names = {str(error.get(key, "")).lower() for key in ("type", "code", "status")}
    if names & {"insufficient_quota", "billing_error"}:
        return True
    if status != 429:
        return False
    for detail in _details(error):
        for violation in detail.get("violations", ()) or ():
            if isinstance(violation, dict) and "PerDay" in str(violation.get("quotaId", "")):
                return True
    return False


def _retry_info(error: Mapping[str, Any]) -> float | None:
    for detail in _details(error):
        if str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            return parse_duration(detail.get("retryDelay"))
    return None


def _details(error: Mapping[str, Any]) -> list[dict[str, Any]]:
    details = error.get("details")
    if not isinstance(details, list):
        return []
    return [detail for detail in details if isinstance(detail, dict)]


def _non_negative(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None
