"""The reference reducer, one requirement at a time (spec/reset-extension.md section 5,
spec/editor-conformance.md section 3). Pure: no event loop, no bridge."""

from __future__ import annotations

from typing import Any

import pytest
from client.wirekit import chunk, marker, thought, tool_call, tool_update

from acp_bridge.client import (
    EditorEvent,
    MessageEntry,
    PermissionAsked,
    PromptSent,
    RetryNotice,
    ToolCallEntry,
    reduce,
)

PROMPT = PromptSent("refund my order")


def shown(events: list[EditorEvent]) -> list[tuple[str, str]]:
    """(label, text) per entry the reset-aware editor shows."""
    out: list[tuple[str, str]] = []
    for entry in reduce(events).entries:
        if isinstance(entry, MessageEntry):
            out.append((entry.role, entry.text))
        elif isinstance(entry, ToolCallEntry):
            out.append(("tool", f"{entry.title}: {entry.status}"))
        elif isinstance(entry, RetryNotice):
            out.append(("retry", f"{entry.attempt} {entry.reason}"))
    return out


@pytest.mark.requirement("RESET-004")
@pytest.mark.requirement("EDITOR-006")
def test_no_marker_discards_nothing() -> None:
    events: list[EditorEvent] = [
        PROMPT,
        chunk("Checking ", "m1-a1"),
        thought("hmm", "m1-a1-thought"),
        chunk("order.", "m1-a1"),
        tool_call("t1"),
        tool_update("t1", status="completed"),
        chunk("Done.", "m2-a1"),
    ]
    assert shown(events) == [
        ("user", "refund my order"),
        ("agent", "Checking "),
        ("thought", "hmm"),
        ("agent", "order."),
        ("tool", "Write a.txt: completed"),
        ("agent", "Done."),
    ]
    assert reduce(events).retries == []


@pytest.mark.requirement("RESET-005")
@pytest.mark.requirement("RESET-003")
@pytest.mark.requirement("EDITOR-002")
def test_reset_in_the_first_model_call_discards_its_partial_text() -> None:
    view = reduce(
        [
            PROMPT,
            chunk("Checking order ORD-7781. ", "m1-a1"),
            chunk("Refunding the dam", "m1-a1"),
            marker(2, "m1-a2"),
            chunk("Checking order ORD-7781. The book arrived damaged.", "m1-a2"),
        ]
    )
    assert view.messages == ("Checking order ORD-7781. The book arrived damaged.",)
    assert view.text() == "Checking order ORD-7781. The book arrived damaged."


@pytest.mark.requirement("RESET-003")
@pytest.mark.requirement("EDITOR-002")
def test_a_marker_carrying_text_appends_it_after_the_discard() -> None:
    view = reduce(
        [
            PROMPT,
            chunk("Half an ans", "m1-a1"),
            marker(2, "m1-a2", text="A whole"),
            chunk(" answer.", "m1-a2"),
        ]
    )
    assert view.messages == ("A whole answer.",)


@pytest.mark.requirement("RESET-005")
@pytest.mark.requirement("RESET-007")
@pytest.mark.requirement("EDITOR-003")
def test_reset_in_the_second_model_call_keeps_the_first_calls_text() -> None:
    events: list[EditorEvent] = [
        PROMPT,
        chunk("Let me read the file.", "m1-a1"),
        tool_call("t1", "Read a.py", kind="read"),
        tool_update("t1", status="completed"),
        chunk("The file defi", "m2-a1"),
        marker(2, "m2-a2"),
        chunk("The file defines two classes.", "m2-a2"),
    ]
    assert shown(events) == [
        ("user", "refund my order"),
        ("agent", "Let me read the file."),
        ("tool", "Read a.py: completed"),
        ("retry", "2 stream_interrupted"),
        ("agent", "The file defines two classes."),
    ]


@pytest.mark.requirement("RESET-005")
@pytest.mark.requirement("RESET-007")
@pytest.mark.requirement("EDITOR-003")
def test_reset_in_the_third_model_call_keeps_both_earlier_calls() -> None:
    view = reduce(
        [
            PROMPT,
            chunk("One. ", "m1-a1"),
            tool_call("t1"),
            tool_update("t1", status="completed"),
            chunk("Two. ", "m2-a1"),
            tool_call("t2", "Write b.txt"),
            tool_update("t2", status="in_progress"),
            tool_update("t2", status="completed"),
            chunk("Thr", "m3-a1"),
            thought("thinking ab", "m3-a1-thought"),
            marker(2, "m3-a2", "server_error"),
            chunk("Three.", "m3-a2"),
        ]
    )
    assert view.messages == ("One. ", "Two. ", "Three.")
    assert view.thoughts == ()
    assert [(t.tool_call_id, t.status) for t in view.tool_calls] == [
        ("t1", "completed"),
        ("t2", "completed"),
    ]


@pytest.mark.requirement("EDITOR-003")
def test_the_boundary_is_the_latest_tool_call_update_not_the_tool_call() -> None:
    # Text streamed after a tool_call_update belongs to the next model call; the discard
    # stops at that update, so text before it stays.
    view = reduce(
        [
            PROMPT,
            tool_call("t1"),
            chunk("Kept: said before the update. ", "m1-a1"),
            tool_update("t1", status="completed"),
            chunk("Dropp", "m2-a1"),
            marker(2, "m2-a2"),
            chunk("Final.", "m2-a2"),
        ]
    )
    assert view.messages == ("Kept: said before the update. ", "Final.")


@pytest.mark.requirement("RESET-008")
@pytest.mark.requirement("EDITOR-004")
def test_two_resets_in_a_row_leave_only_the_third_attempt() -> None:
    events: list[EditorEvent] = [
        PROMPT,
        chunk("First try: the answ", "m1-a1"),
        marker(2, "m1-a2"),
        chunk("Second try: the answer is al", "m1-a2"),
        marker(3, "m1-a3", "incomplete_stream"),
        chunk("Third try: the answer is all here.", "m1-a3"),
    ]
    view = reduce(events)
    assert view.messages == ("Third try: the answer is all here.",)
    assert view.retries == [
        RetryNotice(2, "stream_interrupted"),
        RetryNotice(3, "incomplete_stream"),
    ]


@pytest.mark.requirement("RESET-008")
@pytest.mark.requirement("EDITOR-004")
def test_a_marker_with_nothing_to_discard_is_harmless() -> None:
    # Attempt 2 showed only its (empty) marker and failed too: attempt 3 opens with a marker.
    events: list[EditorEvent] = [
        PROMPT,
        chunk("Kept. ", "m1-a1"),
        tool_call("t1"),
        marker(2, "m2-a2"),
        marker(3, "m2-a3"),
        chunk("Answer.", "m2-a3"),
    ]
    assert reduce(events).messages == ("Kept. ", "Answer.")


@pytest.mark.requirement("RESET-005")
@pytest.mark.requirement("EDITOR-005")
def test_thoughts_of_the_abandoned_attempt_are_discarded() -> None:
    view = reduce(
        [
            PROMPT,
            thought("Let me think about ", "m1-a1-thought"),
            thought("how to ans", "m1-a1-thought"),
            marker(2, "m1-a2"),
            thought("Let me think about how to answer.", "m1-a2-thought"),
            chunk("Here is the answer.", "m1-a2"),
        ]
    )
    assert view.thoughts == ("Let me think about how to answer.",)
    assert view.messages == ("Here is the answer.",)


@pytest.mark.requirement("RESET-005")
@pytest.mark.requirement("EDITOR-003")
def test_reset_never_discards_tool_calls_plans_or_earlier_turns() -> None:
    plan = {
        "sessionId": "s",
        "update": {
            "sessionUpdate": "plan",
            "entries": [{"content": "refund", "priority": "high", "status": "pending"}],
        },
    }
    view = reduce(
        [
            PromptSent("turn one"),
            chunk("Turn one answer.", "t1-m1-a1"),
            PromptSent("turn two"),
            plan,
            chunk("Partial", "t2-m1-a1"),
            marker(2, "t2-m1-a2"),
            chunk("Whole.", "t2-m1-a2"),
        ]
    )
    assert view.messages == ("Turn one answer.", "Whole.")
    assert [e.text for e in view.entries if isinstance(e, MessageEntry) and e.role == "user"] == [
        "turn one",
        "turn two",
    ]
    assert any(type(e).__name__ == "PlanEntry" for e in view.entries)


@pytest.mark.requirement("RESET-006")
@pytest.mark.requirement("EDITOR-001")
def test_message_ids_join_chunks_and_a_new_id_starts_a_new_message() -> None:
    view = reduce(
        [
            PROMPT,
            chunk("Hel", "a"),
            chunk("lo.", "a"),
            chunk("Second message.", "b"),
            thought("A thought.", "b-thought"),
            chunk(" More of b? No: a new message after the thought.", "b"),
        ]
    )
    assert view.messages == (
        "Hello.",
        "Second message.",
        " More of b? No: a new message after the thought.",
    )


@pytest.mark.requirement("EDITOR-001")
def test_chunks_without_message_ids_join_until_something_else_is_shown() -> None:
    view = reduce(
        [PROMPT, chunk("One ", None), chunk("message.", None), tool_call("t"), chunk("Two.", None)]
    )
    assert view.messages == ("One message.", "Two.")


@pytest.mark.requirement("RESET-009")
@pytest.mark.requirement("EDITOR-007")
@pytest.mark.parametrize(
    "meta",
    [
        {"reset": True, "attempt": 2, "reason": "a_reason_nobody_defined", "vendor.x": {"y": 1}},
        {"reset": True, "attempt": 99},
        {"reset": True, "attempt": "two", "reason": 7},
        {"reset": True},
    ],
)
def test_any_reason_attempt_and_extra_keys_are_accepted(meta: dict[str, Any]) -> None:
    view = reduce(
        [PROMPT, chunk("Partial", "m1-a1"), chunk("", "m1-a2", meta=meta), chunk("Whole.", "m1-a2")]
    )
    assert view.messages == ("Whole.",)
    assert len(view.retries) == 1


@pytest.mark.requirement("EDITOR-007")
@pytest.mark.parametrize(
    "meta",
    [
        {"reset": False},
        {"reset": "true"},
        {"reset": 1},
        {"attempt": 2, "reason": "x"},
        {"other": True},
    ],
)
def test_only_reset_true_discards(meta: dict[str, Any]) -> None:
    view = reduce([PROMPT, chunk("Kept. ", "m1-a1"), chunk("Also kept.", "m1-a1", meta=meta)])
    assert view.messages == ("Kept. Also kept.",)
    assert view.retries == []


@pytest.mark.requirement("EDITOR-008")
def test_the_view_shows_that_a_retry_happened() -> None:
    view = reduce(
        [PROMPT, chunk("Par", "m1-a1"), marker(2, "m1-a2", "rate_limited"), chunk("Done.", "m1-a2")]
    )
    assert view.retries == [RetryNotice(2, "rate_limited")]
    rendered = view.render()
    assert "retrying: attempt 2 after rate_limited" in rendered
    assert rendered.index("retrying") < rendered.index("Done.")
    assert "Par\n" not in rendered


@pytest.mark.requirement("EDITOR-009")
def test_tool_calls_take_the_latest_fields_of_their_updates() -> None:
    diff = {"type": "diff", "path": "/w/a.txt", "oldText": None, "newText": "x\n"}
    view = reduce(
        [
            PROMPT,
            tool_call(
                "t1",
                "Write a.txt",
                content=[diff],
                locations=[{"path": "/w/a.txt"}],
                rawInput={"path": "a.txt"},
            ),
            tool_update("t1", status="in_progress"),
            tool_update(
                "t1", status="completed", rawOutput={"bytes": 2}, _meta={"effectKey": "abc"}
            ),
            tool_update("t1", title="Wrote a.txt"),
        ]
    )
    (call,) = view.tool_calls
    assert (call.title, call.kind, call.status) == ("Wrote a.txt", "edit", "completed")
    assert call.content == [diff]
    assert call.locations == [{"path": "/w/a.txt"}]
    assert call.raw_input == {"path": "a.txt"}
    assert call.raw_output == {"bytes": 2}
    assert call.meta == {"effectKey": "abc"}
    assert view.tool_call("t1") is call


def test_permission_prompts_are_recorded_with_the_answer() -> None:
    params = {
        "sessionId": "s",
        "toolCall": {"toolCallId": "t1", "title": "Write a.txt"},
        "options": [
            {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
            {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
        ],
    }
    view = reduce(
        [
            PROMPT,
            tool_call("t1"),
            PermissionAsked(params, "allow-once"),
            PermissionAsked(params, None),
        ]
    )
    first, second = view.permission_prompts
    assert (first.tool_call_id, first.title, first.chosen_kind) == (
        "t1",
        "Write a.txt",
        "allow_once",
    )
    assert second.chosen_kind is None
    assert first.option_kinds == ("allow_once", "reject_once")
    assert len(view.tool_calls) == 1
    assert "permission asked: answered allow_once" in view.render()


def test_a_replayed_user_message_opens_a_turn() -> None:
    view = reduce(
        [
            chunk("Fix the ", "u1", kind="user_message_chunk"),
            chunk("bug", "u1", kind="user_message_chunk"),
            chunk("Done.", "a1"),
            chunk("Next question", "u2", kind="user_message_chunk"),
            chunk("Partial", "a2-1"),
            marker(2, "a2-2"),
            chunk("Answer.", "a2-2"),
        ]
    )
    users = [e.text for e in view.entries if isinstance(e, MessageEntry) and e.role == "user"]
    assert users == ["Fix the bug", "Next question"]
    assert view.messages == ("Done.", "Answer.")


def test_other_updates_change_session_state_not_the_conversation() -> None:
    view = reduce(
        [
            {
                "sessionId": "s",
                "update": {
                    "sessionUpdate": "available_commands_update",
                    "availableCommands": [{"name": "hello", "description": "d"}],
                },
            },
            {
                "sessionId": "s",
                "update": {"sessionUpdate": "current_mode_update", "currentModeId": "read-only"},
            },
            {
                "sessionId": "s",
                "update": {"sessionUpdate": "session_info_update", "title": "Refunds"},
            },
            {"sessionId": "s", "update": {"sessionUpdate": "usage_update", "used": 1, "size": 2}},
            {"sessionId": "s", "update": {"sessionUpdate": "some_future_kind"}},
        ]
    )
    assert view.entries == []
    assert (view.available_commands, view.current_mode, view.title) == (
        ("hello",),
        "read-only",
        "Refunds",
    )


def test_non_text_content_gets_a_placeholder() -> None:
    image = {
        "sessionId": "s",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "image", "mimeType": "image/png", "data": "AA=="},
        },
    }
    assert reduce([image]).messages == ("[image: image/png]",)


def test_text_grows_in_linear_time() -> None:
    # 50k one-character chunks: a quadratic join would be slow; parts are joined once.
    view = reduce([PROMPT, *(chunk("x", "m1-a1") for _ in range(50_000))])
    assert len(view.text()) == 50_000
