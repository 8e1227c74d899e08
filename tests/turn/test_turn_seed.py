"""The seed's help-desk stream under three policies, side by side (issue 3, "What it must show").

Attempt 1 says "Checking order ORD-7781. ", completes a refund call `c1`, says "Refunding the
dam" and loses its connection. Attempt 2 says the opening again, completes the same refund as
`c7`, finishes its sentence and finishes. Two wrong policies are tiny consumers of the same
event stream; the third is the engine.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from turn.turnkit import (
    WORKSPACE,
    FakeProvider,
    IssueRefund,
    RecordingSink,
    ScriptItem,
    broken,
    finish,
    make_request,
    reduce_updates,
    start,
    text,
    tool_call,
    usage,
)

from acp_bridge.providers import (
    AssistantTurn,
    FinishReason,
    ModelStreamError,
    StreamEvent,
    TextDelta,
    ToolCallComplete,
    ToolResults,
)
from acp_bridge.tools._base import ToolContext
from acp_bridge.turn import EffectKey, ResetMarker, StopReason, run_turn

REFUND = {"order_id": "ORD-7781"}
CLEAN = "Checking order ORD-7781. The book arrived damaged, so I have started a full refund."
GLUED = (
    "Checking order ORD-7781. Refunding the dam"
    "Checking order ORD-7781. The book arrived damaged, so I have started a full refund."
)


def seed_attempts() -> list[list[ScriptItem]]:
    first: list[ScriptItem] = [
        start(),
        *text("Checking order ORD-7781. "),
        *tool_call("c1", "issue_refund", REFUND),
        *text("Refunding the dam"),
        broken(),
    ]
    second: list[ScriptItem] = [
        start(),
        *text("Checking order ORD-7781. "),
        *tool_call("c7", "issue_refund", REFUND),
        *text("The book arrived damaged, so I have started a full refund."),
        usage(),
        finish(FinishReason.TOOL_CALLS),
    ]
    return [first, second]


def context() -> ToolContext:
    return ToolContext(session_id="s1", cwd=WORKSPACE, roots=(WORKSPACE,))


async def naive_policy(attempts: Sequence[Sequence[ScriptItem]], refund: IssueRefund) -> str:
    """Keep appending; run each tool call as soon as it is complete."""
    shown: list[str] = []
    for attempt in attempts:
        for item in attempt:
            if isinstance(item, ModelStreamError):
                break  # retry: nothing is cleared
            if isinstance(item, TextDelta):
                shown.append(item.text)
            elif isinstance(item, ToolCallComplete):
                await refund.run(item.arguments, context())
    return "".join(shown)


async def reset_only_policy(attempts: Sequence[Sequence[ScriptItem]], refund: IssueRefund) -> str:
    """Clear text and pending calls on retry; still run each call as soon as it is complete."""
    shown: list[str] = []
    for attempt in attempts:
        for item in attempt:
            if isinstance(item, ModelStreamError):
                shown.clear()
                break
            if isinstance(item, TextDelta):
                shown.append(item.text)
            elif isinstance(item, ToolCallComplete):
                await refund.run(item.arguments, context())
    return "".join(shown)


@pytest.mark.anyio
@pytest.mark.requirement("TURN-002")
@pytest.mark.requirement("RESET-001")
@pytest.mark.requirement("RESET-005")
@pytest.mark.requirement("EFFECT-004")
async def test_three_policies_side_by_side() -> None:
    naive_refund, reset_refund, engine_refund = IssueRefund(), IssueRefund(), IssueRefund()

    naive_text = await naive_policy(seed_attempts(), naive_refund)
    reset_text = await reset_only_policy(seed_attempts(), reset_refund)

    provider = FakeProvider(*seed_attempts(), [start(), *text("Done."), finish()])
    sink = RecordingSink()
    request = make_request(provider, sink, [engine_refund])
    result = await run_turn(request)
    view = reduce_updates(sink.updates)

    # Naive: glued text, two refunds.
    assert naive_text == GLUED
    assert len(naive_refund.executions) == 2
    # Reset alone: clean text, still two refunds (the first ran before the reset).
    assert reset_text == CLEAN
    assert len(reset_refund.executions) == 2
    # Reset + execution after the finish: clean text, exactly one refund, the second attempt's.
    assert view.messages == [CLEAN, "Done."]
    assert len(engine_refund.executions) == 1
    assert [(run.call_id, run.ran) for run in result.tool_runs] == [("c7", True)]
    assert engine_refund.executions[0].effect_key == str(
        EffectKey.derive("s1-turn1", "issue_refund", REFUND, 0)
    )
    assert result.stop_reason is StopReason.END_TURN
    assert sink.resets() == [ResetMarker(attempt=2, reason="stream_interrupted")]
    assert len(sink.prompts) == 1  # one permission prompt, for c7 only
    assert sink.prompts[0].call.raw_input == REFUND


@pytest.mark.anyio
@pytest.mark.requirement("TURN-006")
@pytest.mark.requirement("RESET-006")
async def test_engine_history_and_message_ids_for_the_seed() -> None:
    refund = IssueRefund()
    provider = FakeProvider(*seed_attempts(), [start(), *text("Done."), finish()])
    sink = RecordingSink()
    request = make_request(provider, sink, [refund])
    await run_turn(request)

    # A v1 client that ignores _meta still sees two separate messages, not glued text.
    naive_view = reduce_updates(sink.updates, honour_reset=False)
    assert naive_view.messages == ["Checking order ORD-7781. Refunding the dam", CLEAN, "Done."]

    # History: the kept attempt only, its call paired with one result of the same id and name.
    _, model_turn, results, final = request.history
    assert isinstance(model_turn, AssistantTurn)
    assert isinstance(results, ToolResults)
    assert model_turn.text == CLEAN
    assert [c.call_id for c in model_turn.tool_calls] == ["c7"]
    assert [(r.call_id, r.name, r.is_error) for r in results.results] == [
        ("c7", "issue_refund", False)
    ]
    assert final == AssistantTurn(text="Done.")
    # The second model request carried exactly that history.
    assert list(provider.requests[2].messages) == request.history[:3]


def _events(attempts: Sequence[Sequence[ScriptItem]]) -> list[StreamEvent]:
    return [i for a in attempts for i in a if not isinstance(i, ModelStreamError)]


def test_the_two_attempts_really_differ_in_call_ids() -> None:
    completes = [e for e in _events(seed_attempts()) if isinstance(e, ToolCallComplete)]
    assert [c.call_id for c in completes] == ["c1", "c7"]
    assert completes[0].arguments == completes[1].arguments
