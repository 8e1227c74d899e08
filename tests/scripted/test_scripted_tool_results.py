"""The scripted model reads the tool result like a real model (SCRIPT-015): after a rejected or
failed call it does not claim success, and it can quote the result (`${tool_result}`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config
from editor import choose

from acp_bridge.providers import (
    AssistantTurn,
    ModelRequest,
    TextDelta,
    ToolResult,
    ToolResults,
    UserTurn,
)
from acp_bridge.providers.scripted import ScriptedProvider, ScriptError, loads_script

pytestmark = pytest.mark.anyio


def final_text(updates: list[dict[str, Any]]) -> str:
    """The agent's last message (what it says after the tool ran, or did not)."""
    chunks = [u for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
    last_id = chunks[-1]["messageId"]
    return "".join(u["content"]["text"] for u in chunks if u["messageId"] == last_id)


@pytest.mark.requirement("SCRIPT-015")
async def test_after_a_rejected_write_the_refund_is_not_claimed(tmp_path: Path) -> None:
    config = scripted_config(tmp_path / "s")
    async with running_bridge(config, permission=choose("reject_once")) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        reply = await ed.prompt(session, "/help-desk-refund-file")
        said = final_text(ed.updates(session))
    assert reply["result"]["stopReason"] == "end_turn"
    assert not (tmp_path / "refunds").exists()
    assert "is recorded" not in said
    assert said.startswith("I could not record the refund for order ORD-7781:")
    assert "rejected" in said  # it quotes the tool result it read


@pytest.mark.requirement("SCRIPT-015")
async def test_after_an_allowed_write_the_refund_is_claimed(tmp_path: Path) -> None:
    async with running_bridge(scripted_config(tmp_path / "s")) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        await ed.prompt(session, "/help-desk-refund-file")
        said = final_text(ed.updates(session))
    assert said == "The refund for order ORD-7781 is recorded in refunds/ORD-7781.txt."
    assert (tmp_path / "refunds" / "ORD-7781.txt").exists()


SCRIPT = {
    "name": "reads-results",
    "description": "branches on the tool result",
    "calls": [
        {"attempts": [[{"tool_call": "probe", "arguments": {}}, {"finish": "auto"}]]},
        {
            "attempts": [[{"text": "It worked: ${tool_result}"}, {"finish": "stop"}]],
            "when_tool_failed": [[{"text": "It failed: ${tool_result}"}, {"finish": "stop"}]],
        },
    ],
}


async def played(results: tuple[ToolResult, ...]) -> str:
    provider = ScriptedProvider(loads_script(json.dumps(SCRIPT)))
    messages = [UserTurn(("go",)), AssistantTurn(""), ToolResults(results)]
    text = ""
    async for event in provider.stream(ModelRequest(model="m", messages=messages)):
        if isinstance(event, TextDelta):
            text += event.text
    return text


@pytest.mark.requirement("SCRIPT-015")
async def test_the_branch_follows_the_previous_round_results() -> None:
    ok = ToolResult("c1", "probe", "all\n  good")
    bad = ToolResult("c2", "probe", "disk full", is_error=True)
    assert await played((ok,)) == "It worked: all good"
    assert await played((ok, bad)) == "It failed: disk full"


@pytest.mark.requirement("SCRIPT-015")
def test_a_malformed_branch_is_refused() -> None:
    bad = json.loads(json.dumps(SCRIPT))
    bad["calls"][1]["when_tool_failed"] = []
    with pytest.raises(ScriptError, match="'when_tool_failed' must be a non-empty list"):
        loads_script(json.dumps(bad))
