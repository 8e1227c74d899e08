"""Cancellation windows: a cancel right behind its prompt, and every way a turn ends is recorded
(spec/agent-surface.md AGENT-CANCEL-002, AGENT-CANCEL-003)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from bridge import running_bridge, schema_validator, scripted_config
from editor import ScriptedEditor, connect
from rawpeer import MemoryLink

from acp_bridge.agent import Agent
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.providers.scripted import ScriptedProvider, loads_script
from acp_bridge.sessions import SessionStore
from acp_bridge.turn import EffectLedger

pytestmark = pytest.mark.anyio

SLOW = {
    "name": "slow",
    "description": "streams slowly, so only a cancel ends it early",
    "calls": [
        {
            "attempts": [
                [
                    {"text": "one "},
                    {"text": "two ", "delay_ms": 20000},
                    {"finish": "stop"},
                ]
            ]
        }
    ],
}


def slow_config(state: Path) -> Any:
    return scripted_config(state, provider=ScriptedProvider(loads_script(json.dumps(SLOW))))


def line(editor: ScriptedEditor, message: dict[str, Any]) -> bytes:
    """One NDJSON line, noted by the schema validator as a message the client sent."""
    if editor.validator is not None:
        editor.validator.note_client_message(message)
    return json.dumps(message).encode() + b"\n"


def prompt_line(editor: ScriptedEditor, session: str, text: str = "go") -> tuple[int, bytes]:
    editor._next_id += 1
    request_id = editor._next_id
    editor._waiting[request_id] = anyio.Event()
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]},
    }
    return request_id, line(editor, message)


def cancel_line(editor: ScriptedEditor, session: str) -> bytes:
    message = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}
    return line(editor, message)


async def answer(editor: ScriptedEditor, request_id: int) -> dict[str, Any]:
    with anyio.fail_after(15):
        await editor._waiting[request_id].wait()
    return editor._answers.pop(request_id)


@pytest.mark.requirement("AGENT-CANCEL-002")
async def test_a_cancel_in_the_same_write_as_its_prompt_ends_the_turn_cancelled(
    tmp_path: Path,
) -> None:
    async with running_bridge(scripted_config(tmp_path / "s")) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        # /hello would finish at once: only a cancel that was not lost answers cancelled.
        request_id, sent = prompt_line(ed, session, "/hello")
        await ed.transport.send(sent + cancel_line(ed, session))
        reply = await answer(ed, request_id)
        assert reply["result"]["stopReason"] == "cancelled"
        # The session goes on: the next prompt runs to its end.
        assert (await ed.prompt(session, "/hello"))["result"]["stopReason"] == "end_turn"


@pytest.mark.requirement("AGENT-CANCEL-002")
@pytest.mark.parametrize("checkpoints", [0, 1, 2, 3, 5, 8, 13, 21])
async def test_a_cancel_at_any_moment_after_the_prompt_was_read_ends_it_cancelled(
    tmp_path: Path, checkpoints: int
) -> None:
    async with running_bridge(slow_config(tmp_path / "s")) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        request_id, sent = prompt_line(ed, session)
        await ed.transport.send(sent)
        for _ in range(checkpoints):  # the request is read, dispatched, started...
            await anyio.lowlevel.checkpoint()
        await ed.transport.send(cancel_line(ed, session))
        reply = await answer(ed, request_id)
    assert reply["result"]["stopReason"] == "cancelled"
    with SessionStore(tmp_path / "s") as store:
        (turn,) = store.turns(session)
    assert (turn.state.value, turn.stop_reason) == ("completed", "cancelled")


@pytest.mark.requirement("AGENT-CANCEL-003")
async def test_cancel_request_on_a_running_prompt_records_the_end_of_its_turn(
    tmp_path: Path,
) -> None:
    async with running_bridge(slow_config(tmp_path / "s")) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        request_id, sent = prompt_line(ed, session)
        await ed.transport.send(sent)
        with anyio.fail_after(10):
            while not any(u["sessionUpdate"] == "agent_message_chunk" for u in ed.updates(session)):
                await anyio.wait_all_tasks_blocked()
        await ed.notify("$/cancel_request", {"requestId": request_id})
        reply = await answer(ed, request_id)
        assert reply["error"]["code"] == -32800
        with SessionStore(tmp_path / "s") as store:
            (turn,) = store.turns(session)
        assert (turn.state.value, turn.stop_reason) == ("completed", "cancelled")
        # The same prompt again is a new turn, not a re-run of the cancelled one (SESS-021).
        second_id, sent = prompt_line(ed, session)
        await ed.transport.send(sent + cancel_line(ed, session))
        second = await answer(ed, second_id)
    meta = second["result"]["_meta"]["acpBridge"]
    assert meta["turnId"].endswith("-turn2")
    assert not meta.get("rerun")


@pytest.mark.requirement("AGENT-CANCEL-003")
async def test_a_connection_closed_mid_turn_records_the_turn_interrupted(tmp_path: Path) -> None:
    config = slow_config(tmp_path / "s")
    ledger = EffectLedger(config.state_dir)
    async with MemoryLink() as link, anyio.create_task_group() as tg:
        peer = JsonRpcPeer(link.agent_side, drain_timeout=0.05)
        agent = Agent(config, peer, ledger)
        tg.start_soon(peer.serve, agent)
        async with connect(link.client_side, validator=schema_validator()) as ed:
            await ed.initialize()
            session = await ed.new_session(tmp_path)
            _, sent = prompt_line(ed, session)
            await ed.transport.send(sent)
            with anyio.fail_after(10):
                while not any(
                    u["sessionUpdate"] == "agent_message_chunk" for u in ed.updates(session)
                ):
                    await anyio.wait_all_tasks_blocked()
            await link.client_side.send_eof()  # the editor went away mid-turn
            with anyio.fail_after(10):
                while not peer.closed or agent._conn.sessions[session].running is not None:
                    await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    agent.close()
    ledger.close()
    with SessionStore(tmp_path / "s") as store:
        (turn,) = store.turns(session)
    assert turn.state.value == "interrupted"
    assert "connection closed" in (turn.note or "")
