"""What a turn writes between its last chunk and its response, and in how many writes
(issue 15.2, TAIL-002/003), checked structurally, never by timing.

The agent's side of the memory pair and the session store's connection are recorded into one
log: every transport `send` (one `write` on stdio) and every statement SQLite runs. A turn of
two model calls (a tool call, then the answer) must show: the first call's usage_update
written at once, before the tool call; the last call's written in the same send as the
response, just before it; and between the last chunk and that send, one store transaction
(the kept answer, then the turn's end), not fsynced, committed before the response is; the
write-ahead log's checkpoint (its fsyncs) only after the response.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from bridge import schema_validator, scripted_config
from editor import ScriptedEditor, connect
from perturn.test_perturn_durability import transactions
from rawpeer import MemoryLink

from acp_bridge.agent import Agent, AgentConfig
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.providers.scripted import ScriptedProvider, loads_script
from acp_bridge.sessions import SessionStore
from acp_bridge.sessions import _store_file as store_file
from acp_bridge.turn import EffectLedger
from acp_bridge.wire import MemoryTransport

pytestmark = pytest.mark.anyio

_TURN = """
    {"attempts": [[{"text": "Reading. "}, {"tool_call": "read_file",
                    "arguments": {"path": "README.md"}},
                   {"usage": {"input_tokens": 40, "output_tokens": 5}}, {"finish": "auto"}]]},
    {"attempts": [[{"text": "It is a demo."},
                   {"usage": {"input_tokens": 60, "output_tokens": 4}}, {"finish": "stop"}]]}"""
# Two turns alike: the first titles the session (SESS-033, a notification of its own before
# the response); the second is the one recorded.
SCRIPT = f"""{{"name": "read", "description": "Reads a file, then answers",
  "calls": [{_TURN}, {_TURN}]}}"""

Log = list[tuple[str, Any]]


class RecordedTransport:
    """The agent's side of the pair: each send logged (as its messages) before it goes."""

    def __init__(self, inner: MemoryTransport, log: Log) -> None:
        self._inner = inner
        self._log = log

    async def receive(self) -> bytes:
        return await self._inner.receive()

    async def send(self, data: bytes) -> None:
        lines = data.decode().splitlines()
        self._log.append(("send", [json.loads(line) for line in lines]))
        await self._inner.send(data)

    async def aclose(self) -> None:
        await self._inner.aclose()


@asynccontextmanager
async def recorded(
    config: AgentConfig, store: SessionStore, log: Log
) -> AsyncIterator[ScriptedEditor]:
    ledger = EffectLedger(config.state_dir)
    async with MemoryLink() as link, anyio.create_task_group() as tg:
        peer = JsonRpcPeer(RecordedTransport(link.agent_side, log))
        agent = Agent(config, peer, ledger, store)
        tg.start_soon(peer.serve, agent)
        try:
            async with connect(link.client_side, validator=schema_validator()) as editor:
                yield editor
        finally:
            tg.cancel_scope.cancel()
            agent.close()
            ledger.close()


def _kind(message: dict[str, Any]) -> str:
    if message.get("method") == "session/update":
        return str(message["params"]["update"]["sessionUpdate"])
    return "response" if "result" in message else str(message.get("method", "error"))


@pytest.fixture
async def turn_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Log:
    """The log of one two-call turn (its sends and the store's statements), the store's own
    checkpoint due after every write."""
    monkeypatch.setattr(store_file, "CHECKPOINT_EVERY", 1)
    (tmp_path / "README.md").write_text("# Demo\n")
    state = tmp_path / "state"
    store = SessionStore(state)
    log: Log = []
    store._db.set_trace_callback(lambda sql: log.append(("sql", sql)))
    config = scripted_config(state, ScriptedProvider(loads_script(SCRIPT)))
    try:
        async with recorded(config, store, log) as editor:
            await editor.initialize()
            session_id = await editor.new_session(tmp_path)
            with anyio.fail_after(30):
                await editor.prompt(session_id, "read it")
                log.clear()
                reply = await editor.prompt(session_id, "read it again")
            assert reply["result"]["stopReason"] == "end_turn"
    finally:
        store.close()
    return log


@pytest.mark.requirement("TAIL-002")
async def test_the_last_usage_update_rides_with_the_response(turn_log: Log) -> None:
    sends = [[_kind(m) for m in messages] for what, messages in turn_log if what == "send"]
    assert sends[-1] == ["usage_update", "response"]  # one write, the update first
    usage_sends = [kinds for kinds in sends if "usage_update" in kinds]
    assert usage_sends == [["usage_update"], ["usage_update", "response"]]
    written = [kind for kinds in sends for kind in kinds]
    first_usage = written.index("usage_update")
    assert "tool_call" in written[first_usage:]  # the first call's usage, before its tool
    assert "tool_call" not in written[:first_usage]
    usage, response = [ms for what, ms in turn_log if what == "send"][-1]
    assert usage["params"]["update"]["used"] == 64  # the last call's: 60 in, 4 out
    assert response["result"]["stopReason"] == "end_turn"


@pytest.mark.requirement("TAIL-003")
@pytest.mark.requirement("SESS-UNANSWERED-001")
async def test_the_tail_commits_once_without_fsync_before_the_response(turn_log: Log) -> None:
    positions = [i for i, (what, _) in enumerate(turn_log) if what == "send"]
    chunks = [
        i for i in positions if any(_kind(m) == "agent_message_chunk" for m in turn_log[i][1])
    ]
    response = next(i for i in positions if any("result" in m for m in turn_log[i][1]))
    tail = [sql for what, sql in turn_log[chunks[-1] : response] if what == "sql"]
    committed = transactions(tail)
    assert [durable for durable, _ in committed] == [False]  # one commit, no fsync in it
    ((_, end),) = committed
    assert "INSERT INTO messages" in end.split("UPDATE turns SET state")[0]  # the answer first
    assert "UPDATE sessions" not in end  # its row after the response (STORE4-003)
    assert tail[-1] == "COMMIT"  # the turn's end is committed before the response is sent
    after = [sql for what, sql in turn_log[response:] if what == "sql"]
    assert any("answered = 1" in sql for sql in after)  # marked answered once it is out
    assert any("UPDATE sessions SET updated_at" in sql for sql in after)


@pytest.mark.requirement("TAIL-004")
async def test_the_log_is_checkpointed_after_the_response_never_before(turn_log: Log) -> None:
    response = next(
        i
        for i, (what, messages) in enumerate(turn_log)
        if what == "send" and any("result" in m for m in messages)
    )
    statements = [(i, sql) for i, (what, sql) in enumerate(turn_log) if what == "sql"]
    checkpoints = [i for i, sql in statements if "wal_checkpoint" in sql]
    assert checkpoints  # due after every write here: right after the turn is marked answered
    assert all(i > response for i in checkpoints)
    answered = next(i for i, sql in statements if "answered = 1" in sql)
    assert checkpoints[-1] > answered


@pytest.mark.requirement("TAIL-004")
def test_sqlite_checkpoints_by_itself_only_as_a_safety_net(tmp_path: Path) -> None:
    with SessionStore(tmp_path) as store:
        (pages,) = store._db.execute("PRAGMA wal_autocheckpoint").fetchone()
    assert pages == 8000  # its default 1000 would checkpoint inside a turn's commits
