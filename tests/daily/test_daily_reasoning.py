"""Reasoning effort as a session config option, per provider (14.8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config
from daily.test_daily_instructions import PROVIDERS
from loopback_http import LoopbackServer

from acp_bridge.cli._setting_table import setting
from acp_bridge.cli._settings import resolve
from acp_bridge.providers import REASONING_LEVELS
from acp_bridge.providers.http import HttpProviderOptions

pytestmark = pytest.mark.anyio


def effort_of(kind: str, body: dict[str, Any]) -> object:
    """What the request body carries for the reasoning effort (None: nothing)."""
    if kind == "openai":
        return body.get("reasoning_effort")
    if kind == "anthropic":
        thinking = body.get("thinking")
        if thinking is None:
            return None
        assert thinking["type"] == "enabled"
        assert body["max_tokens"] > thinking["budget_tokens"]  # Anthropic's own rule
        return thinking["budget_tokens"]
    config = body.get("generationConfig", {}).get("thinkingConfig")
    return None if config is None else config["thinkingBudget"]


EXPECTED = {
    "openai": {"low": "low", "high": "high"},
    "anthropic": {"low": 2048, "high": 24576},
    "gemini": {"low": 2048, "high": 24576},
}


def reasoning_option(options: list[dict[str, Any]]) -> dict[str, Any] | None:
    found = [o for o in options if o["id"] == "reasoning_effort"]
    return found[0] if found else None


@pytest.mark.requirement("REASON-001")
@pytest.mark.requirement("REASON-002")
@pytest.mark.parametrize("kind", sorted(PROVIDERS))
async def test_the_chosen_effort_reaches_each_provider(tmp_path: Path, kind: str) -> None:
    provider_type, answer = PROVIDERS[kind]
    async with LoopbackServer([answer(), answer(), answer()]) as server:
        # A max_tokens below the high budget: Anthropic's max_tokens is raised past it.
        options = HttpProviderOptions("m", base_url=server.base_url, api_key="k", max_tokens=8192)
        config = scripted_config(
            tmp_path / "s", provider_type(options), levels=REASONING_LEVELS, reasoning_effort="low"
        )
        async with running_bridge(config) as ed:
            await ed.initialize()
            new = await ed.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
            session = new["sessionId"]
            option = reasoning_option(new["configOptions"])
            assert option is not None
            assert option["category"] == "thought_level"
            assert option["currentValue"] == "low"
            assert [o["value"] for o in option["options"]] == list(REASONING_LEVELS)
            assert (await ed.prompt(session, "one"))["result"]["stopReason"] == "end_turn"
            chosen = await ed.call(
                "session/set_config_option",
                {"sessionId": session, "configId": "reasoning_effort", "value": "high"},
            )
            assert reasoning_option(chosen["configOptions"])["currentValue"] == "high"  # type: ignore[index]
            assert (await ed.prompt(session, "two"))["result"]["stopReason"] == "end_turn"
            await ed.call(
                "session/set_config_option",
                {"sessionId": session, "configId": "reasoning_effort", "value": "default"},
            )
            assert (await ed.prompt(session, "three"))["result"]["stopReason"] == "end_turn"
        bodies = [request.json() for request in server.requests]
    assert [effort_of(kind, b) for b in bodies] == [
        EXPECTED[kind]["low"],
        EXPECTED[kind]["high"],
        None,  # default: nothing sent (no thinking_budget configured)
    ]
    if kind == "anthropic":
        assert bodies[1]["max_tokens"] == 8192 + 24576
        assert bodies[0]["max_tokens"] == 8192


@pytest.mark.requirement("REASON-001")
async def test_not_offered_without_levels_and_unknown_values_are_refused(tmp_path: Path) -> None:
    async with running_bridge(scripted_config(tmp_path / "s")) as ed:
        await ed.initialize()
        new = await ed.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        assert reasoning_option(new["configOptions"]) is None
        refused = await ed.request(
            "session/set_config_option",
            {"sessionId": new["sessionId"], "configId": "reasoning_effort", "value": "high"},
        )
        assert refused["error"]["code"] == -32602
        assert "Unknown config option (offered: model)" in refused["error"]["message"]
    config = scripted_config(tmp_path / "t", levels=REASONING_LEVELS)
    async with running_bridge(config) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        refused = await ed.request(
            "session/set_config_option",
            {"sessionId": session, "configId": "reasoning_effort", "value": "extreme"},
        )
        assert refused["error"]["code"] == -32602
        message = refused["error"]["message"]
        assert "Unknown reasoning effort (offered: default, low, medium, high)" in message
        # The bridge keeps serving.
        assert (await ed.prompt(session, "/hello"))["result"]["stopReason"] == "end_turn"


@pytest.mark.requirement("REASON-003")
def test_the_default_effort_is_a_setting() -> None:
    assert setting("reasoning_effort").choices == REASONING_LEVELS
    assert resolve({}, {}, "/dev/null").reasoning_effort == "default"
    chosen = resolve({}, {"ACP_BRIDGE_REASONING_EFFORT": "medium"}, "/dev/null")
    assert chosen.reasoning_effort == "medium"
    with pytest.raises(Exception, match="choose one of default, low, medium, high"):
        resolve({"reasoning_effort": "max"}, {}, "/dev/null")
