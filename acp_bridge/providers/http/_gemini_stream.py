"""Gemini `streamGenerateContent?alt=sse` -> normalized events (sans-IO).

Each `data:` is a whole `GenerateContentResponse` with only the new parts (model-streams.md
§3). There is no `[DONE]`: the terminal marker is a `finishReason` (or a blocked prompt),
and `Finish` is emitted at EOF because Gemini may append a raw, unframed JSON error after
its last chunk. Function calls arrive whole; an id is synthesized when absent and the
part's `thoughtSignature` is kept in `provider_meta["thought_signature"]`. A signature on
any other part becomes a `ThoughtDelta` carrying it. SAFETY-like finishes and blocked
prompts are `Finish(CONTENT_FILTER)`; MALFORMED_FUNCTION_CALL and its kin raise
MALFORMED_TOOL_CALL. `usageMetadata` is cumulative: the last one is emitted before `Finish`.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from acp_bridge._json import JsonValue
from acp_bridge.providers._errors import FaultKind, ModelStreamError, Phase
from acp_bridge.providers._events import (
    Finish,
    FinishReason,
    StreamEvent,
    StreamStart,
    TextDelta,
    ThoughtDelta,
    ToolCallStart,
    Usage,
)
from acp_bridge.providers._text import SurrogateJoiner
from acp_bridge.providers.http._classify import error_from_payload
from acp_bridge.providers.http._event_decoder import EventDecoder
from acp_bridge.providers.http._payload import (
    as_int,
    as_list,
    as_object,
    as_str,
    complete_tool_call,
    frame_json,
)
from acp_bridge.providers.http._sse_items import SseEvent

__all__ = ["GeminiStreamDecoder"]

_FILTERED = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "LANGUAGE",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "MODEL_ARMOR",
    }
)
_MALFORMED_CALL = frozenset(
    {"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"}
)


class GeminiStreamDecoder(EventDecoder):
    """One attempt's decoder; see the module docstring for the rules."""

    def __init__(self, *, model: str, provider: str = "gemini", secret: str | None = None) -> None:
        super().__init__(provider, secret)
        self._model = model
        self._started = False
        self._response_id: str | None = None
        self._id_seed: str | None = None
        self._calls = 0
        self._finish_raw: str | None = None
        self._blocked: str | None = None
        self._usage: Usage | None = None
        # TURN-TEXT-001: a surrogate pair split across two events is joined, per channel.
        self._text = SurrogateJoiner()
        self._thought = SurrogateJoiner()

    def _event(self, item: SseEvent) -> list[StreamEvent]:
        if not item.data.strip():
            return []
        payload = frame_json(self._provider, item)
        if isinstance(payload, list) or (isinstance(payload, dict) and "error" in payload):
            raise error_from_payload(self._provider, payload, secret=self._secret)
        return self._response(as_object(payload))

    def end(self) -> list[StreamEvent]:
        if self._done:
            return []
        self._done = True
        if self._blocked is not None:
            raw, reason = self._blocked, FinishReason.CONTENT_FILTER
        elif self._finish_raw is not None:
            raw, reason = self._finish_raw, _finish_reason(self._finish_raw, self._calls > 0)
        else:
            raise ModelStreamError(
                FaultKind.INCOMPLETE_STREAM,
                f"{self._provider} stream ended without a finishReason",
                phase=Phase.STREAM,
            )
        events: list[StreamEvent] = []
        if thought := self._thought.flush():  # a high surrogate still held is lone
            events.append(ThoughtDelta(thought))
        if text := self._text.flush():
            events.append(TextDelta(text))
        events.append(Finish(reason, raw))
        return events

    def _response(self, response: dict[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if not self._started:
            self._started = True
            self._response_id = as_str(response.get("responseId")) or None
            model = as_str(response.get("modelVersion")) or self._model
            events.append(StreamStart(self._provider, model, self._response_id))
        blocked = as_object(response.get("promptFeedback")).get("blockReason")
        if isinstance(blocked, str) and blocked:
            self._blocked = blocked
        candidates = as_list(response.get("candidates"))
        if candidates:
            candidate = as_object(candidates[0])
            for part in as_list(as_object(candidate.get("content")).get("parts")):
                events.extend(self._part(as_object(part)))
            reason = candidate.get("finishReason")
            if isinstance(reason, str) and reason:
                self._finish(reason)
        usage = response.get("usageMetadata")
        if isinstance(usage, dict):
            # Cumulative, passed on as it arrives: an attempt that breaks after it was
            # billed, and its usage must not be lost (10.15).
            current = _usage(usage)
            if current != self._usage:
                self._usage = current
                events.append(current)
        return events

    def _part(self, part: dict[str, Any]) -> list[StreamEvent]:
        signature = as_str(part.get("thoughtSignature")) or None
        call = part.get("functionCall")
        if isinstance(call, dict):
            return self._function_call(call, signature)
        text = as_str(part.get("text"))
        if part.get("thought") is True:
            text = self._thought.feed(text)
            return [ThoughtDelta(text, signature=signature)] if text or signature else []
        text = self._text.feed(text)
        events: list[StreamEvent] = [TextDelta(text)] if text else []
        if signature:
            events.append(ThoughtDelta("", signature=signature))
        return events

    def _function_call(self, call: dict[str, Any], signature: str | None) -> list[StreamEvent]:
        ordinal = self._calls
        self._calls += 1
        given_id = as_str(call.get("id"))
        call_id = given_id or self._synthesized_id(ordinal)
        name = as_str(call.get("name"))
        meta: dict[str, JsonValue] = {}
        if signature:
            meta["thought_signature"] = signature
        if not given_id:
            meta["synthesized_id"] = True
        args = call.get("args")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise ModelStreamError(
                FaultKind.MALFORMED_TOOL_CALL,
                f"{self._provider} sent arguments for tool {name!r} that are not an object",
                phase=Phase.STREAM,
                provider_code="malformed_arguments",
            )
        raw = json.dumps(args, ensure_ascii=False)
        complete = complete_tool_call(self._provider, call_id, name, raw, meta)
        return [ToolCallStart(call_id, name, ordinal), complete]

    def _finish(self, reason: str) -> None:
        if reason in _MALFORMED_CALL:
            raise ModelStreamError(
                FaultKind.MALFORMED_TOOL_CALL,
                f"{self._provider} finished with {reason}",
                phase=Phase.STREAM,
                provider_code=reason,
            )
        self._finish_raw = reason

    def _synthesized_id(self, ordinal: int) -> str:
        if self._id_seed is None:
            self._id_seed = self._response_id or uuid.uuid4().hex[:16]
        return f"call_{self._id_seed}_{ordinal}"


def _finish_reason(raw: str, has_calls: bool) -> FinishReason:
    if raw == "STOP":
        return FinishReason.TOOL_CALLS if has_calls else FinishReason.STOP
    if raw == "MAX_TOKENS":
        return FinishReason.LENGTH
    if raw in _FILTERED:
        return FinishReason.CONTENT_FILTER
    return FinishReason.UNKNOWN


def _usage(usage: dict[str, Any]) -> Usage:
    thoughts = as_int(usage.get("thoughtsTokenCount"))
    return Usage(
        input_tokens=as_int(usage.get("promptTokenCount")),
        output_tokens=as_int(usage.get("candidatesTokenCount")) + thoughts,
        cached_input_tokens=as_int(usage.get("cachedContentTokenCount")),
        reasoning_tokens=thoughts,
    )
