"""Anthropic Messages stream -> normalized events (sans-IO).

Flow (model-streams.md §2): `message_start`, then per content block `content_block_start`
/ `_delta` / `_stop`, then `message_delta` (stop reason, cumulative usage) and
`message_stop`, the terminal marker. `ping` and unknown event types are ignored; server
tool blocks are never surfaced as tool calls. A thinking block's `signature_delta` becomes
a `ThoughtDelta` with `signature` (it closes the block), a `redacted_thinking` block one
with `redacted_data`. Tool input is parsed once, at the block's `content_block_stop`.
`event: error` (e.g. `overloaded_error` mid-stream) is classified by its error type.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from acp_bridge.providers._errors import FaultKind, ModelStreamError, Phase
from acp_bridge.providers._events import (
    Finish,
    FinishReason,
    StreamEvent,
    StreamStart,
    TextDelta,
    ThoughtDelta,
    ToolCallDelta,
    ToolCallStart,
    Usage,
)
from acp_bridge.providers._text import SurrogateJoiner
from acp_bridge.providers.http._classify import error_from_payload
from acp_bridge.providers.http._event_decoder import EventDecoder
from acp_bridge.providers.http._payload import (
    as_int,
    as_object,
    as_str,
    complete_tool_call,
    frame_json,
)
from acp_bridge.providers.http._sse_items import SseEvent

__all__ = ["AnthropicStreamDecoder"]

_STOP_REASONS = {
    "end_turn": FinishReason.STOP,
    "stop_sequence": FinishReason.STOP,
    "tool_use": FinishReason.TOOL_CALLS,
    "max_tokens": FinishReason.LENGTH,
    "model_context_window_exceeded": FinishReason.LENGTH,
    "refusal": FinishReason.REFUSAL,
    "pause_turn": FinishReason.PAUSE,
}


@dataclass(slots=True)
class _ToolBlock:
    ordinal: int
    call_id: str
    name: str
    initial_input: str
    fragments: list[str] = field(default_factory=list)
    completed: bool = False
    unusable: ModelStreamError | None = None  # arguments that did not parse, held to the end


class AnthropicStreamDecoder(EventDecoder):
    """One attempt's decoder; see the module docstring for the rules."""

    def __init__(
        self, *, model: str, provider: str = "anthropic", secret: str | None = None
    ) -> None:
        super().__init__(provider, secret)
        self._model = model
        self._tools: dict[int, _ToolBlock] = {}
        self._tool_count = 0
        self._usage: dict[str, int] = {}
        self._stop_reason: str | None = None
        self._message_id: str | None = None
        # TURN-TEXT-001: a surrogate pair split across two deltas is joined, per channel.
        self._text = SurrogateJoiner()
        self._thought = SurrogateJoiner()

    def _event(self, item: SseEvent) -> list[StreamEvent]:
        if not item.data.strip():
            return []
        payload = as_object(frame_json(self._provider, item))
        kind = as_str(payload.get("type")) or item.event
        if kind == "error" or item.event == "error":
            raise error_from_payload(self._provider, payload, secret=self._secret)
        handler = _HANDLERS.get(kind)
        return [] if handler is None else handler(self, payload)

    def end(self) -> list[StreamEvent]:
        if self._done:
            return []
        raise _incomplete(self._provider, "without message_stop")

    def _message_start(self, payload: dict[str, Any]) -> list[StreamEvent]:
        message = as_object(payload.get("message"))
        self._message_id = as_str(message.get("id")) or None
        self._merge_usage(as_object(message.get("usage")))
        model = as_str(message.get("model")) or self._model
        start = StreamStart(self._provider, model, self._message_id)
        # Passed on at once: an attempt that breaks later was billed its input (10.15).
        return [start, self._usage_event()] if self._usage else [start]

    def _block_start(self, payload: dict[str, Any]) -> list[StreamEvent]:
        index = as_int(payload.get("index"))
        block = as_object(payload.get("content_block"))
        kind = as_str(block.get("type"))
        if kind == "text":
            text = self._text.feed(as_str(block.get("text")))
            return [TextDelta(text)] if text else []
        if kind == "thinking":
            events: list[StreamEvent] = []
            if thinking := self._thought.feed(as_str(block.get("thinking"))):
                events.append(ThoughtDelta(thinking))
            if signature := as_str(block.get("signature")):
                events.append(ThoughtDelta("", signature=signature))
            return events
        if kind == "redacted_thinking":
            return [ThoughtDelta("", redacted_data=as_str(block.get("data")))]
        if kind != "tool_use":
            return []  # server tools (server_tool_use, web_search_tool_result): never executed
        call_id = as_str(block.get("id")) or self._synthesized_id()
        name = as_str(block.get("name"))
        initial = block.get("input")
        tool = _ToolBlock(
            ordinal=self._tool_count,
            call_id=call_id,
            name=name,
            initial_input=json.dumps(initial) if isinstance(initial, dict) and initial else "",
        )
        self._tool_count += 1
        self._tools[index] = tool
        return [ToolCallStart(call_id, name, tool.ordinal)]

    def _block_delta(self, payload: dict[str, Any]) -> list[StreamEvent]:
        delta = as_object(payload.get("delta"))
        kind = as_str(delta.get("type"))
        if kind == "text_delta":
            text = self._text.feed(as_str(delta.get("text")))
            return [TextDelta(text)] if text else []
        if kind == "thinking_delta":
            thinking = self._thought.feed(as_str(delta.get("thinking")))
            return [ThoughtDelta(thinking)] if thinking else []
        if kind == "signature_delta":
            return [ThoughtDelta("", signature=as_str(delta.get("signature")))]
        tool = self._tools.get(as_int(payload.get("index")))
        if kind == "input_json_delta" and tool is not None and not tool.completed:
            fragment = as_str(delta.get("partial_json"))
            if fragment:
                tool.fragments.append(fragment)
                return [ToolCallDelta(tool.call_id, tool.ordinal, fragment)]
        return []

    def _block_stop(self, payload: dict[str, Any]) -> list[StreamEvent]:
        events = self._flush_text()  # a block's text ends with it
        tool = self._tools.get(as_int(payload.get("index")))
        return events if tool is None else events + self._complete(tool)

    def _flush_text(self) -> list[StreamEvent]:
        """A high surrogate still held when its block ends is lone: U+FFFD."""
        events: list[StreamEvent] = []
        if thought := self._thought.flush():
            events.append(ThoughtDelta(thought))
        if text := self._text.flush():
            events.append(TextDelta(text))
        return events

    def _message_delta(self, payload: dict[str, Any]) -> list[StreamEvent]:
        reason = as_object(payload.get("delta")).get("stop_reason")
        if isinstance(reason, str) and reason:
            self._stop_reason = reason
        usage = payload.get("usage")
        if not isinstance(usage, dict):
            return []
        self._merge_usage(usage)
        return [self._usage_event()]

    def _message_stop(self, _payload: dict[str, Any]) -> list[StreamEvent]:
        events = self._flush_text()
        for tool in self._tools.values():
            events.extend(self._complete(tool))
        raw = self._stop_reason
        reason = _STOP_REASONS.get(raw or "", FinishReason.UNKNOWN)
        for tool in self._tools.values():
            # TURN-LENGTH-001: a call cut by max_tokens is dropped (the turn ends max_tokens);
            # arguments that do not parse for any other reason are a malformed call.
            if tool.unusable is not None and reason is not FinishReason.LENGTH:
                raise tool.unusable
        events.append(Finish(reason, raw))
        self._done = True
        return events

    def _complete(self, tool: _ToolBlock) -> list[StreamEvent]:
        if tool.completed:
            return []
        tool.completed = True
        raw = "".join(tool.fragments) if tool.fragments else tool.initial_input
        try:
            return [complete_tool_call(self._provider, tool.call_id, tool.name, raw)]
        except ModelStreamError as error:
            # The stop reason comes after the block's end (message_delta): decide there.
            tool.unusable = error
            return []

    def _merge_usage(self, usage: dict[str, Any]) -> None:
        for key, value in usage.items():
            if isinstance(value, int) and not isinstance(value, bool):
                self._usage[key] = value

    def _usage_event(self) -> Usage:
        cached = self._usage.get("cache_read_input_tokens", 0)
        created = self._usage.get("cache_creation_input_tokens", 0)
        return Usage(
            input_tokens=self._usage.get("input_tokens", 0) + cached + created,
            output_tokens=self._usage.get("output_tokens", 0),
            cached_input_tokens=cached,
        )

    def _synthesized_id(self) -> str:
        seed = self._message_id or uuid.uuid4().hex[:16]
        return f"toolu_{seed}_{self._tool_count}"


def _incomplete(provider: str, where: str) -> ModelStreamError:
    return ModelStreamError(
        FaultKind.INCOMPLETE_STREAM, f"{provider} stream ended {where}", phase=Phase.STREAM
    )


_HANDLERS = {
    "message_start": AnthropicStreamDecoder._message_start,
    "content_block_start": AnthropicStreamDecoder._block_start,
    "content_block_delta": AnthropicStreamDecoder._block_delta,
    "content_block_stop": AnthropicStreamDecoder._block_stop,
    "message_delta": AnthropicStreamDecoder._message_delta,
    "message_stop": AnthropicStreamDecoder._message_stop,
}
