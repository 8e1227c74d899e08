"""History that can never be poisoned: nothing that is not JSON enters history or a request
body (TURN-JSON-001), and provider text of any kind can be journaled and sent again, with a
surrogate pair split across two SSE events joined in every decoder (TURN-TEXT-001)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import anyio
import pytest
from loopback_http import LoopbackServer, Reply, sse, sse_reply
from providers.test_providers_decoders import feed, openai_chunk
from turn.turnkit import FakeProvider, RecordingSink, RunCommand, finish, make_request, start

from acp_bridge.providers import (
    AssistantTurn,
    FinishReason,
    TextDelta,
    ThoughtDelta,
    ToolCallComplete,
    ToolCallStart,
    ToolResults,
    UserTurn,
)
from acp_bridge.providers.http import (
    AnthropicStreamDecoder,
    GeminiStreamDecoder,
    HttpProviderOptions,
    OpenAIProvider,
    OpenAIStreamDecoder,
)
from acp_bridge.sessions import Owner, SessionRecord, SessionStore, TurnRecorder
from acp_bridge.turn import AgentText, Turn

pytestmark = pytest.mark.anyio


def strict_json(body: bytes) -> Any:
    """Parses like a strict JSON reader: NaN and Infinity are not JSON."""

    def refuse(token: str) -> Any:
        raise AssertionError(f"not JSON: {token}")

    return json.loads(body, parse_constant=refuse)


def openai_reply(*chunks: dict[str, Any]) -> Reply:
    return sse_reply(*(sse(c) for c in chunks), sse("[DONE]"))


@pytest.mark.requirement("TURN-JSON-001")
async def test_non_finite_tool_arguments_never_enter_history_or_a_request_body() -> None:
    # `1e999` is valid JSON text that Python reads as infinity.
    arguments = '{"command": "echo hi", "timeout_seconds": 1e999}'
    call = {"index": 0, "id": "call_1", "function": {"name": "run_command", "arguments": arguments}}
    first = openai_reply(
        {"id": "a", "model": "m", "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
        {
            "id": "a",
            "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
        },
    )
    second = openai_reply(
        {"id": "b", "model": "m", "choices": [{"index": 0, "delta": {"content": "Sorry."}}]},
        {"id": "b", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    )
    command = RunCommand()
    sink = RecordingSink()
    async with (
        LoopbackServer([first, second]) as server,
        OpenAIProvider(
            HttpProviderOptions("gpt-test", base_url=f"{server.base_url}/v1")
        ) as provider,
    ):
        request = dataclasses.replace(make_request(provider, sink, [command]), provider=provider)
        with anyio.fail_after(15):
            await Turn(request).run()
        # A third request of the same session (the next prompt) is valid JSON too.
        request.history.append(UserTurn(("and now?",)))
    assert command.executions == []
    bodies = [strict_json(r.body) for r in server.requests]
    assert len(bodies) == 2
    kept = [m for m in request.history if isinstance(m, AssistantTurn) and m.tool_calls]
    assert kept[0].tool_calls[0].arguments == {"command": "echo hi", "timeout_seconds": None}
    results = next(m for m in request.history if isinstance(m, ToolResults))
    assert results.results[0].is_error
    assert "not valid JSON" in results.results[0].output
    json.dumps([dataclasses.asdict(m) for m in request.history], allow_nan=False)


SMILE_HIGH, SMILE_LOW = "\ud83d", "\ude00"


def anthropic_events(*texts: str) -> list[dict[str, Any]]:
    start_event = {"type": "message_start", "message": {"id": "m", "model": "c", "usage": {}}}
    block = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    deltas = [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}
        for t in texts
    ]
    end = [
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        {"type": "message_stop"},
    ]
    return [start_event, block, *deltas, *end]


def gemini_events(*texts: str) -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": t}]}}]} for t in texts
    ]
    bodies[-1]["candidates"][0]["finishReason"] = "STOP"
    return bodies


def openai_events(*texts: str) -> list[Any]:
    return [
        openai_chunk({"role": "assistant"}),
        *(openai_chunk({"content": t}) for t in texts),
        openai_chunk({}, "stop"),
        "[DONE]",
    ]


DECODERS: dict[str, Any] = {
    "openai": (lambda: OpenAIStreamDecoder(model="m"), openai_events),
    "anthropic": (lambda: AnthropicStreamDecoder(model="m"), anthropic_events),
    "gemini": (lambda: GeminiStreamDecoder(model="m"), gemini_events),
}


def shown_text(events: list[Any]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


@pytest.mark.requirement("TURN-TEXT-001")
@pytest.mark.parametrize("provider", sorted(DECODERS))
def test_a_surrogate_pair_split_across_two_events_is_joined(provider: str) -> None:
    make, events = DECODERS[provider]
    # json.dumps writes the halves as `\ud83d` / `\ude00` escapes, one per event.
    out = feed(make(), *events(f"Smile {SMILE_HIGH}", f"{SMILE_LOW}!"))
    assert shown_text(out) == "Smile \U0001f600!"
    for event in out:
        if isinstance(event, TextDelta):
            event.text.encode("utf-8")  # every chunk can be written on its own


@pytest.mark.requirement("TURN-TEXT-001")
@pytest.mark.parametrize("provider", sorted(DECODERS))
def test_a_lone_surrogate_becomes_a_replacement_character(provider: str) -> None:
    make, events = DECODERS[provider]
    out = feed(make(), *events(f"broken {SMILE_HIGH}", f" and {SMILE_LOW} too"))
    assert shown_text(out) == "broken \ufffd and \ufffd too"


@pytest.mark.requirement("TURN-TEXT-001")
def test_a_split_pair_inside_tool_arguments_is_joined() -> None:
    escaped = json.dumps({"note": "\U0001f600"})  # '{"note": "\\ud83d\\ude00"}'
    half = escaped.index("\\ude00")
    out = feed(
        OpenAIStreamDecoder(model="m"),
        openai_chunk(
            {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": ""}}]}
        ),
        # The fragments carry the pair as real (decoded) surrogate characters, split apart.
        openai_chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "function": {"arguments": escaped[:half].replace("\\ud83d", SMILE_HIGH)},
                    }
                ]
            }
        ),
        openai_chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "function": {"arguments": escaped[half:].replace("\\ude00", SMILE_LOW)},
                    }
                ]
            }
        ),
        openai_chunk({}, "tool_calls"),
        "[DONE]",
    )
    (complete,) = [e for e in out if isinstance(e, ToolCallComplete)]
    assert complete.arguments == {"note": "\U0001f600"}
    assert [e for e in out if isinstance(e, ToolCallStart)]


@pytest.mark.requirement("TURN-TEXT-001")
async def test_no_provider_text_can_break_the_journal_or_a_later_request() -> None:
    # The engine's last line of defence, whatever the adapter: lone surrogates in text,
    # thoughts and tool arguments.
    store = SessionStore.in_memory()
    owner = Owner()
    store.create(SessionRecord("s1", "/w", (), "ask", "m", None, 1.0, 1.0), owner)
    prompt = UserTurn(("hi",))
    begun = store.begin_turn("s1", owner, [{"type": "text", "text": "hi"}], prompt)
    sink = RecordingSink()
    recorder = TurnRecorder(store, "s1", begun, sink)
    provider = FakeProvider(
        [
            start(),
            ThoughtDelta(f"thinking {SMILE_LOW}"),
            TextDelta(f"text {SMILE_HIGH}"),
            ToolCallStart("c1", "run_command", 0),
            ToolCallComplete("c1", "run_command", {"command": f"echo {SMILE_HIGH}"}, "{}"),
            finish(FinishReason.TOOL_CALLS),
        ],
        [start(), TextDelta("ok"), finish()],
    )
    request = dataclasses.replace(
        make_request(provider, sink, [RunCommand()]), sink=recorder, journal=recorder, prompt=prompt
    )
    with anyio.fail_after(10):
        await Turn(request).run()
    shown = "".join(u.text for u in sink.updates if isinstance(u, AgentText))
    assert shown == "text \ufffdok"
    for message in store.history("s1"):
        json.dumps(dataclasses.asdict(message), ensure_ascii=False).encode("utf-8")
    second = provider.requests[1]
    for message in second.messages:
        json.dumps(dataclasses.asdict(message), ensure_ascii=False).encode("utf-8")
