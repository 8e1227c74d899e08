"""Faults injected at the stream level, one scenario each (issue 3, "What it must show").

For every scenario: the reset markers sent (attempt numbers and reasons, only on the first chunk
after a retry), what a reset-aware editor shows, which tools ran with which effect keys, how
many permission prompts appeared, and how many attempts were billed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from turn.turnkit import (
    EditorView,
    FakeProvider,
    FakeTool,
    IssueRefund,
    PromptSeen,
    ReadFile,
    RecordingSink,
    ScriptItem,
    WriteFile,
    broken,
    finish,
    make_request,
    reduce_updates,
    start,
    text,
    thought,
    tool_call,
    usage,
)

from acp_bridge.providers import FaultKind, FinishReason, Phase, Thought
from acp_bridge.turn import (
    AgentText,
    AgentThought,
    AttemptState,
    EffectKey,
    ResetMarker,
    StopReason,
    TurnResult,
    TurnUpdate,
    run_turn,
)


@dataclass
class Outcome:
    result: TurnResult
    sink: RecordingSink
    view: EditorView
    sleeps: list[tuple[float, int]]  # (delay, number of timeline items sent before it)


async def play(scripts: Sequence[Sequence[ScriptItem]], tools: Sequence[FakeTool] = ()) -> Outcome:
    sink = RecordingSink()
    sleeps: list[tuple[float, int]] = []

    async def sleep(delay: float) -> None:
        sleeps.append((delay, len(sink.timeline)))

    request = make_request(FakeProvider(*scripts), sink, tools, sleep=sleep)
    result = await run_turn(request)
    assert_resets_well_placed(sink.timeline)
    return Outcome(result, sink, reduce_updates(sink.updates), sleeps)


def assert_resets_well_placed(timeline: Sequence[TurnUpdate | PromptSeen]) -> None:
    """RESET-003/004: a marker only opens its attempt's chunks, with empty text, numbered
    like its message id."""
    seen: set[str] = set()
    for update in timeline:
        if isinstance(update, AgentText | AgentThought):
            if isinstance(update, AgentText) and update.reset is not None:
                assert update.message_id not in seen
                assert update.text == ""
                assert update.message_id.endswith(f"-a{update.reset.attempt}")
                assert update.reset.attempt >= 2
            seen.add(update.message_id)


def key(tool: str, arguments: dict[str, object], step: int = 0) -> str:
    return str(EffectKey.derive("s1-turn1", tool, arguments, step))  # type: ignore[arg-type]


REFUND = {"order_id": "ORD-1"}


@pytest.mark.anyio
@pytest.mark.requirement("TURN-002")
@pytest.mark.requirement("RESET-001")
@pytest.mark.requirement("TURN-013")
async def test_break_right_after_a_complete_tool_call() -> None:
    refund = IssueRefund()
    out = await play(
        [
            [
                start(),
                *text("Let me refund that. "),
                *tool_call("c1", "issue_refund", REFUND),
                usage(100, 7),
                broken(),
            ],
            [
                start(),
                *text("Refunding order ORD-1."),
                *tool_call("c2", "issue_refund", REFUND),
                usage(100, 9),
                finish(FinishReason.TOOL_CALLS),
            ],
            [start(), *text("Refunded."), usage(130, 3), finish()],
        ],
        [refund],
    )
    assert out.sink.resets() == [ResetMarker(2, "stream_interrupted")]
    assert out.view.messages == ["Refunding order ORD-1.", "Refunded."]
    assert [(e.arguments, e.effect_key) for e in refund.executions] == [
        (REFUND, key("issue_refund", REFUND))
    ]
    assert len(out.sink.prompts) == 1
    assert out.sink.prompts[0].call.tool_call_id == "s1-turn1-t1"
    assert out.result.billed_attempts == 3
    assert [a.usage.output_tokens for a in out.result.attempts if a.usage] == [7, 9, 3]
    assert out.result.usage.input_tokens == 330
    assert [a.state for a in out.result.attempts] == [
        AttemptState.ABANDONED,
        AttemptState.COMPLETED,
        AttemptState.COMPLETED,
    ]


@pytest.mark.anyio
@pytest.mark.requirement("RESET-003")
@pytest.mark.requirement("RESET-005")
async def test_break_inside_a_text_fragment_that_splits_a_word() -> None:
    out = await play(
        [
            [start(), *text("The answer is forty-", "tw"), broken(FaultKind.INCOMPLETE_STREAM)],
            [start(), *text("The answer is ", "forty-two."), finish()],
        ]
    )
    assert out.sink.resets() == [ResetMarker(2, "incomplete_stream")]
    assert out.view.text == "The answer is forty-two."
    assert out.sink.prompts == []
    assert out.result.billed_attempts == 2
    assert out.result.stop_reason is StopReason.END_TURN


@pytest.mark.anyio
@pytest.mark.requirement("TURN-002")
@pytest.mark.requirement("TURN-003")
async def test_break_immediately_before_the_finish() -> None:
    write = WriteFile()
    args = {"path": "notes.txt", "content": "hello\n"}
    out = await play(
        [
            [start(), *text("Writing."), *tool_call("w1", "write_file", args), usage()],
            [
                start(),
                *text("Writing the note."),
                *tool_call("w9", "write_file", args),
                usage(),
                finish(FinishReason.TOOL_CALLS),
            ],
            [start(), *text("Written."), finish()],
        ],
        [write],
    )
    # The provider ended attempt 1 without a finish: the engine calls it incomplete.
    assert out.sink.resets() == [ResetMarker(2, "incomplete_stream")]
    assert out.view.messages == ["Writing the note.", "Written."]
    assert [e.effect_key for e in write.executions] == [key("write_file", args)]
    assert [p.call.raw_input for p in out.sink.prompts] == [args]
    assert out.view.tools == {"s1-turn1-t1": "completed"}
    assert out.result.billed_attempts == 3


@pytest.mark.anyio
@pytest.mark.requirement("RESET-008")
@pytest.mark.requirement("RESET-002")
@pytest.mark.requirement("TURN-010")
async def test_two_breaks_in_a_row() -> None:
    out = await play(
        [
            [start(), *text("Hel"), broken()],
            [start(), *text("Hello wor"), broken(FaultKind.OVERLOADED, status=529)],
            [start(), *text("Hello world."), finish()],
        ]
    )
    assert out.sink.resets() == [ResetMarker(2, "stream_interrupted"), ResetMarker(3, "overloaded")]
    assert out.view.text == "Hello world."
    # Full jitter with random() = 0.5: half of 1 s, then half of 2 s; each marker went out
    # before its back-off sleep (RESET-001).
    assert [d for d, _ in out.sleeps] == [0.5, 1.0]
    texts = [u for u in out.sink.timeline if isinstance(u, AgentText)]
    for (_, sent_before), marker in zip(out.sleeps, [t for t in texts if t.reset], strict=True):
        assert out.sink.timeline[sent_before - 1] is marker
    assert out.result.billed_attempts == 3
    assert out.result.retries == 2


@pytest.mark.anyio
@pytest.mark.requirement("RESET-008")
async def test_a_retry_whose_attempt_showed_only_its_marker_sends_another() -> None:
    out = await play(
        [
            [start(), *text("Hel"), broken()],
            [broken(FaultKind.SERVER_ERROR, status=503, phase=Phase.CONNECT)],
            [start(), *text("Hello."), finish()],
        ]
    )
    assert out.sink.resets() == [
        ResetMarker(2, "stream_interrupted"),
        ResetMarker(3, "server_error"),
    ]
    assert out.view.text == "Hello."
    assert out.result.billed_attempts == 2  # attempt 2 never reached the model


@pytest.mark.anyio
@pytest.mark.requirement("RESET-004")
async def test_no_marker_when_the_abandoned_attempt_showed_nothing() -> None:
    refund = IssueRefund()
    out = await play(
        [
            [broken(FaultKind.RATE_LIMITED, status=429, phase=Phase.CONNECT, retry_after=2.0)],
            [start(), *tool_call("c1", "issue_refund", REFUND), broken()],  # a call, no chunk
            [start(), *text("Done."), finish()],
        ],
        [refund],
    )
    assert out.sink.resets() == []
    assert out.view.text == "Done."
    assert refund.executions == []  # the abandoned call was dropped, never shown
    assert out.view.tools == {}
    assert out.sink.prompts == []
    assert [d for d, _ in out.sleeps] == [2.0, 1.0]  # Retry-After is a floor (TURN-011)


@pytest.mark.anyio
@pytest.mark.requirement("RESET-004")
async def test_no_marker_in_a_turn_without_retries() -> None:
    out = await play([[start(), *thought("Hmm."), *text("Plain answer."), finish()]])
    assert out.sink.resets() == []
    assert all(not (isinstance(u, AgentText) and u.reset) for u in out.sink.updates)
    assert out.view.text == "Plain answer."
    assert out.result.billed_attempts == 1


@pytest.mark.anyio
@pytest.mark.requirement("RESET-001")
@pytest.mark.requirement("RESET-006")
async def test_break_during_thought_chunks() -> None:
    sink_out = await play(
        [
            [start(), *thought("Let me think", " about the ref"), broken()],
            [
                start(),
                *thought("Let me think about it.", signature="sig-2"),
                *text("Answer."),
                finish(),
            ],
        ]
    )
    updates = sink_out.sink.updates
    assert sink_out.sink.resets() == [ResetMarker(2, "stream_interrupted")]
    # The marker is an agent_message_chunk even though both attempts began with thoughts.
    first_of_attempt_2 = next(
        u
        for u in updates
        if isinstance(u, AgentText | AgentThought)
        and (u.message_id.endswith("-a2") or u.message_id.endswith("-a2-thought"))
    )
    assert isinstance(first_of_attempt_2, AgentText)
    assert first_of_attempt_2.reset
    assert sink_out.view.thoughts == "Let me think about it."
    assert sink_out.view.text == "Answer."
    thought_ids = {u.message_id for u in updates if isinstance(u, AgentThought)}
    assert thought_ids == {"s1-turn1-m1-a1-thought", "s1-turn1-m1-a2-thought"}
    assert sink_out.result.billed_attempts == 2


@pytest.mark.anyio
async def test_thought_signatures_reach_history() -> None:
    refund = IssueRefund()
    sink = RecordingSink()
    provider = FakeProvider(
        [start(), *thought("Plan", signature="s-A"), *thought("More"), *text("Ok."), finish()],
    )
    request = make_request(provider, sink, [refund])
    await run_turn(request)
    turn = request.history[1]
    assert turn.thoughts == (Thought("Plan", "s-A"), Thought("More"))  # type: ignore[union-attr]


@pytest.mark.anyio
@pytest.mark.requirement("RESET-007")
@pytest.mark.requirement("RESET-005")
async def test_break_in_the_second_model_call_of_a_tool_loop() -> None:
    read = ReadFile()
    refund = IssueRefund()
    out = await play(
        [
            [
                start(),
                *text("Reading."),
                *tool_call("r1", "read_file", {"path": "a.py"}),
                finish(FinishReason.TOOL_CALLS),
            ],
            [
                start(),
                *text("The file defi"),
                *tool_call("c1", "issue_refund", REFUND),
                broken(FaultKind.MALFORMED_TOOL_CALL),
            ],
            [
                start(),
                *text("The file defines two classes."),
                *tool_call("c5", "issue_refund", REFUND),
                finish(FinishReason.TOOL_CALLS),
            ],
            [start(), *text("All done."), finish()],
        ],
        [read, refund],
    )
    assert out.sink.resets() == [ResetMarker(2, "malformed_tool_call")]
    marker = next(u for u in out.sink.updates if isinstance(u, AgentText) and u.reset)
    assert marker.message_id == "s1-turn1-m2-a2"
    assert out.view.messages == ["Reading.", "The file defines two classes.", "All done."]
    assert len(read.executions) == 1
    assert read.executions[0].effect_key is None
    assert [e.effect_key for e in refund.executions] == [key("issue_refund", REFUND)]
    assert len(out.sink.prompts) == 1  # the read ran without asking; the refund asked once
    assert out.view.tools == {"s1-turn1-t1": "completed", "s1-turn1-t2": "completed"}
    assert out.result.billed_attempts == 4
    assert out.result.model_calls == 3


@pytest.mark.anyio
@pytest.mark.requirement("TURN-001")
async def test_malformed_finish_with_an_unfinished_call_is_retried() -> None:
    refund = IssueRefund()
    out = await play(
        [
            [
                start(),
                *text("Ok "),
                *tool_call("c1", "issue_refund", REFUND)[:2],
                finish(FinishReason.TOOL_CALLS),
            ],
            [start(), *text("Ok."), finish()],
        ],
        [refund],
    )
    assert out.sink.resets() == [ResetMarker(2, "malformed_tool_call")]
    assert refund.executions == []
    assert out.view.text == "Ok."
