"""The loop guard: identical tool calls in a row are refused, then the turn ends (14.7)."""

from __future__ import annotations

import pytest
from turn.turnkit import (
    FakeProvider,
    ReadFile,
    RecordingSink,
    finish,
    make_request,
    start,
    text,
    tool_call,
)

from acp_bridge.providers import FinishReason, ToolResults
from acp_bridge.turn import AgentText, StopReason, repair_history, run_turn

pytestmark = pytest.mark.anyio


def reading(n: int, path: str = "a.py") -> list[list[object]]:
    return [
        [start(), *tool_call(f"c{i}", "read_file", {"path": path}), finish(FinishReason.TOOL_CALLS)]
        for i in range(n)
    ]


@pytest.mark.requirement("LOOP-001")
async def test_the_fourth_identical_call_is_refused_and_the_model_recovers() -> None:
    tool = ReadFile()
    provider = FakeProvider(*reading(4), [start(), *text("Done."), finish()])
    sink = RecordingSink()
    request = make_request(provider, sink, [tool])
    result = await run_turn(request)
    assert result.stop_reason is StopReason.END_TURN
    assert len(tool.executions) == 3  # the 4th was not run
    refusal = request.history[-2]
    assert isinstance(refusal, ToolResults)
    (only,) = refusal.results
    assert only.is_error
    assert "4 times in a row" in only.output
    assert repair_history(request.history)[0] == request.history  # every call paired


@pytest.mark.requirement("LOOP-001")
async def test_other_arguments_start_the_count_again() -> None:
    tool = ReadFile()
    scripts = [*reading(3, "a.py"), *reading(3, "b.py"), [start(), *text("ok"), finish()]]
    result = await run_turn(make_request(FakeProvider(*scripts), RecordingSink(), [tool]))
    assert result.stop_reason is StopReason.END_TURN
    assert len(tool.executions) == 6


@pytest.mark.requirement("LOOP-002")
async def test_it_goes_on_and_the_turn_ends_with_a_reason() -> None:
    tool = ReadFile()
    sink = RecordingSink()
    request = make_request(FakeProvider(*reading(8)), sink, [tool])
    result = await run_turn(request)
    assert result.stop_reason is StopReason.MAX_TURN_REQUESTS
    assert len(tool.executions) == 3
    last = sink.updates[-1]
    assert isinstance(last, AgentText)
    assert last.text.startswith("Stopped: the model called read_file with the same arguments 8")
    assert repair_history(request.history)[0] == request.history
