"""Attempts, model calls and the chunk presenter, without an event loop (sans-IO)."""

from __future__ import annotations

import time

import pytest

from acp_bridge.providers import (
    AssistantTurn,
    FaultKind,
    Finish,
    FinishReason,
    ModelStreamError,
    TextDelta,
    Thought,
    ThoughtDelta,
    ToolCall,
    ToolCallComplete,
    ToolCallDelta,
    ToolCallStart,
    Usage,
)
from acp_bridge.turn import (
    AgentText,
    AgentThought,
    Attempt,
    AttemptState,
    ChunkPresenter,
    ModelCall,
    ResetMarker,
    TaggedEvent,
)


@pytest.mark.requirement("TURN-001")
def test_events_are_tagged_with_attempt_and_a_turn_wide_sequence() -> None:
    call = ModelCall(1)
    first = call.start_attempt()
    tags = [call.feed(TextDelta("a")), call.feed(TextDelta("b"))]
    first.abandon("stream_interrupted")
    second = call.start_attempt()
    tags.append(call.feed(TextDelta("c")))
    tags.append(call.feed(Finish(FinishReason.STOP)))
    assert [(t.attempt, t.seq) for t in tags] == [(1, 1), (1, 2), (2, 3), (2, 4)]
    assert tags[0] == TaggedEvent(1, 1, TextDelta("a"))
    assert first.state is AttemptState.ABANDONED
    assert first.abandon_reason == "stream_interrupted"
    assert second.state is AttemptState.COMPLETED
    assert call.completed is second
    # Accumulators belong to the attempt: the abandoned text never reaches the kept one.
    assert second.to_assistant_turn() == AssistantTurn(text="c")
    assert first.text == "ab"


@pytest.mark.requirement("TURN-001")
def test_one_open_attempt_at_a_time_and_no_events_after_the_end() -> None:
    call = ModelCall(2)
    attempt = call.start_attempt()
    with pytest.raises(RuntimeError):
        call.start_attempt()
    attempt.feed(Finish(FinishReason.STOP), 1)
    with pytest.raises(RuntimeError):
        attempt.feed(TextDelta("late"), 2)
    abandoned = Attempt(3)
    abandoned.abandon("overloaded")
    with pytest.raises(RuntimeError):
        abandoned.to_assistant_turn()


@pytest.mark.requirement("TURN-001")
def test_text_is_accumulated_in_linear_time() -> None:
    attempt = Attempt(1)
    fragments = 200_000
    began = time.perf_counter()
    for seq in range(fragments):
        attempt.feed(TextDelta("word "), seq)
    attempt.feed(Finish(FinishReason.STOP), fragments)
    assert len(attempt.text) == 5 * fragments
    assert time.perf_counter() - began < 10  # generous; a quadratic join would take minutes


def test_tool_call_fragments_are_collected_per_call_in_start_order() -> None:
    attempt = Attempt(1)
    events = [
        ToolCallStart("b", "write_file", 1),
        ToolCallStart("a", "read_file", 0),
        ToolCallDelta("a", 0, '{"path":'),
        ToolCallDelta("b", 1, '{"path": "x"'),
        ToolCallComplete("a", "read_file", {"path": "y"}, '{"path": "y"}'),
        ToolCallComplete("b", "write_file", {"path": "x"}, provider_meta={"sig": "1"}),
        Usage(5, 1),
        Usage(5, 9),
        Finish(FinishReason.TOOL_CALLS),
    ]
    for seq, event in enumerate(events):
        attempt.feed(event, seq)
    assert attempt.tool_calls == (
        ToolCall("b", "write_file", {"path": "x"}, {"sig": "1"}),
        ToolCall("a", "read_file", {"path": "y"}),
    )
    assert attempt.usage == Usage(5, 9)  # the last report wins
    assert attempt.finish == Finish(FinishReason.TOOL_CALLS)


def test_an_unfinished_call_at_the_finish_is_malformed_unless_cut_by_the_limit() -> None:
    attempt = Attempt(1)
    attempt.feed(ToolCallStart("a", "write_file", 0), 1)
    with pytest.raises(ModelStreamError) as caught:
        attempt.feed(Finish(FinishReason.TOOL_CALLS), 2)
    assert caught.value.kind is FaultKind.MALFORMED_TOOL_CALL
    assert caught.value.retryable
    assert attempt.state is AttemptState.OPEN

    cut = Attempt(1)
    cut.feed(TextDelta("long"), 1)
    cut.feed(ToolCallStart("a", "write_file", 0), 2)
    cut.feed(Finish(FinishReason.LENGTH), 3)
    assert cut.state is AttemptState.COMPLETED
    assert cut.tool_calls == ()


def test_a_call_completed_twice_is_malformed() -> None:
    attempt = Attempt(1)
    attempt.feed(ToolCallComplete("a", "read_file", {}), 1)
    with pytest.raises(ModelStreamError) as caught:
        attempt.feed(ToolCallComplete("a", "read_file", {}), 2)
    assert caught.value.kind is FaultKind.MALFORMED_TOOL_CALL


def test_thought_blocks_end_at_a_signature_or_other_content() -> None:
    attempt = Attempt(1)
    events = [
        ThoughtDelta("plan "),
        ThoughtDelta("a"),
        ThoughtDelta("", signature="sig-1"),
        ThoughtDelta("next"),
        TextDelta("x"),
        ThoughtDelta("again"),
        ThoughtDelta("", redacted_data="opaque"),
        Finish(FinishReason.STOP),
    ]
    for seq, event in enumerate(events):
        attempt.feed(event, seq)
    assert attempt.thoughts == (
        Thought("plan a", "sig-1"),
        Thought("next"),
        Thought("again"),
        Thought("", None, "opaque"),
    )


@pytest.mark.requirement("RESET-006")
@pytest.mark.requirement("RESET-004")
def test_presenter_ids_and_reset_decision() -> None:
    presenter = ChunkPresenter("s1-turn4", 2)
    first, second, third = Attempt(1, model_call=2), Attempt(2, model_call=2), Attempt(3)
    assert presenter.chunk_for(first, TextDelta("")) is None
    assert presenter.reset_for(first, second, "server_error") is None  # nothing shown yet
    assert presenter.chunk_for(first, TextDelta("Hi")) == AgentText("Hi", "s1-turn4-m2-a1")
    assert presenter.chunk_for(first, ThoughtDelta("hm")) == AgentThought(
        "hm", "s1-turn4-m2-a1-thought"
    )
    assert first.shown_chunks
    marker = presenter.reset_for(first, second, "server_error")
    assert marker == AgentText("", "s1-turn4-m2-a2", ResetMarker(2, "server_error"))
    assert second.shown_chunks  # RESET-008: the marker counts as shown
    assert presenter.reset_for(second, third, "overloaded") is not None


@pytest.mark.requirement("RESET-002")
def test_reset_marker_meta_shape() -> None:
    assert ResetMarker(3, "rate_limited").to_meta() == {
        "reset": True,
        "attempt": 3,
        "reason": "rate_limited",
    }
