"""Cancellation at every stage (TURN-014, TURN-015).

The caller runs the turn inside its own cancel scope, exactly as the agent layer does:
``with CancelScope() as scope: await turn.run()`` then ``if scope.cancelled_caught: cancelled``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import anyio
import anyio.lowlevel
import pytest
from turn.turnkit import (
    FakeProvider,
    Hold,
    IssueRefund,
    RecordingSink,
    RecordingSleep,
    broken,
    cancel_when,
    finish,
    make_request,
    start,
    text,
    tool_call,
)

from acp_bridge.providers import (
    FaultKind,
    FinishReason,
    ModelRequest,
    ModelStreamError,
    StreamEvent,
    TextDelta,
    ToolResults,
)
from acp_bridge.turn import (
    AgentText,
    AttemptState,
    EffectKey,
    EffectLedger,
    EffectState,
    StopReason,
    ToolCallChanged,
    ToolStatus,
    Turn,
    TurnRequest,
)

REFUND = {"order_id": "A"}


async def cancel_at(request: TurnRequest, hold: Hold) -> Turn:
    """Run the turn, cancel its scope once `hold` is reached; return the turn."""
    sink = request.sink
    assert isinstance(sink, RecordingSink)
    turn = await cancel_when(request, hold)
    sink.closed = True
    for _ in range(5):  # give any stray task the chance to send something late
        await anyio.lowlevel.checkpoint()
    assert sink.after_close == []
    return turn


def refund_call(*extra: object) -> list[object]:
    return [
        start(),
        *text("Refunding."),
        *tool_call("c1", "issue_refund", REFUND),
        *extra,
        finish(FinishReason.TOOL_CALLS),
    ]


@pytest.mark.anyio
@pytest.mark.requirement("TURN-014")
async def test_cancel_while_streaming() -> None:
    hold = Hold()
    refund = IssueRefund()
    sink = RecordingSink()
    provider = FakeProvider(
        [
            start(),
            *text("Hel"),
            *tool_call("c1", "issue_refund", REFUND),
            hold,
            finish(FinishReason.TOOL_CALLS),
        ]
    )
    request = make_request(provider, sink, [refund])
    turn = await cancel_at(request, hold)
    assert sink.updates == [AgentText("Hel", "s1-turn1-m1-a1")]
    assert refund.executions == []
    assert request.history == [request.prompt]
    report = turn.result(StopReason.CANCELLED)
    assert [(a.state, a.reason) for a in report.attempts] == [(AttemptState.ABANDONED, "cancelled")]


@pytest.mark.anyio
@pytest.mark.requirement("TURN-014")
@pytest.mark.requirement("TURN-015")
async def test_cancel_during_the_back_off() -> None:
    hold = Hold()
    sink = RecordingSink()
    provider = FakeProvider([start(), *text("Hel"), broken()], [start(), *text("x"), finish()])
    request = make_request(provider, sink, sleep=RecordingSleep(hold))
    await cancel_at(request, hold)
    assert [u.reset for u in sink.updates if isinstance(u, AgentText)][-1] is not None
    assert len(provider.requests) == 1  # the retry never started


class CancelToErrorProvider:
    """An adapter that turns its own cancellation into a connection error (as some HTTP
    stacks do when the socket is closed under them)."""

    name = "fake"
    model = "fake-model"

    def __init__(self, hold: Hold) -> None:
        self.hold = hold
        self.requests = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests += 1
        yield TextDelta("partial")
        try:
            await self.hold.wait()
        except anyio.get_cancelled_exc_class():
            raise ModelStreamError(FaultKind.STREAM_INTERRUPTED, "closed") from None
        yield TextDelta("never")


@pytest.mark.anyio
@pytest.mark.requirement("TURN-015")
async def test_no_retry_after_cancel_even_when_the_stream_reports_a_fault() -> None:
    hold = Hold()
    provider = CancelToErrorProvider(hold)
    sink = RecordingSink()
    sleep = RecordingSleep()
    request = replace(make_request(FakeProvider(), sink, sleep=sleep), provider=provider)
    await cancel_at(request, hold)
    assert provider.requests == 1
    assert sleep.delays == []
    assert sink.resets() == []


@pytest.mark.anyio
@pytest.mark.requirement("TURN-014")
async def test_cancel_while_a_permission_prompt_is_pending() -> None:
    hold = Hold()
    refund = IssueRefund()
    sink = RecordingSink([hold])
    request = make_request(FakeProvider(refund_call()), sink, [refund])
    await cancel_at(request, hold)
    assert refund.executions == []
    assert len(sink.prompts) == 1
    last = sink.timeline[-1]
    assert isinstance(last, ToolCallChanged)
    assert last.status is ToolStatus.FAILED
    assert last.tool_call_id == "s1-turn1-t1"
    results = request.history[-1]
    assert isinstance(results, ToolResults)
    assert [(r.call_id, r.is_error) for r in results.results] == [("c1", True)]


@pytest.mark.anyio
@pytest.mark.requirement("TURN-014")
@pytest.mark.requirement("EFFECT-009")
async def test_cancel_while_a_tool_runs() -> None:
    hold = Hold()
    refund = IssueRefund(hold=hold)
    ledger = EffectLedger.in_memory()
    sink = RecordingSink()
    request = make_request(FakeProvider(refund_call()), sink, [refund], ledger=ledger)
    await cancel_at(request, hold)
    assert len(refund.executions) == 1
    statuses = [u.status for u in sink.updates if isinstance(u, ToolCallChanged) and u.status]
    assert statuses == [ToolStatus.IN_PROGRESS, ToolStatus.FAILED]
    # The refund may or may not have happened: its key stays "started" (unknown).
    record = ledger.lookup(EffectKey.derive("s1-turn1", "issue_refund", REFUND))
    assert record is not None
    assert record.state is EffectState.STARTED
    results = request.history[-1]
    assert isinstance(results, ToolResults)
    assert results.results[0].is_error
