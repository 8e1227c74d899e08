"""usage_update after every model call, and the billed usage of abandoned attempts (10.15)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from bridge import running_bridge, scripted_config
from loopback_http import LoopbackServer, Rst, WaitFor, drain, sse, sse_reply
from turn.turnkit import FakeProvider, broken, finish, start, text, usage

from acp_bridge.agent._live import LiveUpdates
from acp_bridge.providers import FaultKind, ModelRequest, Usage, UserTurn, known_context_window
from acp_bridge.providers.http import (
    AnthropicProvider,
    GeminiProvider,
    HttpProviderOptions,
    OpenAIProvider,
)

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(model="", messages=[UserTurn(("hi",))])
NOTICES = {"session": {"notices": {}}}


async def initialize(ed: Any, **capabilities: Any) -> None:
    await ed.call(
        "initialize",
        {
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": True, "writeTextFile": True},
                "terminal": True,
                **capabilities,
            },
        },
    )


def kinds(updates: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] == kind]


@pytest.mark.requirement("USAGE-001")
@pytest.mark.requirement("USAGE-002")
async def test_usage_update_after_each_model_call_bills_abandoned_attempts(
    tmp_path: Path,
) -> None:
    provider = FakeProvider(
        # The first attempt reported its input usage, then broke: billed, never context.
        [start(), usage(1000, 0), *text("Hel"), broken()],
        [start(), *text("Hello."), usage(1000, 40), finish()],
    )
    config = scripted_config(tmp_path / "s", provider, models=("gpt-4o",))
    async with running_bridge(config) as ed:
        await initialize(ed)
        session = await ed.new_session(tmp_path)
        reply = await ed.prompt(session, "hi")
        assert reply["result"]["stopReason"] == "end_turn"
        updates = kinds(ed.updates(session), "usage_update")
    assert len(updates) == 1
    (update,) = updates
    assert update["used"] == 1040  # the kept attempt: its prompt and its answer
    assert update["size"] == 128_000  # gpt-4o, from the known-models table
    meta = update["_meta"]["acpBridge"]
    assert meta["sizeSource"] == "known_models"
    assert meta["kept"] == {"input": 1000, "output": 40, "cachedInput": 0, "reasoning": 0}
    assert meta["billed"]["input"] == 2000  # both attempts were billed their input
    assert [(a["attempt"], a["state"], a["usage"]["input"]) for a in meta["attempts"]] == [
        (1, "abandoned", 1000),
        (2, "completed", 1000),
    ]
    attempts = reply["result"]["_meta"]["acpBridge"]["attempts"]
    assert [a["usage"]["input"] for a in attempts] == [1000, 1000]


@pytest.mark.requirement("USAGE-004")
async def test_window_size_from_config_and_cost_accumulates(tmp_path: Path) -> None:
    provider = FakeProvider(
        [start(), *text("One."), Usage(500, 10, cost=0.25), finish()],
        [start(), *text("Two."), Usage(700, 10, cost=0.5), finish()],
    )
    config = scripted_config(tmp_path / "s", provider, context_window=4096)
    async with running_bridge(config) as ed:
        await initialize(ed)
        session = await ed.new_session(tmp_path)
        await ed.prompt(session, "one")
        await ed.prompt(session, "two")
        updates = kinds(ed.updates(session), "usage_update")
    assert [(u["used"], u["size"]) for u in updates] == [(510, 4096), (710, 4096)]
    assert [u["cost"] for u in updates] == [
        {"amount": 0.25, "currency": "USD"},
        {"amount": 0.75, "currency": "USD"},
    ]
    assert updates[0]["_meta"]["acpBridge"]["sizeSource"] == "config"


@pytest.mark.requirement("USAGE-004")
def test_known_windows_and_the_default() -> None:
    assert known_context_window("claude-sonnet-4-20250514") == 200_000
    assert known_context_window("openai/gpt-4.1-mini") == 1_047_576
    assert known_context_window("gemini-2.5-flash") == 1_048_576
    assert known_context_window("qwen3:8b") is None
    assert LiveUpdates("qwen3:8b").window() == (128_000, "default")


def _anthropic_start() -> str:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "usage": {"input_tokens": 812, "output_tokens": 1},
    }
    return sse({"type": "message_start", "message": message}, event="message_start")


def _gemini_chunk(text_: str) -> str:
    return sse(
        {
            "candidates": [{"content": {"parts": [{"text": text_}], "role": "model"}}],
            "usageMetadata": {"promptTokenCount": 640, "candidatesTokenCount": 3},
            "responseId": "r1",
        }
    )


def _openai_usage() -> str:
    return sse(
        {
            "id": "c1",
            "choices": [],
            "usage": {"prompt_tokens": 9, "completion_tokens": 2, "cost": 0.0012},
        }
    )


@pytest.mark.requirement("USAGE-003")
@pytest.mark.parametrize("kind", ["anthropic", "gemini"])
async def test_usage_reported_before_a_break_is_passed_on(kind: str) -> None:
    release = anyio.Event()
    if kind == "anthropic":
        first = _anthropic_start()
        provider_type: Any = AnthropicProvider
        expected = Usage(input_tokens=812, output_tokens=1)
    else:
        first = _gemini_chunk("Hel")
        provider_type = GeminiProvider
        expected = Usage(input_tokens=640, output_tokens=3)
    async with LoopbackServer([sse_reply(first, WaitFor(release), then=Rst())]) as server:
        options = HttpProviderOptions("m", base_url=server.base_url, idle_timeout=5.0)
        async with provider_type(options) as provider:
            events, error = await drain(
                provider.stream(REQUEST),
                on_event=lambda e: release.set() if isinstance(e, Usage) else None,
            )
    assert error is not None
    assert error.kind is FaultKind.STREAM_INTERRUPTED
    assert [e for e in events if isinstance(e, Usage)] == [expected]


@pytest.mark.requirement("USAGE-004")
async def test_openai_compatible_cost_is_read() -> None:
    done = sse("[DONE]")
    chunk = sse({"id": "c1", "choices": [{"index": 0, "delta": {"content": "Hi"}}]})
    stop = sse({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    async with LoopbackServer([sse_reply(chunk, stop, _openai_usage(), done)]) as server:
        options = HttpProviderOptions("m", base_url=server.base_url, idle_timeout=5.0)
        async with OpenAIProvider(options) as provider:
            events, error = await drain(provider.stream(REQUEST))
    assert error is None
    assert [e for e in events if isinstance(e, Usage)] == [
        Usage(input_tokens=9, output_tokens=2, cost=0.0012)
    ]
