"""A tool call cut off by the output limit ends the turn `max_tokens`, never retried, for every
provider adapter (TURN-LENGTH-001): one request, one billed attempt, nothing run."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from loopback_http import LoopbackServer, Reply, sse, sse_reply
from turn.turnkit import RecordingSink, RunCommand, make_request

from acp_bridge.providers import ModelProvider
from acp_bridge.providers.http import (
    AnthropicProvider,
    GeminiProvider,
    HttpProviderOptions,
    OpenAIProvider,
)
from acp_bridge.turn import StopReason, Turn

pytestmark = pytest.mark.anyio

CUT = '{"command": "echo refund ORD-77'  # the arguments stop mid-string: never a JSON object


def openai_cut() -> Reply:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse({"id": "c", "model": "m", "choices": [choice]})

    call = {"index": 0, "id": "call_1", "function": {"name": "run_command", "arguments": CUT}}
    return sse_reply(
        chunk({"content": "Running it. "}),
        chunk({"tool_calls": [call]}),
        chunk({}, "length"),
        sse("[DONE]"),
    )


def anthropic_cut() -> Reply:
    def event(kind: str, **body: Any) -> str:
        return sse({"type": kind, **body}, event=kind)

    message = {"id": "msg_1", "model": "claude-test", "usage": {"input_tokens": 5}}
    block = {"type": "tool_use", "id": "toolu_1", "name": "run_command", "input": {}}
    return sse_reply(
        event("message_start", message=message),
        event("content_block_start", index=0, content_block=block),
        event(
            "content_block_delta", index=0, delta={"type": "input_json_delta", "partial_json": CUT}
        ),
        event("content_block_stop", index=0),
        event("message_delta", delta={"stop_reason": "max_tokens"}, usage={"output_tokens": 9}),
        event("message_stop"),
    )


def gemini_cut() -> Reply:
    # Gemini sends whole functionCall objects: at MAX_TOKENS a call is either complete or
    # absent, and even a complete one of a cut answer is never run.
    part = {"functionCall": {"name": "run_command", "args": {"command": "echo hi"}}}
    body = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "Running it. "}, part]},
                "finishReason": "MAX_TOKENS",
            }
        ],
        "modelVersion": "gemini-test-001",
        "responseId": "resp-1",
    }
    return sse_reply(sse(body))


ADAPTERS: dict[str, tuple[Callable[[str], ModelProvider], Callable[[], Reply]]] = {
    "openai": (
        lambda url: OpenAIProvider(HttpProviderOptions("gpt-test", base_url=f"{url}/v1")),
        openai_cut,
    ),
    "anthropic": (
        lambda url: AnthropicProvider(HttpProviderOptions("claude-test", base_url=url)),
        anthropic_cut,
    ),
    "gemini": (
        lambda url: GeminiProvider(HttpProviderOptions("gemini-test", base_url=f"{url}/v1beta")),
        gemini_cut,
    ),
}


@pytest.mark.requirement("TURN-LENGTH-001")
@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
async def test_a_tool_call_cut_by_max_tokens_ends_the_turn_max_tokens(adapter: str) -> None:
    make_provider, reply = ADAPTERS[adapter]
    command = RunCommand()
    sink = RecordingSink()
    async with LoopbackServer([reply()]) as server:
        provider: Any = make_provider(server.base_url)
        async with provider:
            request = dataclasses.replace(
                make_request(provider, sink, [command]), provider=provider
            )
            with anyio.fail_after(15):
                result = await Turn(request).run()
    assert result.stop_reason is StopReason.MAX_TOKENS
    assert result.retries == 0
    assert len(server.requests) == 1  # never retried: a retry would be cut the same way
    assert result.billed_attempts == 1
    assert command.executions == []
    assert sink.prompts == []
