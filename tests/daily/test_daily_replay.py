"""session/load replays the plan and the last usage state (14, "What must show")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config
from turn.turnkit import FakeProvider, finish, start, text, tool_call

from acp_bridge.providers import FinishReason, Usage

pytestmark = pytest.mark.anyio

STEPS = [
    {"content": "Read the failing test", "priority": "high", "status": "completed"},
    {"content": "Fix the parser", "priority": "high", "status": "in_progress"},
]
DONE = [{**step, "status": "completed"} for step in STEPS]


def kinds(updates: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] == kind]


def load_params(session: str, cwd: Path) -> dict[str, Any]:
    return {"sessionId": session, "cwd": str(cwd), "mcpServers": []}


@pytest.mark.requirement("USAGE-006")
@pytest.mark.requirement("PLAN-002")
async def test_load_replays_the_last_plan_and_the_last_usage(tmp_path: Path) -> None:
    provider = FakeProvider(
        # Turn 1: a plan, then an answer; each model call reports usage and a cost.
        [
            start(),
            *tool_call("c1", "update_plan", {"entries": STEPS}),
            Usage(300, 20, cost=0.01),
            finish(FinishReason.TOOL_CALLS),
        ],
        [start(), *text("Parser next."), Usage(400, 30, cost=0.02), finish()],
        # Turn 2: the plan completed.
        [
            start(),
            *tool_call("c2", "update_plan", {"entries": DONE}),
            Usage(500, 10, cost=0.01),
            finish(FinishReason.TOOL_CALLS),
        ],
        [start(), *text("Done."), Usage(600, 40, cost=0.03), finish()],
        # After the load: one more call, whose cost adds to the restored total.
        [start(), *text("Again."), Usage(700, 5, cost=0.5), finish()],
    )
    state = tmp_path / "state"
    config = scripted_config(state, provider, models=("gpt-4o",))
    async with running_bridge(config) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        await ed.prompt(session, "fix the bug")
        await ed.prompt(session, "finish it")
        live = kinds(ed.updates(session), "usage_update")
    last = live[-1]
    assert (last["used"], last["size"]) == (640, 128_000)
    assert last["cost"]["amount"] == pytest.approx(0.07)

    async with running_bridge(scripted_config(state, provider, models=("gpt-4o",))) as ed:
        await ed.initialize()
        await ed.call("session/load", load_params(session, tmp_path))
        replayed = ed.updates(session)
        # The last usage state, once, after every replayed turn: the context meter is right.
        (usage,) = kinds(replayed, "usage_update")
        assert replayed[-1] is usage
        assert (usage["used"], usage["size"]) == (640, 128_000)
        assert usage["cost"] == {"amount": last["cost"]["amount"], "currency": "USD"}
        assert usage["_meta"]["acpBridge"] == {"replayed": True, "sizeSource": "known_models"}
        # Both plans, each after its tool call, the last one the current plan.
        assert [p["entries"] for p in kinds(replayed, "plan")] == [STEPS, DONE]
        # The session goes on from the restored figures: the cost keeps accumulating.
        reply = await ed.prompt(session, "once more")
        assert reply["result"]["stopReason"] == "end_turn"
        after = kinds(ed.updates(session), "usage_update")[-1]
    assert after["used"] == 705
    assert after["cost"]["amount"] == pytest.approx(0.57)


@pytest.mark.requirement("USAGE-006")
async def test_a_session_without_usage_replays_none(
    tmp_path: Path,
) -> None:
    provider = FakeProvider([start(), *text("No usage reported."), finish()])
    state = tmp_path / "state"
    async with running_bridge(scripted_config(state, provider)) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        await ed.prompt(session, "hi")
        assert kinds(ed.updates(session), "usage_update") == []
    async with running_bridge(scripted_config(state, provider)) as ed:
        await ed.initialize()
        await ed.call("session/load", load_params(session, tmp_path))
        assert kinds(ed.updates(session), "usage_update") == []
