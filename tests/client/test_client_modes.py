"""The three editors of the reference reducer on the same stream, and a property: whatever
the faults, the reset-aware view equals the completed attempts' output (RESET-005..008)."""

from __future__ import annotations

from typing import Any

import pytest
from client.wirekit import chunk, marker, thought, tool_call, tool_update
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_bridge.client import EditorEvent, PromptSent, ReduceMode, reduce

# The seed's help-desk stream as the bridge sends it: attempt 1 breaks mid-word, attempt 2
# completes with a tool call, and a second model call answers.
HELP_DESK: list[EditorEvent] = [
    PromptSent("Refund order ORD-7781"),
    chunk("Checking order ORD-7781. ", "m1-a1"),
    chunk("Refunding the dam", "m1-a1"),
    marker(2, "m1-a2"),
    chunk("Looking up order ORD-7781. ", "m1-a2"),
    chunk("The book arrived damaged.", "m1-a2"),
    tool_call("t1", "Write refunds/ORD-7781.txt"),
    tool_update("t1", status="completed"),
    chunk("The refund is recorded.", "m2-a1"),
]


@pytest.mark.requirement("RESET-005")
@pytest.mark.requirement("RESET-006")
@pytest.mark.requirement("EDITOR-001")
@pytest.mark.requirement("EDITOR-002")
def test_three_editors_on_the_same_stream() -> None:
    append_only = reduce(HELP_DESK, ReduceMode.APPEND_ONLY)
    naive = reduce(HELP_DESK, ReduceMode.NAIVE)
    reset_aware = reduce(HELP_DESK, "reset_aware")

    assert append_only.messages == (
        "Checking order ORD-7781. Refunding the dam"
        "Looking up order ORD-7781. The book arrived damaged.",
        "The refund is recorded.",
    )
    assert naive.messages == (
        "Checking order ORD-7781. Refunding the dam",
        "Looking up order ORD-7781. The book arrived damaged.",
        "The refund is recorded.",
    )
    assert reset_aware.messages == (
        "Looking up order ORD-7781. The book arrived damaged.",
        "The refund is recorded.",
    )
    # Tool calls are shown alike: the bridge never sends the abandoned attempt's calls.
    for view in (append_only, naive, reset_aware):
        assert [(t.title, t.status) for t in view.tool_calls] == [
            ("Write refunds/ORD-7781.txt", "completed")
        ]
    # Only the reset-aware editor says that a retry happened.
    assert (len(append_only.retries), len(naive.retries), len(reset_aware.retries)) == (0, 0, 1)


def test_without_a_retry_the_three_editors_agree() -> None:
    events = [e for e in HELP_DESK if e not in HELP_DESK[1:4]]
    renders = {reduce(events, mode).render() for mode in ReduceMode}
    assert len(renders) == 1


def test_naive_and_append_only_differ_only_in_message_ids() -> None:
    events: list[EditorEvent] = [PromptSent("p"), chunk("a", "x"), chunk("b", "y")]
    assert reduce(events, ReduceMode.NAIVE).messages == ("a", "b")
    assert reduce(events, ReduceMode.APPEND_ONLY).messages == ("ab",)


# -- the property ----------------------------------------------------------------------------

_text = st.text(alphabet="abcdefgh ", min_size=1, max_size=6)
_piece = st.tuples(st.sampled_from(["text", "thought"]), _text)
_attempt = st.lists(_piece, max_size=4)
_model_call = st.tuples(st.lists(_attempt, max_size=3), _attempt)  # (abandoned, completed)


def _bridge_stream(
    calls: list[tuple[list[list[tuple[str, str]]], list[tuple[str, str]]]],
) -> tuple[list[EditorEvent], list[str], list[str]]:
    """The updates the bridge sends for these model calls (RESET-001/-006/-007/-008), and the
    messages and thoughts a reset-aware editor must end up showing."""
    events: list[EditorEvent] = [PromptSent("go")]
    messages: list[str] = []
    thoughts: list[str] = []
    for m, (abandoned, completed) in enumerate(calls, 1):
        attempts = [*abandoned, completed]
        shown_before = False
        for a, pieces in enumerate(attempts, 1):
            if a > 1 and shown_before:
                events.append(marker(a, f"m{m}-a{a}"))  # the marker counts as shown
            shown_before = (shown_before and a == 1) or bool(pieces) or (a > 1 and shown_before)
            for kind, text in pieces:
                if kind == "text":
                    events.append(chunk(text, f"m{m}-a{a}"))
                else:
                    events.append(thought(text, f"m{m}-a{a}-thought"))
        # The completed attempt's output, joined per run of the same kind.
        last_kind = None
        for kind, text in completed:
            target = messages if kind == "text" else thoughts
            if kind == last_kind:
                target[-1] += text
            else:
                target.append(text)
            last_kind = kind
        # RESET-007: a next model call only follows a round of tool calls.
        events.append(tool_call(f"t{m}"))
        events.append(tool_update(f"t{m}", status="completed"))
    return events, messages, thoughts


@pytest.mark.requirement("RESET-005")
@pytest.mark.requirement("RESET-007")
@pytest.mark.requirement("RESET-008")
@pytest.mark.requirement("EDITOR-003")
@pytest.mark.requirement("EDITOR-004")
@settings(max_examples=300)
@given(st.lists(_model_call, min_size=1, max_size=3))
def test_reset_aware_view_is_exactly_the_completed_attempts(calls: Any) -> None:
    events, messages, thoughts = _bridge_stream(calls)
    view = reduce(events)
    assert list(view.messages) == messages
    assert list(view.thoughts) == thoughts
    assert len(view.tool_calls) == len(calls)
