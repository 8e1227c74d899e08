"""History repair: a session can never be poisoned by unpaired function responses (TURN-007)."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st
from turn.turnkit import FakeProvider, RecordingSink, finish, make_request, start, text

from acp_bridge.providers import AssistantTurn, Message, ToolCall, ToolResult, ToolResults, UserTurn
from acp_bridge.turn import MISSING_RESULT, NO_REPLY, repair_history, run_turn

SHELL = "run_shell_command"


def poisoned() -> list[Message]:
    """The seed's shape: two responses (c1 from the abandoned attempt, c7 from the kept one)
    for a model turn that only holds c7, then the client's "interrupted" note."""
    return [
        UserTurn(("deploy it",)),
        AssistantTurn("Deploying.", tool_calls=(ToolCall("c7", SHELL, {"command": "./deploy"}),)),
        ToolResults(
            (
                ToolResult("c1", SHELL, "deployed"),
                ToolResult("c7", SHELL, "deployed"),
            )
        ),
        UserTurn(("The previous reply was interrupted.",)),
        UserTurn(("status?",)),
    ]


@pytest.mark.requirement("TURN-007")
def test_the_seeds_poisoned_history_is_repaired(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="acp_bridge.turn._history"):
        repaired, dropped = repair_history(poisoned())
    assert [(d.result.call_id, d.why) for d in dropped] == [
        ("c1", "no matching call in the model turn")
    ]
    assert repaired[2] == ToolResults((ToolResult("c7", SHELL, "deployed"),))
    assert repaired[:2] == poisoned()[:2]
    assert repaired[3:] == poisoned()[3:]
    assert "c1" in caplog.text


@pytest.mark.requirement("TURN-007")
def test_unanswered_calls_get_an_error_result_and_strays_are_dropped() -> None:
    history: list[Message] = [
        ToolResults((ToolResult("x", "read_file", "stray"),)),  # nothing before it
        UserTurn(("hi",)),
        AssistantTurn("", tool_calls=(ToolCall("a", "read_file", {}), ToolCall("b", "edit", {}))),
        ToolResults(
            (
                ToolResult("b", "edit", "ok"),
                ToolResult("b", "edit", "again"),  # a second answer to the same call
                ToolResult("a", "write_file", "wrong name"),
            )
        ),
        AssistantTurn("", tool_calls=(ToolCall("c", "read_file", {}),)),  # crash: no results
        UserTurn(("next",)),
    ]
    repaired, dropped = repair_history(history)
    assert [d.why for d in dropped] == [
        "no preceding model turn with calls",
        "a second result for the same call",
        "no matching call in the model turn",
    ]
    assert repaired[0] == UserTurn(("hi",))
    assert repaired[2] == ToolResults(
        (
            ToolResult("a", "read_file", MISSING_RESULT, is_error=True),  # in call order
            ToolResult("b", "edit", "ok"),
        )
    )
    assert repaired[4] == ToolResults((ToolResult("c", "read_file", MISSING_RESULT, True),))
    assert repaired[5] == UserTurn(("next",))


def test_a_paired_history_is_left_alone() -> None:
    history: list[Message] = [
        UserTurn(("q",)),
        AssistantTurn("", tool_calls=(ToolCall("a", "t", {}),)),
        ToolResults((ToolResult("a", "t", "r"),)),
        AssistantTurn("answer"),
    ]
    assert repair_history(history) == (history, [])


messages = st.lists(
    st.one_of(
        st.just(UserTurn(("u",))),
        st.builds(
            lambda ids: AssistantTurn("", tool_calls=tuple(ToolCall(i, "t", {}) for i in ids)),
            st.lists(st.sampled_from("abc"), max_size=3, unique=True),
        ),
        st.builds(
            lambda ids: ToolResults(tuple(ToolResult(i, "t", "r") for i in ids)),
            st.lists(st.sampled_from("abcd"), max_size=4),
        ),
    ),
    max_size=8,
)


@given(messages)
@pytest.mark.requirement("TURN-007")
def test_repair_always_pairs_and_is_idempotent(history: list[Message]) -> None:
    repaired, _ = repair_history(history)
    assert repair_history(repaired) == (repaired, [])
    for index, message in enumerate(repaired):
        if isinstance(message, AssistantTurn) and message.tool_calls:
            answer = repaired[index + 1]
            assert isinstance(answer, ToolResults)
            assert [r.call_id for r in answer.results] == [c.call_id for c in message.tool_calls]
        if isinstance(message, ToolResults):
            previous = repaired[index - 1]
            assert isinstance(previous, AssistantTurn)
            assert previous.tool_calls


@pytest.mark.anyio
@pytest.mark.requirement("TURN-007")
@pytest.mark.requirement("SESS-CANCEL-001")
async def test_the_runner_repairs_before_the_request_and_in_place() -> None:
    history = poisoned()[:4]
    provider = FakeProvider([start(), *text("Deployed once."), finish()])
    request = make_request(provider, RecordingSink(), history=history, prompt="status?")
    await run_turn(request)
    sent = list(provider.requests[0].messages)
    assert sent[2] == ToolResults((ToolResult("c7", SHELL, "deployed"),))
    # Two user turns in a row are sent as one (SESS-CANCEL-001).
    assert sent[3] == UserTurn(("The previous reply was interrupted.", NO_REPLY, "status?"))
    assert request.history[:4] == sent  # the session's own list was fixed too
    assert request.history[-1] == AssistantTurn("Deployed once.")
