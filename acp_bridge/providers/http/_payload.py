"""Small helpers the stream decoders share: reading untrusted JSON and finishing tool calls.

Provider payloads are untrusted: every accessor tolerates a missing or mistyped field.
`complete_tool_call` is the one place where raw argument text becomes a `ToolCallComplete`,
so the rule "complete only once the arguments parse as a JSON object" lives here once.
Decoders call it only at the provider's block end or finish, so a tool call whose stream
is cut before then never completes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from acp_bridge._json import JsonValue
from acp_bridge.providers._errors import FaultKind, ModelStreamError, Phase
from acp_bridge.providers._events import ToolCallComplete
from acp_bridge.providers._text import repair_surrogates
from acp_bridge.providers.http._classify import error_from_payload
from acp_bridge.providers.http._sse_items import RawJson, SseEvent

__all__ = [
    "as_int",
    "as_list",
    "as_object",
    "as_str",
    "complete_tool_call",
    "frame_json",
    "is_complete_json",
    "raw_json_error",
    "whole_json_object",
]

_DECODER = json.JSONDecoder()
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]


def as_object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def whole_json_object(data: str) -> dict[str, Any] | None:
    """`data` as a JSON object when it is exactly one, with nothing around it; else None
    (the caller then takes the general path, `frame_json`, which decides)."""
    if not data.startswith("{"):
        return None
    try:
        # The decoder's C scanner itself (what `raw_decode` wraps): one frame less per event.
        value, end = _SCAN(data, 0)
    except (ValueError, StopIteration):
        return None
    return value if end == len(data) and type(value) is dict else None


def frame_json(provider: str, event: SseEvent) -> Any:
    """The JSON payload of an SSE event, or a classified error when it is not JSON.

    An unterminated event at EOF that does not parse was cut mid-line: the stream is
    incomplete. A terminated event that does not parse is a provider fault.
    """
    data = event.data
    try:
        # The per-event hot path: `raw_decode` skips `json.loads`' checks and whitespace
        # scans; anything it does not take whole (leading or trailing whitespace, a BOM,
        # an error) goes through `json.loads`, which decides.
        value, end = _DECODER.raw_decode(data)
        if end == len(data):
            return value
    except ValueError:
        pass
    try:
        return json.loads(data)
    except ValueError:
        if not event.terminated:
            raise ModelStreamError(
                FaultKind.INCOMPLETE_STREAM,
                f"{provider} stream ended inside an event",
                phase=Phase.STREAM,
            ) from None
        # Final, as provider_error always is (TURN-009, ROBUST-SSE-001): a server that
        # frames garbage as events does it again; retrying only bills more attempts.
        raise ModelStreamError(
            FaultKind.PROVIDER_ERROR,
            f"{provider} sent an event that is not JSON",
            phase=Phase.STREAM,
            retryable=False,
        ) from None


def raw_json_error(provider: str, item: RawJson, *, secret: str | None) -> ModelStreamError:
    """What a JSON value outside SSE framing means: an error body, a cut, or no stream at all.

    Gemini appends a raw `{"error": ...}` or sends one (or `[{"error": ...}]`) as the whole
    body; a value that is not an error means the server answered without streaming.
    """
    value = item.value
    first = value[0] if isinstance(value, list) and value else value
    if isinstance(first, dict) and (
        first.get("error") or first.get("object") == "error" or first.get("type") == "error"
    ):
        return error_from_payload(provider, value, secret=secret)
    if value is None:
        return ModelStreamError(
            FaultKind.INCOMPLETE_STREAM,
            f"{provider} stream ended inside a JSON body",
            phase=Phase.STREAM,
        )
    return ModelStreamError(
        FaultKind.PROVIDER_ERROR,
        f"{provider} answered with JSON instead of an event stream",
        phase=Phase.STREAM,
        retryable=False,
    )


def is_complete_json(text: str) -> bool:
    if not text.strip():
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def complete_tool_call(
    provider: str,
    call_id: str,
    name: str,
    raw_arguments: str,
    provider_meta: Mapping[str, JsonValue] | None = None,
) -> ToolCallComplete:
    """A `ToolCallComplete`, or MALFORMED_TOOL_CALL when the arguments are not a JSON object.

    Empty argument text means "no arguments" (`{}`), as several local servers send it.
    """
    if not name:
        raise ModelStreamError(
            FaultKind.MALFORMED_TOOL_CALL,
            f"{provider} sent tool call {call_id} without a name",
            phase=Phase.STREAM,
        )
    # Fragments split inside a surrogate pair are joined here (TURN-TEXT-001).
    raw_arguments = repair_surrogates(raw_arguments)
    text = raw_arguments if raw_arguments.strip() else "{}"
    try:
        arguments = json.loads(text)
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        # Never execute what did not parse: the turn engine decides to retry or report.
        raise ModelStreamError(
            FaultKind.MALFORMED_TOOL_CALL,
            f"{provider} sent arguments for tool {name!r} ({call_id}) that are not a JSON object",
            phase=Phase.STREAM,
            provider_code="malformed_arguments",
        )
    return ToolCallComplete(
        call_id=call_id,
        name=name,
        arguments=arguments,
        raw_arguments=raw_arguments,
        provider_meta=dict(provider_meta or {}),
    )
