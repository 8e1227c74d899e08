"""OpenAI Chat Completions stream -> normalized events (sans-IO), incl. compatible servers.

Handles the quirks of Ollama, llama.cpp, vLLM, LM Studio and OpenRouter
(model-streams.md §1): tool calls are keyed by `index`, a new `id` *with a name* at a used
index starts a new call once the previous call's arguments are complete (Ollama's index
reuse) while fresh ids on argument fragments do not (LM Studio); arguments may arrive as an
object; reasoning comes as `reasoning_content`, `reasoning` or `reasoning_details`.

Terminal marker: `[DONE]`, or EOF after a `finish_reason`. Tool calls complete at
`finish_reason` (or `[DONE]`); `Finish` is emitted at `[DONE]`/EOF so the usage chunk that
`include_usage` adds between them is not lost. In-band errors (`{"error":...}`, OpenRouter's
`finish_reason:"error"`, vLLM's `{"object":"error"}`, llama.cpp's `error:` field) raise.
"""

from __future__ import annotations

import json
import math
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
from acp_bridge.providers.http._payload import (
    as_int,
    as_list,
    as_object,
    as_str,
    complete_tool_call,
    frame_json,
    is_complete_json,
    raw_json_error,
    whole_json_object,
)
from acp_bridge.providers.http._sse import RawJson, SseEvent, SseItem

__all__ = ["OpenAIStreamDecoder"]

_FINISH_REASONS = {
    "stop": FinishReason.STOP,
    "length": FinishReason.LENGTH,
    "tool_calls": FinishReason.TOOL_CALLS,
    "function_call": FinishReason.TOOL_CALLS,
    "content_filter": FinishReason.CONTENT_FILTER,
}
_ERROR_FINISH_REASONS = frozenset({"error", "network_error"})


_PLAIN_KEYS = frozenset({"content", "role"})


@dataclass(slots=True)
class _Call:
    ordinal: int
    call_id: str | None
    name: str = ""
    fragments: list[str] = field(default_factory=list)
    started: bool = False
    completed: bool = False

    @property
    def raw(self) -> str:
        return "".join(self.fragments)


class OpenAIStreamDecoder:
    """One attempt's decoder; see the module docstring for the rules."""

    def __init__(self, *, model: str, provider: str = "openai", secret: str | None = None) -> None:
        self._model = model
        self._provider = provider
        self._secret = secret
        self._started = False
        self._id_seed: str | None = None
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self._finish_raw: str | None = None
        self._finished = False
        self._done = False
        # TURN-TEXT-001: a surrogate pair split across two events is joined, per channel.
        self._text = SurrogateJoiner()
        self._thought = SurrogateJoiner()

    @property
    def done(self) -> bool:
        return self._done

    def feed(self, item: SseItem) -> list[StreamEvent]:
        if self._done:
            return []
        if isinstance(item, RawJson):
            raise raw_json_error(self._provider, item, secret=self._secret)
        if not isinstance(item, SseEvent):
            return []
        if "error" in item.fields:
            # Pre-2025 llama.cpp: a non-standard `error:` field (model-streams.md §1.6).
            raise error_from_payload(
                self._provider, _loads(item.fields["error"]), secret=self._secret
            )
        data = item.data.strip()
        if data.startswith("[DONE]"):
            return self._terminal()
        if not data:
            return []
        chunk = frame_json(self._provider, item)
        if isinstance(chunk, dict):
            # Checked inline, without helper calls: this is the per-event hot path.
            if item.event == "error" or chunk.get("error") or chunk.get("object") == "error":
                raise error_from_payload(self._provider, chunk, secret=self._secret)
            return self._chunk(chunk)
        if item.event == "error":
            raise error_from_payload(self._provider, chunk, secret=self._secret)
        return self._chunk({})  # not an object: as if empty (untrusted payload)

    def feed_data(self, data: str) -> list[StreamEvent]:
        """`feed(SseEvent(data))` for a plain event, without building the event: the
        per-chunk hot path (a chunk that is exactly one JSON object)."""
        chunk = None if self._done else whole_json_object(data)
        if chunk is None:
            return self.feed(SseEvent(data))
        if chunk.get("error") or chunk.get("object") == "error":
            raise error_from_payload(self._provider, chunk, secret=self._secret)
        return self._chunk(chunk)

    def end(self) -> list[StreamEvent]:
        if self._done:
            return []
        if not self._finished:
            raise ModelStreamError(
                FaultKind.INCOMPLETE_STREAM,
                f"{self._provider} stream ended without [DONE] or a finish_reason",
                phase=Phase.STREAM,
            )
        return self._terminal()

    def _chunk(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        text = self._plain_text(chunk)
        if text is not None:
            text = self._text.feed(text)
            return [TextDelta(text)] if text else []
        events: list[StreamEvent] = []
        if not self._started:
            self._started = True
            self._id_seed = as_str(chunk.get("id")) or None
            request_id = self._id_seed
            events.append(
                StreamStart(self._provider, as_str(chunk.get("model")) or self._model, request_id)
            )
        for choice in as_list(chunk.get("choices")):
            choice = as_object(choice)
            if as_int(choice.get("index")) != 0:
                continue  # n=1: other choices are never requested
            self._delta(as_object(choice.get("delta")), events)
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                self._finish(reason, events)
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            events.append(_usage(usage))
        return events

    def _plain_text(self, chunk: dict[str, Any]) -> str | None:
        """The text of the most common chunk, a lone content delta; None for anything else.

        The per-chunk hot path: no tool calls, reasoning, refusal, usage or finish, and not
        the stream's first chunk. Anything unusual takes the general path below.
        """
        if not self._started or "usage" in chunk:
            return None
        choices = chunk.get("choices")
        if type(choices) is not list or len(choices) != 1:
            return None
        choice = choices[0]
        if type(choice) is not dict or choice.get("finish_reason") or choice.get("index", 0):
            return None
        delta = choice.get("delta")
        if type(delta) is not dict or not _PLAIN_KEYS.issuperset(delta):
            return None
        content = delta.get("content")
        return content if type(content) is str else None

    def _delta(self, delta: dict[str, Any], events: list[StreamEvent]) -> None:
        thought = _reasoning(delta)
        if thought is not None:
            if thought.text:
                thought = ThoughtDelta(
                    self._thought.feed(thought.text),
                    signature=thought.signature,
                    redacted_data=thought.redacted_data,
                )
            events.append(thought)
        for key in ("content", "refusal"):
            text = delta.get(key)
            if isinstance(text, str) and text:
                text = self._text.feed(text)
                if text:
                    events.append(TextDelta(text))
        for fragment in as_list(delta.get("tool_calls")):
            self._tool_fragment(as_object(fragment), events)

    def _tool_fragment(self, fragment: dict[str, Any], events: list[StreamEvent]) -> None:
        function = as_object(fragment.get("function"))
        call_id = as_str(fragment.get("id")) or None
        name = as_str(function.get("name"))
        arguments = function.get("arguments")
        text = (
            arguments
            if isinstance(arguments, str)
            else (json.dumps(arguments, ensure_ascii=False) if arguments is not None else "")
        )
        index = fragment.get("index")
        current = (
            self._by_index.get(index)
            if isinstance(index, int)
            else (self._calls[-1] if self._calls else None)
        )
        if current is None or current.completed or _starts_new_call(current, call_id, name):
            current = _Call(ordinal=len(self._calls), call_id=call_id)
            self._calls.append(current)
            if isinstance(index, int):
                self._by_index[index] = current
        if current.call_id is None:
            current.call_id = call_id
        if name and not current.name:
            current.name = name
        if text:
            current.fragments.append(text)
        if not current.started and current.name:
            current.started = True
            if current.call_id is None:
                current.call_id = self._synthesized_id(current.ordinal)
            events.append(ToolCallStart(current.call_id, current.name, current.ordinal))
            if current.raw:
                events.append(ToolCallDelta(current.call_id, current.ordinal, current.raw))
        elif current.started and text:
            assert current.call_id is not None
            events.append(ToolCallDelta(current.call_id, current.ordinal, text))

    def _finish(self, reason: str, events: list[StreamEvent]) -> None:
        if reason in _ERROR_FINISH_REASONS:
            raise ModelStreamError(  # an in-band server error (TURN-009), retried
                FaultKind.SERVER_ERROR,
                f"{self._provider} stream ended with finish_reason {reason!r}",
                phase=Phase.STREAM,
                retryable=True,
                provider_code=reason,
            )
        self._finish_raw = reason
        self._complete_calls(events)
        self._finished = True

    def _terminal(self) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        thought, text = self._thought.flush(), self._text.flush()  # a lone high surrogate
        if thought:
            events.append(ThoughtDelta(thought))
        if text:
            events.append(TextDelta(text))
        self._complete_calls(events)
        raw = self._finish_raw
        reason = _FINISH_REASONS.get(raw or "", FinishReason.UNKNOWN)
        if self._calls and reason in (FinishReason.STOP, FinishReason.UNKNOWN):
            reason = FinishReason.TOOL_CALLS  # Ollama reports "stop" on tool-call turns
        events.append(Finish(reason, raw))
        self._done = True
        return events

    def _complete_calls(self, events: list[StreamEvent]) -> None:
        cut = self._finish_raw == "length"
        for call in self._calls:
            if call.completed:
                continue
            call.completed = True
            call_id = call.call_id or self._synthesized_id(call.ordinal)
            try:
                events.append(complete_tool_call(self._provider, call_id, call.name, call.raw))
            except ModelStreamError:
                if not cut:
                    raise
                # TURN-LENGTH-001: cut by max_tokens, never executable; the attempt drops it
                # and the turn ends max_tokens (no retry would be cut any differently).

    def _synthesized_id(self, ordinal: int) -> str:
        if self._id_seed is None:
            self._id_seed = uuid.uuid4().hex[:16]
        return f"call_{self._id_seed}_{ordinal}"


def _starts_new_call(current: _Call, call_id: str | None, name: str) -> bool:
    """Whether a named fragment at a used index (or without index) begins another call.

    Ollama reuses index 0 for a whole parallel batch and older builds send no index; LM
    Studio sends a fresh id on every fragment of one call. So: a fragment without a name
    continues; another tool's name starts a new call; the same name starts one only once
    the current call's arguments are a complete JSON value.
    """
    if not name or (call_id is not None and call_id == current.call_id):
        return False
    if current.name and name != current.name:
        return True
    return is_complete_json(current.raw)


def _reasoning(delta: dict[str, Any]) -> ThoughtDelta | None:
    """`reasoning_content` (vLLM <= 0.8, llama.cpp), `reasoning` (Ollama, vLLM, OpenRouter),
    else the text of OpenRouter's `reasoning_details`, whose signature/encrypted data is kept."""
    text = as_str(delta.get("reasoning_content")) or as_str(delta.get("reasoning"))
    detail_texts: list[str] = []
    signature: str | None = None
    redacted: str | None = None
    for detail in as_list(delta.get("reasoning_details")):
        detail = as_object(detail)
        if detail.get("type") == "reasoning.encrypted":
            redacted = as_str(detail.get("data")) or redacted
        else:
            detail_texts.append(as_str(detail.get("text")) or as_str(detail.get("summary")))
        signature = as_str(detail.get("signature")) or signature
    text = text or "".join(detail_texts)
    if text or signature or redacted:
        return ThoughtDelta(text, signature=signature, redacted_data=redacted)
    return None


def _usage(usage: dict[str, Any]) -> Usage:
    prompt_details = as_object(usage.get("prompt_tokens_details"))
    completion_details = as_object(usage.get("completion_tokens_details"))
    return Usage(
        input_tokens=as_int(usage.get("prompt_tokens")),
        output_tokens=as_int(usage.get("completion_tokens")),
        cached_input_tokens=as_int(prompt_details.get("cached_tokens")),
        reasoning_tokens=as_int(completion_details.get("reasoning_tokens")),
        cost=_cost(usage.get("cost")),
    )


def _cost(value: Any) -> float | None:
    """OpenRouter's `usage.cost` (credits, in USD), when the server reports one."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value) if math.isfinite(value) else None
    return None


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return {"message": text}
