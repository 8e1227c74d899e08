"""Garbage SSE: its class (`provider_error`) is final, so it is not retried (issue 11.9)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bridge import running_bridge, scripted_config
from loopback_http import LoopbackServer, sse_reply

from acp_bridge.providers.http import HttpProviderOptions, OpenAIProvider

pytestmark = pytest.mark.anyio


@pytest.mark.requirement("ROBUST-SSE-001")
@pytest.mark.requirement("TURN-009")
async def test_a_stream_of_garbage_events_is_tried_once_and_fails_as_final(
    tmp_path: Path,
) -> None:
    garbage = [sse_reply("data: {this is not json\n\n") for _ in range(4)]
    async with LoopbackServer(garbage) as server:
        provider = OpenAIProvider(HttpProviderOptions("m", base_url=f"{server.base_url}/v1"))
        config = scripted_config(tmp_path / "s", provider=provider, models=("m",))
        async with running_bridge(config) as editor:
            await editor.initialize()
            session = await editor.new_session(tmp_path)
            reply = await editor.prompt(session, "hello")
        await provider.aclose()
    error = reply["error"]
    assert error["data"]["reason"] == "provider_error"
    assert error["data"]["giveUp"] == "not_retryable"
    assert error["data"]["attempts"] == 1
    assert len(server.requests) == 1  # classification and retry agree: one call, billed once
    resets = [u for u in editor.updates(session) if (u.get("_meta") or {}).get("reset")]
    assert resets == []
