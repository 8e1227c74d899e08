"""The stream decoders on their own: SSE items in, normalized events out, no event loop."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_bridge.providers import (
    FaultKind,
    Finish,
    FinishReason,
    ModelStreamError,
    StreamEvent,
    StreamStart,
    TextDelta,
    ThoughtDelta,
    ToolCallComplete,
    ToolCallDelta,
    ToolCallStart,
)
from acp_bridge.providers.http import (
    AnthropicStreamDecoder,
    GeminiStreamDecoder,
    OpenAIStreamDecoder,
    SseComment,
    SseEvent,
    StreamDecoder,
)


def feed(decoder: StreamDecoder, *payloads: Any, end: bool = True) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    for payload in payloads:
        if isinstance(payload, SseEvent | SseComment):
            events.extend(decoder.feed(payload))
        else:
            text = payload if isinstance(payload, str) else json.dumps(payload)
            events.extend(decoder.feed(SseEvent(data=text)))
    if end:
        events.extend(decoder.end())
    return events


def openai_chunk(
    delta: dict[str, Any] | None, finish: str | None = None, index: int = 0, **extra: Any
) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": index, "delta": delta, "finish_reason": finish}]
    return {"id": "c", "model": "m", "choices": choices, **extra}


def test_openai_done_completes_calls_without_a_finish_reason() -> None:
    decoder = OpenAIStreamDecoder(model="m")
    events = feed(
        decoder,
        openai_chunk(
            {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}}]}
        ),
        openai_chunk({"content": "ignored"}, index=1),
        SseComment("keep-alive"),
        "[DONE]",
        openai_chunk({"content": "after the end"}),
    )
    assert events == [
        StreamStart("openai", "m", "c"),
        ToolCallStart("a", "f", 0),
        ToolCallDelta("a", 0, "{}"),
        ToolCallComplete("a", "f", {}, "{}"),
        Finish(FinishReason.TOOL_CALLS, None),
    ]
    assert decoder.done


def test_openai_unknown_finish_reason_is_unknown_not_stop() -> None:
    events = feed(OpenAIStreamDecoder(model="m"), openai_chunk({}, "weird"), "[DONE]")
    assert events[-1] == Finish(FinishReason.UNKNOWN, "weird")


@pytest.mark.requirement("ROBUST-SSE-001")
def test_openai_garbage_frame_is_a_final_provider_error() -> None:
    with pytest.raises(ModelStreamError) as caught:
        feed(OpenAIStreamDecoder(model="m"), "{not json")
    assert (caught.value.kind, caught.value.retryable) == (FaultKind.PROVIDER_ERROR, False)


def test_openai_tool_call_without_a_name_is_malformed() -> None:
    decoder = OpenAIStreamDecoder(model="m")
    with pytest.raises(ModelStreamError) as caught:
        feed(
            decoder,
            openai_chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
            openai_chunk({}, "tool_calls"),
        )
    assert caught.value.kind is FaultKind.MALFORMED_TOOL_CALL


def test_openai_non_object_arguments_are_malformed() -> None:
    with pytest.raises(ModelStreamError) as caught:
        feed(
            OpenAIStreamDecoder(model="m"),
            openai_chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "a", "function": {"name": "f", "arguments": "[1, 2]"}}
                    ]
                }
            ),
            openai_chunk({}, "tool_calls"),
        )
    assert caught.value.kind is FaultKind.MALFORMED_TOOL_CALL


def test_anthropic_server_tools_and_unknown_events_are_not_tool_calls() -> None:
    decoder = AnthropicStreamDecoder(model="claude")
    events = feed(
        decoder,
        {"type": "message_start", "message": {"id": "msg", "model": "claude", "usage": {}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "server_tool_use", "id": "srv", "name": "web_search"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"q":"x"}'},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "brand_new_event"},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu", "name": "f", "input": {"a": 1}},
        },
        {"type": "message_stop"},
    )
    assert events == [
        StreamStart("anthropic", "claude", "msg"),
        ToolCallStart("toolu", "f", 0),
        ToolCallComplete("toolu", "f", {"a": 1}, '{"a": 1}'),
        Finish(FinishReason.UNKNOWN, None),
    ]


def test_gemini_thought_parts_and_bad_args() -> None:
    decoder = GeminiStreamDecoder(model="g")
    events = feed(
        decoder,
        {
            "candidates": [
                {
                    "content": {
                        "parts": [
                            {"text": "thinking", "thought": True, "thoughtSignature": "sig"},
                            {"text": "answer", "thoughtSignature": "sig2"},
                        ]
                    },
                    "finishReason": "OTHER",
                }
            ]
        },
    )
    assert events[1:] == [
        ThoughtDelta("thinking", signature="sig"),
        TextDelta("answer"),
        ThoughtDelta("", signature="sig2"),
        Finish(FinishReason.UNKNOWN, "OTHER"),
    ]
    assert events[0].model == "g"  # type: ignore[union-attr]
    with pytest.raises(ModelStreamError) as caught:
        feed(
            GeminiStreamDecoder(model="g"),
            {
                "candidates": [
                    {"content": {"parts": [{"functionCall": {"name": "f", "args": [1]}}]}}
                ]
            },
        )
    assert caught.value.kind is FaultKind.MALFORMED_TOOL_CALL


def test_cut_event_at_eof_is_incomplete_not_garbage() -> None:
    decoder = GeminiStreamDecoder(model="g")
    with pytest.raises(ModelStreamError) as caught:
        decoder.feed(SseEvent(data='{"candidates": [{"cont', terminated=False))
    assert caught.value.kind is FaultKind.INCOMPLETE_STREAM
