"""A tool cancelled while it runs is "outcome unknown", to the model and in the ledger; only a
call that never ran is "not run" (TURN-UNKNOWN-001)."""

from __future__ import annotations

import pytest
from turn.test_turn_cancel import REFUND, cancel_at, refund_call
from turn.turnkit import (
    FakeProvider,
    FakeTool,
    Hold,
    IssueRefund,
    RecordingSink,
    finish,
    make_request,
    start,
    tool_call,
)

from acp_bridge.providers import FinishReason, Message, ToolResults
from acp_bridge.tools import TextContent, ToolKind
from acp_bridge.turn import (
    EffectKey,
    EffectLedger,
    EffectState,
    StopReason,
    ToolCallChanged,
    ToolStatus,
)

pytestmark = pytest.mark.anyio


def told(request_history: list[Message]) -> str:
    results = request_history[-1]
    assert isinstance(results, ToolResults)
    (result,) = results.results
    assert result.is_error
    return result.output


def closing_text(sink: RecordingSink) -> str:
    last = sink.updates[-1]
    assert isinstance(last, ToolCallChanged)
    assert last.status is ToolStatus.FAILED
    assert last.content is not None
    first = last.content[0]
    assert isinstance(first, TextContent)
    return first.text


@pytest.mark.requirement("TURN-UNKNOWN-001")
async def test_a_side_effect_cancelled_while_running_is_outcome_unknown() -> None:
    hold = Hold()
    refund = IssueRefund(hold=hold)
    ledger = EffectLedger.in_memory()
    sink = RecordingSink()
    request = make_request(FakeProvider(refund_call()), sink, [refund], ledger=ledger)
    turn = await cancel_at(request, hold)
    assert len(refund.executions) == 1  # Tool.run had started
    assert told(request.history).startswith("Outcome unknown")
    assert "Not run" not in told(request.history)
    assert closing_text(sink).startswith("Outcome unknown")
    record = ledger.lookup(EffectKey.derive("s1-turn1", "issue_refund", REFUND))
    assert record is not None
    assert record.state is EffectState.STARTED
    (run,) = turn.result(StopReason.CANCELLED).tool_runs
    assert run.ran
    assert run.status is ToolStatus.FAILED


@pytest.mark.requirement("TURN-UNKNOWN-001")
async def test_a_read_cancelled_while_running_is_not_finished() -> None:
    hold = Hold()
    reader = FakeTool("read_file", kind=ToolKind.READ, side_effect=False, hold=hold)
    sink = RecordingSink()
    script = [start(), *tool_call("c1", "read_file", {}), finish(FinishReason.TOOL_CALLS)]
    request = make_request(FakeProvider(script), sink, [reader])
    await cancel_at(request, hold)
    assert told(request.history).startswith("Not finished")
    assert closing_text(sink).startswith("Not finished")


@pytest.mark.requirement("TURN-UNKNOWN-001")
async def test_a_call_cancelled_before_it_ran_is_not_run() -> None:
    hold = Hold()
    refund = IssueRefund()
    sink = RecordingSink([hold])  # cancelled while its permission prompt is pending
    request = make_request(FakeProvider(refund_call()), sink, [refund])
    await cancel_at(request, hold)
    assert refund.executions == []
    assert told(request.history).startswith("Not run")
