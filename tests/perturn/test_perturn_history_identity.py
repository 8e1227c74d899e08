"""History repair keeps a paired history's message objects (issue 15.2).

`repair_history` runs before every model request. A history that needs no repair comes back
holding the very same objects, checked without copying any, so the providers' encoding cache
(keyed by message identity) is hit for every message of a long session; the check agrees with
the full repair on every history.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_bridge.providers import AssistantTurn, Message, ToolCall, ToolResult, ToolResults, UserTurn
from acp_bridge.turn import repair_history
from acp_bridge.turn._history import repair

calls = st.lists(
    st.tuples(st.sampled_from("abc"), st.sampled_from(("t", "u"))), max_size=3
)  # duplicate ids and other names included
messages = st.lists(
    st.one_of(
        st.just(UserTurn(("u",))),
        st.builds(
            lambda cs: AssistantTurn("", tool_calls=tuple(ToolCall(i, n, {}) for i, n in cs)),
            calls,
        ),
        st.builds(
            lambda cs: ToolResults(tuple(ToolResult(i, n, "r") for i, n in cs)),
            st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from(("t", "u"))), max_size=4),
        ),
    ),
    max_size=8,
)


@given(messages)
@pytest.mark.requirement("PERTURN-003")
def test_the_quick_check_agrees_with_the_full_repair(history: list[Message]) -> None:
    repaired, dropped = repair_history(history)
    assert (repaired, dropped) == repair(history)
    if repaired == history and not dropped:
        assert all(a is b for a, b in zip(repaired, history, strict=True))


@pytest.mark.requirement("PERTURN-003")
def test_a_long_paired_history_comes_back_with_the_same_objects() -> None:
    history: list[Message] = []
    for turn in range(500):
        call = ToolCall(f"c{turn}", "read_file", {"path": f"{turn}.txt"})
        history += [
            UserTurn((f"prompt {turn}",)),
            AssistantTurn("", tool_calls=(call,)),
            ToolResults((ToolResult(call.call_id, call.name, "text"),)),
            AssistantTurn(f"answer {turn}"),
        ]
    repaired, dropped = repair_history(history)
    assert dropped == []
    assert repaired is not history
    assert all(a is b for a, b in zip(repaired, history, strict=True))
