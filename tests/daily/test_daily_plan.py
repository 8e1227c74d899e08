"""The planning tool: plan updates without permission, replayed by session/load (14.3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config
from turn.turnkit import FakeProvider, finish, start, text, tool_call

from acp_bridge.providers import FinishReason
from acp_bridge.tools import default_tools

pytestmark = pytest.mark.anyio

STEPS = [
    {"content": "Read the failing test", "priority": "high", "status": "completed"},
    {"content": "Fix the parser", "priority": "high", "status": "in_progress"},
    {"content": "Run the suite", "priority": "medium", "status": "pending"},
]


def plans(updates: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    return [u["entries"] for u in updates if u["sessionUpdate"] == "plan"]


@pytest.mark.requirement("PLAN-001")
@pytest.mark.requirement("PLAN-002")
async def test_plan_is_shown_without_permission_and_replayed(tmp_path: Path) -> None:
    provider = FakeProvider(
        [
            start(),
            *tool_call("c1", "update_plan", {"entries": STEPS}),
            finish(FinishReason.TOOL_CALLS),
        ],
        [start(), *text("Working on the parser."), finish()],
    )
    state = tmp_path / "state"
    async with running_bridge(scripted_config(state, provider)) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        reply = await ed.prompt(session, "fix the bug")
        assert reply["result"]["stopReason"] == "end_turn"
        live = ed.updates(session)
        assert ed.requests_of("session/request_permission") == []  # no permission asked
    assert plans(live) == [STEPS]
    # The model read a short confirmation.
    results = provider.requests[1].messages[-1]
    assert "Plan updated: 3 entries. Now: Fix the parser." in str(results)

    async with running_bridge(scripted_config(state, FakeProvider())) as ed:
        await ed.initialize()
        await ed.call(
            "session/load", {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
        )
        replayed = ed.updates(session)
    assert plans(replayed) == [STEPS]
    call = next(u for u in replayed if u["sessionUpdate"] == "tool_call")
    assert call["kind"] == "think"
    assert call["title"] == "Update plan (1 of 3 done)"


@pytest.mark.requirement("PLAN-003")
async def test_a_bad_plan_is_refused_with_what_to_fix(tmp_path: Path) -> None:
    bad = {"entries": [{"content": "x", "priority": "urgent", "status": "pending"}]}
    provider = FakeProvider(
        [start(), *tool_call("c1", "update_plan", bad), finish(FinishReason.TOOL_CALLS)],
        [start(), *text("ok"), finish()],
    )
    async with running_bridge(scripted_config(tmp_path / "s", provider)) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        await ed.prompt(session, "plan")
        assert plans(ed.updates(session)) == []
    assert "priority must be one of high, medium, low" in str(provider.requests[1].messages[-1])


@pytest.mark.requirement("PLAN-003")
def test_the_tool_is_offered_and_described() -> None:
    tool = default_tools().get("update_plan")
    assert tool is not None
    assert not tool.side_effect
    assert "whole list" in tool.description
    assert "in_progress" in tool.description
    item = tool.parameters["properties"]["entries"]["items"]  # type: ignore[index]
    assert item["required"] == ["content", "priority", "status"]  # type: ignore[index]
