"""A stored session of every kind of turn a replay shows, written through the store's API
(fast: no agent, no model), for the session/load tests."""

from __future__ import annotations

from acp_bridge._json import JsonObject
from acp_bridge.providers import AssistantTurn, ToolCall, ToolResult, ToolResults, UserTurn
from acp_bridge.sessions import (
    DisplaySegment,
    Owner,
    SessionRecord,
    SessionStore,
    StoredModelCall,
    StoredToolCall,
    TurnState,
)
from acp_bridge.tools import Location, TextContent, ToolKind
from acp_bridge.turn import CompactionRecord, ToolStatus

__all__ = ["OWNER", "SID", "fill"]

SID = "sess_pages"
OWNER = Owner()


def fill(store: SessionStore, turns: int, *, result_chars: int = 10, first: int = 1) -> None:
    """`turns` turns of every kind a replay shows: a thought and text, a tool call with its
    results, a second model call; every third turn a compaction, every fourth interrupted
    (a note), every fifth a prompt with a resource link. `result_chars`: the size of each
    tool result kept in the conversation (never shown, never replayed)."""
    owner = OWNER
    if first == 1:
        store.create(SessionRecord(SID, "/w", (), "ask", "m", None, 1.0, 1.0), owner)
    else:
        store.claim(SID, owner)
    for n in range(first, first + turns):
        prompt: list[JsonObject] = [{"type": "text", "text": f"turn {n} “quoted”"}]
        if n % 5 == 0:
            prompt.append({"type": "resource_link", "uri": f"file:///w/{n}.md", "name": "a"})
        start = store.begin_turn(SID, owner, prompt, UserTurn((f"turn {n}",)))
        prefix = start.id_prefix
        call = ToolCall(f"c{n}", "read_file", {"path": "a.txt"}, {})
        first_reply = AssistantTurn(text="Reading.", tool_calls=(call,))
        shown = (
            DisplaySegment("thought", f"{prefix}-m1-a1-thought", f"thinking {n}"),
            DisplaySegment("text", f"{prefix}-m1-a1", "Reading.\n\t\\ done"),
        )
        if n % 3 == 0:
            store.add_compaction(
                SID, start.seq, CompactionRecord(f"cmp{n}", "summary", 2, "threshold", 1)
            )
        store.add_message(
            SID, start.seq, first_reply, model_call=StoredModelCall(1, 1, first_reply, shown)
        )
        store.save_tool_call(
            SID,
            start.seq,
            StoredToolCall(
                f"{prefix}-t1",
                1,
                1,
                "Read a.txt",
                ToolKind.READ,
                ToolStatus.COMPLETED,
                (TextContent("x" * 20),),
                (Location("/w/a.txt", 1),),
                {"path": "a.txt"},
                {"bytes": 20},
            ),
        )
        results = ToolResults((ToolResult(f"c{n}", "read_file", "r" * result_chars, False),))
        store.add_message(SID, start.seq, results)
        answer = AssistantTurn(text=f"Answer {n}")
        segments = (DisplaySegment("text", f"{prefix}-m2-a1", f"Answer {n}"),)
        store.add_message(
            SID, start.seq, answer, model_call=StoredModelCall(2, 1, answer, segments)
        )
        if n % 4 == 0:
            store.end_turn(SID, start.seq, TurnState.INTERRUPTED, note="The turn was interrupted.")
        else:
            store.end_turn(SID, start.seq, TurnState.COMPLETED, stop_reason="end_turn")
    store.release(SID, owner)  # free for a bridge to load
