"""The chunk writer's batches (CHUNK-001): the chunks that queued behind a busy write go out
one line each (merging off) or one line per run (merging on), every line of the batch in ONE
transport write, in order; a chunk only the general encoder can write (a lone surrogate)
takes its own write in its place.

The transport is real (`JsonRpcPeer` over a recording transport whose first write blocks
until the test lets it through), so "the writer is busy" is a fact of the test, not of
timing. Every line is checked against the official ACP schema.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from acp_bridge.agent._sink import PeerTurnSink
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.turn import AgentText, AgentThought

pytestmark = pytest.mark.anyio


class _GatedTransport:
    """Records each `send`; the first one waits for `gate` (the editor is not reading)."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.gate = anyio.Event()
        self.started = anyio.Event()

    async def receive(self) -> bytes:
        raise AssertionError("not read in this test")

    async def send(self, data: bytes) -> None:
        if not self.writes and not self.gate.is_set():
            self.started.set()
            await self.gate.wait()
        self.writes.append(data)

    async def aclose(self) -> None:
        pass


async def _behind_a_busy_write(
    chunks: list[AgentText | AgentThought], *, merge: bool
) -> list[list[dict[str, Any]]]:
    """Sends `chunks[0]`, waits until its write blocks, queues the rest, lets it through:
    each transport write, as the messages its lines hold."""
    transport = _GatedTransport()
    sink = PeerTurnSink(JsonRpcPeer(transport), "sess_batch", merge=merge)
    with anyio.fail_after(30):
        async with sink.running():
            await sink.send_update(chunks[0])
            await transport.started.wait()
            for chunk in chunks[1:]:
                await sink.send_update(chunk)
            transport.gate.set()
    return [[json.loads(line) for line in data.splitlines()] for data in transport.writes]


def _texts(write: list[dict[str, Any]]) -> list[str]:
    return [message["params"]["update"]["content"]["text"] for message in write]


@pytest.mark.requirement("CHUNK-001")
async def test_unmerged_chunks_queued_behind_a_write_go_out_in_one_write(acp_wire: Any) -> None:
    chunks: list[AgentText | AgentThought] = [AgentText(f"<{i}>", "m1") for i in range(200)]
    writes = await _behind_a_busy_write(chunks, merge=False)
    for write in writes:
        for message in write:
            acp_wire.check(message)
    # The first chunk was being written; the 199 behind it: one line each, one write.
    assert [len(write) for write in writes] == [1, 199]
    assert [text for write in writes for text in _texts(write)] == [c.text for c in chunks]


@pytest.mark.requirement("CHUNK-001")
async def test_merged_runs_of_one_batch_go_out_in_one_write(acp_wire: Any) -> None:
    chunks: list[AgentText | AgentThought] = [AgentText("first", "m1")]
    chunks += [AgentThought(f"t{i} ", "m1") for i in range(20)]
    chunks += [AgentText(f"a{i} ", "m1") for i in range(20)]
    chunks += [AgentText(f"b{i} ", "m2") for i in range(20)]
    writes = await _behind_a_busy_write(chunks, merge=True)
    for write in writes:
        for message in write:
            acp_wire.check(message)
    assert [len(write) for write in writes] == [1, 3]
    runs = [
        (m["params"]["update"]["sessionUpdate"], m["params"]["update"]["messageId"])
        for m in writes[1]
    ]
    assert runs == [
        ("agent_thought_chunk", "m1"),
        ("agent_message_chunk", "m1"),
        ("agent_message_chunk", "m2"),
    ]
    assert _texts(writes[1]) == [
        "".join(f"t{i} " for i in range(20)),
        "".join(f"a{i} " for i in range(20)),
        "".join(f"b{i} " for i in range(20)),
    ]


@pytest.mark.requirement("CHUNK-001")
async def test_a_lone_surrogate_takes_its_own_write_in_its_place(acp_wire: Any) -> None:
    chunks: list[AgentText | AgentThought] = [AgentText(f"<{i}>", "m1") for i in range(6)]
    chunks.insert(3, AgentText("\ud800", "m1"))
    writes = await _behind_a_busy_write(chunks, merge=False)
    for write in writes:
        for message in write:
            acp_wire.check(message)
    assert [len(write) for write in writes] == [1, 2, 1, 3]
    # Escaped by the general encoder: the same text comes back.
    assert [text for write in writes for text in _texts(write)] == [c.text for c in chunks]
