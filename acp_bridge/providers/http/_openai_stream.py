"""OpenAI Chat Completions stream -> normalized events (sans-IO), incl. compatible servers.

Handles the quirks of Ollama, llama.cpp, vLLM, LM Studio and OpenRouter
(model-streams.md §1): tool calls are assembled by `_openai_calls`, reasoning and usage
read by `_openai_fields`.

Terminal marker: `[DONE]`, or EOF after a `finish_reason`. Tool calls complete at
`finish_reason` (or `[DONE]`); `Finish` is emitted at `[DONE]`/EOF so the usage chunk that
`include_usage` adds between them is not lost. In-band errors (`{"error":...}`, OpenRouter's
`finish_reason:"error"`, vLLM's `{"object":"error"}`, llama.cpp's `error:` field) raise.
"""

from __future__ import annotations

import json
from typing import Any

from acp_bridge.providers._errors import FaultKind, ModelStreamError, Phase
from acp_bridge.providers._events import (
    Finish,
    FinishReason,
    StreamEvent,
    StreamStart,
    TextDelta,
    ThoughtDelta,
)
from acp_bridge.providers._text import SurrogateJoiner
from acp_bridge.providers.http._classify import error_from_payload
from acp_bridge.providers.http._event_decoder import EventDecoder
from acp_bridge.providers.http._openai_calls import OpenAIToolCalls
from acp_bridge.providers.http._openai_fields import (
    ERROR_FINISH_REASONS,
    FINISH_REASONS,
    reasoning,
    usage,
)
from acp_bridge.providers.http._payload import (
    as_int,
    as_list,
    as_object,
    as_str,
    frame_json,
    whole_json_object,
)
from acp_bridge.providers.http._sse_items import SseEvent

__all__ = ["OpenAIStreamDecoder"]

_PLAIN_KEYS = frozenset({"content", "role"})


class OpenAIStreamDecoder(EventDecoder):
    """One attempt's decoder; see the module docstring for the rules."""

    def __init__(self, *, model: str, provider: str = "openai", secret: str | None = None) -> None:
        super().__init__(provider, secret)
        self._model = model
        self._started = False
        self._calls = OpenAIToolCalls(provider)
        self._finish_raw: str | None = None
        self._finished = False
        # TURN-TEXT-001: a surrogate pair split across two events is joined, per channel.
        self._text = SurrogateJoiner()
        self._thought = SurrogateJoiner()

    def _event(self, item: SseEvent) -> list[StreamEvent]:
        if item.event == "message" and not item.fields:
            # A plain event (the per-event hot path): `feed_data`'s checks, no stripping.
            chunk = whole_json_object(item.data)
            if chunk is not None:
                if chunk.get("error") or chunk.get("object") == "error":
                    raise error_from_payload(self._provider, chunk, secret=self._secret)
                return self._chunk(chunk)
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
        if data == "[DONE]":  # the terminal marker as servers send it: no JSON to try
            return [] if self._done else self._terminal()
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
            request_id = self._calls.id_seed = as_str(chunk.get("id")) or None
            events.append(
                StreamStart(self._provider, as_str(chunk.get("model")) or self._model, request_id)
            )
        for choice in as_list(chunk.get("choices")):
            choice = as_object(choice)
            if as_int(choice.get("index")) != 0:
                continue  # n=1: other choices are never requested
            delta = as_object(choice.get("delta"))
            if delta:  # the finish chunk's delta is usually empty
                self._delta(delta, events)
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                self._finish(reason, events)
        fields = chunk.get("usage")
        if isinstance(fields, dict):
            events.append(usage(fields))
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
        thought = reasoning(delta)
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
            self._calls.fragment(as_object(fragment), events)

    def _finish(self, reason: str, events: list[StreamEvent]) -> None:
        if reason in ERROR_FINISH_REASONS:
            raise ModelStreamError(  # an in-band server error (TURN-009), retried
                FaultKind.SERVER_ERROR,
                f"{self._provider} stream ended with finish_reason {reason!r}",
                phase=Phase.STREAM,
                retryable=True,
                provider_code=reason,
            )
        self._finish_raw = reason
        self._calls.complete(events, cut=self._finish_raw == "length")
        self._finished = True

    def _terminal(self) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        thought, text = self._thought.flush(), self._text.flush()  # a lone high surrogate
        if thought:
            events.append(ThoughtDelta(thought))
        if text:
            events.append(TextDelta(text))
        self._calls.complete(events, cut=self._finish_raw == "length")
        raw = self._finish_raw
        reason = FINISH_REASONS.get(raw or "", FinishReason.UNKNOWN)
        if self._calls and reason in (FinishReason.STOP, FinishReason.UNKNOWN):
            reason = FinishReason.TOOL_CALLS  # Ollama reports "stop" on tool-call turns
        events.append(Finish(reason, raw))
        self._done = True
        return events


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return {"message": text}
