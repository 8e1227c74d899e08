"""The turn's last answer is committed with the turn's end, in one transaction (STORE4-001).

A kept answer that makes tool calls is committed when it is kept, before any of its calls is
shown (SESS-011); the turn's last one (no tool calls) is held by the `TurnRecorder` and
written by `SessionStore.end_turn` together with the end, however the turn ends (its
response, a `$/cancel_request` after the stream ended, an error, the connection closing).
Checked on the statements
SQLite runs, never by timing.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import anyio
import pytest
from perturn.test_perturn_durability import transactions
from turn.turnkit import FakeProvider, RecordingSink, RunCommand, finish, make_request, start

from acp_bridge.agent._ending import CONNECTION_CLOSED_NOTE, record_end
from acp_bridge.agent._session import Session
from acp_bridge.providers import (
    AssistantTurn,
    FinishReason,
    TextDelta,
    ToolCallComplete,
    ToolCallStart,
    UserTurn,
)
from acp_bridge.sessions import Owner, SessionRecord, SessionStore, TurnRecorder, TurnState
from acp_bridge.turn import Turn

pytestmark = [pytest.mark.anyio, pytest.mark.requirement("STORE4-001")]


def _store_with_turn() -> tuple[SessionStore, TurnRecorder, RecordingSink]:
    store = SessionStore.in_memory()
    owner = Owner()
    store.create(SessionRecord("s1", "/w", (), "ask", "m", None, 1.0, 1.0), owner)
    begun = store.begin_turn("s1", owner, [{"type": "text", "text": "go"}], UserTurn(("go",)))
    sink = RecordingSink()
    return store, TurnRecorder(store, "s1", begun, sink), sink


async def test_the_last_answer_waits_for_the_end_and_a_calling_one_does_not() -> None:
    store, recorder, sink = _store_with_turn()
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    provider = FakeProvider(
        [
            start(),
            TextDelta("Running. "),
            ToolCallStart("c1", "run_command", 0),
            ToolCallComplete("c1", "run_command", {"command": "echo hi"}, "{}"),
            finish(FinishReason.TOOL_CALLS),
        ],
        [start(), TextDelta("Done."), finish()],
    )
    request = dataclasses.replace(
        make_request(provider, sink, [RunCommand()]),
        sink=recorder,
        journal=recorder,
        prompt=UserTurn(("go",)),
    )
    with anyio.fail_after(10):
        await Turn(request).run()
    written = transactions(statements)
    kinds = [body.split(" ")[0:3] for _, body in written]
    # The first answer, then its tool call as shown: the answer committed first (SESS-011).
    assert kinds[0] == ["INSERT", "INTO", "messages"]
    assert any("INSERT OR REPLACE INTO tool_calls" in body for _, body in written[1:])
    history = store.history("s1")
    assert [type(m).__name__ for m in history] == ["UserTurn", "AssistantTurn", "ToolResults"]
    held = recorder.take_answer()
    assert held is not None
    assert held.message == AssistantTurn(text="Done.")
    assert [s.text for s in held.display] == ["Done."]
    assert recorder.take_answer() is None  # taken once

    statements.clear()
    store.end_turn("s1", 1, TurnState.COMPLETED, stop_reason="end_turn", answer=held)
    ((durable, body),) = transactions(statements)  # one transaction, no fsync
    assert not durable
    assert body.index("INSERT INTO messages") < body.index("UPDATE turns SET state")
    assert store.history("s1")[-1] == AssistantTurn(text="Done.")
    (turn,) = store.turns("s1")
    assert [s.text for call in turn.model_calls for s in call.display] == ["Running. ", "Done."]


async def test_a_held_answer_is_written_before_anything_kept_after_it() -> None:
    store, recorder, _ = _store_with_turn()
    recorder.model_call_kept(1, 1, AssistantTurn(text="first"))
    assert len(store.history("s1")) == 1  # held
    recorder.model_call_kept(2, 1, AssistantTurn(text="second"))  # not what engines do
    assert store.history("s1")[1:] == [AssistantTurn(text="first")]
    held = recorder.take_answer()
    assert held is not None
    assert held.message == AssistantTurn(text="second")


@pytest.mark.parametrize(
    ("state", "stop_reason", "note"),
    [
        (TurnState.COMPLETED, "end_turn", None),
        (TurnState.COMPLETED, "cancelled", None),  # $/cancel_request after the stream ended
        (TurnState.FAILED, None, "This turn ended with an error: internal error"),
        (TurnState.INTERRUPTED, None, CONNECTION_CLOSED_NOTE),  # the connection closed
    ],
)
def test_every_way_a_turn_ends_writes_its_held_answer(
    state: TurnState, stop_reason: str | None, note: str | None
) -> None:
    store, recorder, _ = _store_with_turn()
    recorder.model_call_kept(1, 1, AssistantTurn(text="The answer."))
    session = Session("s1", Path("/w"), (), "m")
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    answer = recorder.take_answer()
    record_end(store, session, recorder.start, state, stop_reason, note, answer=answer)
    ((_, body),) = transactions(statements)
    assert body.index("INSERT INTO messages") < body.index("UPDATE turns SET state")
    (turn,) = store.turns("s1")
    assert (turn.state, turn.stop_reason, turn.note) == (state, stop_reason, note)
    assert store.history("s1")[-1] == AssistantTurn(text="The answer.")
    assert [s.text for call in turn.model_calls for s in call.display] == []  # none shown
