"""A prompt turn's response on the wire (REPLY4-003): encoded directly, without the generic
encoder or its big-string scan, byte-identical to what the generic encoder writes for the
message, and in the same send as the turn's last usage_update, just after it. Structural:
what is written and by which path, never how long it takes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from bridge import schema_validator, scripted_config
from editor import connect
from rawpeer import MemoryLink

from acp_bridge.agent import Agent
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.jsonrpc import _writer as writer
from acp_bridge.providers.scripted import ScriptedProvider, loads_script
from acp_bridge.turn import EffectLedger
from acp_bridge.wire import MemoryTransport, encode

pytestmark = pytest.mark.anyio

_CALL = """{"attempts": [[{"text": "Reading. "}, {"tool_call": "read_file",
              "arguments": {"path": "README.md"}},
             {"usage": {"input_tokens": 40, "output_tokens": 5}}, {"finish": "auto"}]]},
  {"attempts": [[{"text": "It is \\"a\\" démo."},
             {"usage": {"input_tokens": 60, "output_tokens": 4}}, {"finish": "stop"}]]}"""
SCRIPT = f'{{"name": "read", "description": "Reads, then answers", "calls": [{_CALL}, {_CALL}]}}'


class _Sends:
    """The agent's side of the pair, keeping the bytes of every send."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.sent: list[bytes] = []

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def send(self, data: bytes) -> None:
        self.sent.append(data)
        await self.inner.send(data)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.requirement("REPLY4-003")
@pytest.mark.requirement("REPLY4-004")
async def test_the_prompt_response_is_encoded_directly_by_the_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Also written by the turn's own task: on the wire before the handler has returned."""
    returned: list[tuple[str, int]] = []  # each handler's method, and the sends when it returned
    handle = Agent.handle_request

    async def recorded_handle(self: Agent, method: str, params: Any) -> Any:
        answer = await handle(self, method, params)
        returned.append((method, len(transport.sent)))
        return answer

    monkeypatch.setattr(Agent, "handle_request", recorded_handle)
    scanned: list[Any] = []
    scan = writer.streamable

    def recorded_scan(message: Any) -> bool:
        scanned.append(message)
        return scan(message)

    monkeypatch.setattr(writer, "streamable", recorded_scan)  # the generic path's first step
    (tmp_path / "README.md").write_text("# Demo\n")
    config = scripted_config(tmp_path / "state", ScriptedProvider(loads_script(SCRIPT)))
    ledger = EffectLedger(config.state_dir)
    async with MemoryLink() as link, anyio.create_task_group() as tg:
        transport = _Sends(link.agent_side)
        peer = JsonRpcPeer(transport)
        agent = Agent(config, peer, ledger)
        tg.start_soon(peer.serve, agent)
        async with connect(link.client_side, validator=schema_validator()) as editor:
            await editor.initialize()
            session_id = await editor.new_session(tmp_path)
            with anyio.fail_after(30):
                for text in ("read it", "read it again"):
                    sent = len(transport.sent)
                    reply = await editor.prompt(session_id, text)
                    assert reply["result"]["stopReason"] == "end_turn"
                    assert returned[-1] == ("session/prompt", len(transport.sent))
                    *lines, response = transport.sent[sent:][-1].splitlines(keepends=True)
                    assert json.loads(response) == reply  # the send ends with the response
                    assert response == encode(reply)  # the generic encoder's bytes
                # The first turn's title went out before its response, with its usage_update
                # (SESS-033); the second's usage_update rides with the response (TAIL-002).
                assert [
                    json.loads(line)["params"]["update"]["sessionUpdate"] for line in lines
                ] == ["usage_update"]
        tg.cancel_scope.cancel()
    agent.close()
    ledger.close()
    assert scanned  # the other messages took the generic path
    assert not [m for m in scanned if "stopReason" in json.dumps(m)]
