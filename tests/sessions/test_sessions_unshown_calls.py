"""An update is only ever sent for a call whose `tool_call` was written, and a replay never
shows a `tool_call` the editor never saw (TURN-SHOWN-001)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import anyio.lowlevel
import pytest
from turn.turnkit import (
    FakeProvider,
    Hold,
    IssueRefund,
    RecordingSink,
    cancel_when,
    finish,
    make_request,
    start,
    text,
    tool_call,
)

from acp_bridge.providers import FinishReason, ToolResults, UserTurn
from acp_bridge.sessions import Owner, SessionRecord, SessionStore, TurnRecorder
from acp_bridge.turn import ToolCallChanged, ToolCallShown, TurnUpdate

pytestmark = pytest.mark.anyio


class QueuedToolCalls(RecordingSink):
    """An editor sink whose `tool_call` waits behind chunks that are still being written."""

    def __init__(self, hold: Hold) -> None:
        super().__init__()
        self.hold = hold

    async def send_update(self, update: TurnUpdate) -> None:
        if isinstance(update, ToolCallShown):
            await self.hold.wait()  # never released: cancelled while queued
        await super().send_update(update)


def shown_ids(updates: Sequence[TurnUpdate]) -> set[str]:
    return {u.tool_call_id for u in updates if isinstance(u, ToolCallShown)}


@pytest.mark.requirement("TURN-SHOWN-001")
async def test_a_tool_call_cancelled_while_queued_is_never_updated_nor_replayed() -> None:
    hold = Hold()
    editor = QueuedToolCalls(hold)
    store = SessionStore.in_memory()
    owner = Owner()
    store.create(SessionRecord("s1", "/w", (), "ask", "m", None, 1.0, 1.0), owner)
    prompt = UserTurn(("refund A",))
    begun = store.begin_turn("s1", owner, [{"type": "text", "text": "refund A"}], prompt)
    recorder = TurnRecorder(store, "s1", begun, editor)
    refund = IssueRefund()
    script = [
        start(),
        *text("Refunding."),
        *tool_call("c1", "issue_refund", {"order_id": "A"}),
        finish(FinishReason.TOOL_CALLS),
    ]
    request = dataclasses.replace(
        make_request(FakeProvider(script), editor, [refund]),
        sink=recorder,
        journal=recorder,
        prompt=prompt,
    )
    await cancel_when(request, hold)
    for _ in range(5):  # any stray task's late send
        await anyio.lowlevel.checkpoint()
    assert refund.executions == []
    # The editor saw no tool_call, so it gets no tool_call_update either.
    assert shown_ids(editor.updates) == set()
    assert not [u for u in editor.updates if isinstance(u, ToolCallChanged)]
    # The history still answers the call (paired), and the store has no call to replay.
    assert isinstance(request.history[-1], ToolResults)
    (stored,) = store.turns("s1")
    assert stored.tool_calls == ()  # session/load replays the stored calls only
