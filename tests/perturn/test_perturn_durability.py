"""Which journal writes are fsynced (SESS-001, issue 15.2): only those something depends on.

Every statement the session store runs is traced (SQLite's trace callback on the store's own
connection) while a real agent runs a turn with a side-effecting tool call. A transaction is
fsynced when it commits with `synchronous=FULL` (set just before its `BEGIN`): the turn's
start with its prompt (before the model is called) and the tool call's effect key (before the
ledger records it started). The kept messages, what the tool call showed and the turn's end
commit without an fsync: after the last chunk nothing waits for the disk. Closing the store
fsyncs the write-ahead log, so nothing committed stays off the disk.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from bridge import scripted_config
from sessions.sesskit import serving

from acp_bridge._json import JsonObject
from acp_bridge.providers.scripted import ScriptedProvider, loads_script
from acp_bridge.sessions import SessionStore, TurnState
from acp_bridge.sessions import _store_file as store_module
from acp_bridge.tools import (
    TextContent,
    ToolContext,
    ToolKind,
    ToolOutcome,
    ToolPreview,
    ToolRegistry,
    default_tools,
)

pytestmark = pytest.mark.anyio

SCRIPT = """{
  "name": "touch",
  "description": "Calls the touch tool, then answers",
  "calls": [
    {"attempts": [[{"text": "Touching. "}, {"tool_call": "touch", "arguments": {"n": 1}},
                   {"finish": "auto"}]]},
    {"attempts": [[{"text": "Touched."}, {"finish": "stop"}]]}
  ]
}"""


class TouchTool:
    name = "touch"
    description = "Touches."
    parameters: JsonObject = {"type": "object", "properties": {"n": {"type": "integer"}}}
    kind = ToolKind.EXECUTE
    side_effect = True

    async def preview(self, arguments: JsonObject, ctx: ToolContext) -> ToolPreview:
        return ToolPreview(title="Touch", kind=ToolKind.EXECUTE)

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolOutcome:
        return ToolOutcome(ok=True, for_model="touched", content=(TextContent("touched"),))


def transactions(statements: list[str]) -> list[tuple[bool, str]]:
    """(fsynced, the transaction's statements joined) for each write transaction."""
    found: list[tuple[bool, str]] = []
    body: list[str] | None = None
    durable = False
    for index, sql in enumerate(statements):
        if sql == "BEGIN IMMEDIATE":
            body = []
            durable = index > 0 and statements[index - 1] == "PRAGMA synchronous = FULL"
        elif sql == "COMMIT" and body is not None:
            found.append((durable, "\n".join(body)))
            body = None
        elif body is not None:
            body.append(sql)
    return found


@pytest.mark.requirement("PERTURN-004")
@pytest.mark.requirement("SESS-001")
async def test_only_the_turn_start_and_the_effect_key_are_fsynced(tmp_path: Path) -> None:
    state = tmp_path / "state"
    store = SessionStore(state)
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    provider = ScriptedProvider(loads_script(SCRIPT))
    tools = ToolRegistry([*default_tools(), TouchTool()])
    config = scripted_config(state, provider, tools=tools)
    try:
        async with serving(config, store=store) as editor:
            await editor.initialize()
            session_id = await editor.new_session(tmp_path)
            statements.clear()
            reply = await editor.prompt(session_id, "touch it")
            assert reply["result"]["stopReason"] == "end_turn"
            turn = transactions(statements)
    finally:
        store.close()
    fsynced = [body for durable, body in turn if durable]
    assert len(fsynced) == 2, turn
    assert "INSERT INTO turns" in fsynced[0]  # the start and its prompt, before the model
    assert "INTO tool_calls" in fsynced[1]
    assert "'in_progress'" not in fsynced[1]  # the key, before it runs
    with SessionStore(state) as reader:
        (stored,) = reader.turns(session_id)
    (call,) = stored.tool_calls
    assert call.effect_key is not None
    assert call.effect_key in fsynced[1]
    # Everything after the effect key: what the call showed, the results, the final answer,
    # the turn's end; none of it waits for the disk.
    after = turn[turn.index((True, fsynced[1])) + 1 :]
    assert after
    assert not any(durable for durable, _ in after)
    assert any("INSERT INTO messages" in body for _, body in after)
    assert any("UPDATE turns SET state = 'completed'" in body for _, body in after)
    assert stored.state is TurnState.COMPLETED
    assert [s.text for m in stored.model_calls for s in m.display] == ["Touching. ", "Touched."]


@pytest.mark.requirement("PERTURN-004")
def test_closing_the_store_fsyncs_the_write_ahead_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    store = SessionStore(tmp_path)
    store.update("nobody", title="x")  # a write, committed without an fsync
    monkeypatch.setattr(store_module.os, "fsync", fsync)
    store.close()
    assert synced == [str(tmp_path / "sessions.sqlite3-wal")]
