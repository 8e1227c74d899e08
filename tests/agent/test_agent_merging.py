"""Chunk merging behind a busy editor (THRU-002..004): how many lines N chunks become, in
which order, with no text lost, and a retry's reset flag kept on its own first chunk.

The editor here is a recording peer whose writes block until the test lets them through,
so "the writer is busy" is a fact of the test, not of timing. Every line it records is
checked against the official ACP schema.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from acp_bridge.agent._sink import PeerTurnSink
from acp_bridge.turn import AgentText, AgentThought, ResetMarker, TurnUpdate
from acp_bridge.wire import encode

pytestmark = pytest.mark.anyio

SESSION = "sess_merge"


class _BusyEditor:
    """Records every notification; a write blocks while `gate` is closed (the editor is
    not reading), and `started` tells the test that a write is waiting there. After
    writing a reset chunk it stops reading again (a fresh `gate` and `started`)."""

    def __init__(self, wire: Any) -> None:
        self.updates: list[dict[str, Any]] = []
        self.gate = anyio.Event()
        self.started = anyio.Event()
        self._wire = wire

    async def notify(self, method: str, params: Any) -> None:
        await self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def notify_encoded(self, line: bytes, message: Callable[[], dict[str, Any]]) -> None:
        assert line == encode(message())  # the template line is the general encoder's
        await self._write(json.loads(line))

    async def notify_lines(self, lines: list[bytes]) -> None:
        for line in lines:  # one write of several lines, each one notification
            await self._write(json.loads(line))

    async def _write(self, message: dict[str, Any]) -> None:
        self._wire.check(message)
        self.started.set()
        await self.gate.wait()
        update = message["params"]["update"]
        self.updates.append(update)
        if update.get("_meta", {}).get("reset"):
            self.gate, self.started = anyio.Event(), anyio.Event()


def _is_reset(update: TurnUpdate) -> bool:
    return isinstance(update, AgentText) and update.reset is not None


async def _stream_behind_busy_editor(
    acp_wire: Any, updates: list[TurnUpdate], *, merge: bool
) -> list[dict[str, Any]]:
    """Sends `updates[0]`, waits until its line is being written (and blocked), sends the
    rest, then lets the editor read: what the editor got, update by update. A reset chunk
    waits for the queue to be written, so the editor reads before it, and stops reading
    again after it: the chunks after it also queue behind a blocked write."""
    editor = _BusyEditor(acp_wire)
    sink = PeerTurnSink(editor, SESSION, merge=merge)  # type: ignore[arg-type]
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:

            async def turn() -> None:
                async with sink.running():
                    wait_for_write = True
                    for update in updates:
                        if _is_reset(update):
                            editor.gate.set()
                            await sink.send_update(update)
                            wait_for_write = True
                            continue
                        await sink.send_update(update)
                        if wait_for_write:
                            await editor.started.wait()
                            wait_for_write = False
                    editor.gate.set()

            tg.start_soon(turn)
    return editor.updates


def _text(update: dict[str, Any]) -> str:
    text: str = update["content"]["text"]
    return text


@pytest.mark.requirement("THRU-002")
async def test_chunks_behind_a_busy_editor_go_out_as_one_line(acp_wire: Any) -> None:
    chunks = [AgentText(f"<{i}>", "m1") for i in range(1000)]
    got = await _stream_behind_busy_editor(acp_wire, list(chunks), merge=True)
    # The first chunk was on its way; the 999 queued behind it became one chunk.
    assert [len(_text(u)) for u in got] == [3, sum(len(c.text) for c in chunks[1:])]
    assert "".join(_text(u) for u in got) == "".join(c.text for c in chunks)
    assert {u["messageId"] for u in got} == {"m1"}
    assert all(u["sessionUpdate"] == "agent_message_chunk" for u in got)


@pytest.mark.requirement("THRU-002")
async def test_merging_off_writes_one_line_per_chunk(acp_wire: Any) -> None:
    chunks = [AgentText(f"<{i}>", "m1") for i in range(300)]
    got = await _stream_behind_busy_editor(acp_wire, list(chunks), merge=False)
    assert [_text(u) for u in got] == [c.text for c in chunks]


@pytest.mark.requirement("THRU-003")
async def test_merged_lines_keep_order_kind_and_message(acp_wire: Any) -> None:
    updates: list[TurnUpdate] = [AgentText("start ", "m1")]
    updates += [AgentThought(f"t{i} ", "m1") for i in range(50)]
    updates += [AgentText(f"a{i} ", "m1") for i in range(50)]
    updates += [AgentText(f"b{i} ", "m2") for i in range(50)]
    updates += [AgentThought("last", "m2")]
    got = await _stream_behind_busy_editor(acp_wire, updates, merge=True)
    runs = [(u["sessionUpdate"], u["messageId"]) for u in got]
    assert runs == [
        ("agent_message_chunk", "m1"),
        ("agent_thought_chunk", "m1"),
        ("agent_message_chunk", "m1"),
        ("agent_message_chunk", "m2"),
        ("agent_thought_chunk", "m2"),
    ]
    texts = [_text(u) for u in got]
    assert texts[1] == "".join(f"t{i} " for i in range(50))
    assert texts[2] == "".join(f"a{i} " for i in range(50))
    assert texts[3] == "".join(f"b{i} " for i in range(50))
    assert texts[4] == "last"


@pytest.mark.requirement("THRU-004")
@pytest.mark.parametrize("merge", [True, False], ids=["merging-on", "merging-off"])
async def test_a_retry_reset_flag_stays_on_the_first_chunk_of_its_attempt(
    acp_wire: Any, merge: bool
) -> None:
    first = [AgentText(f"old{i} ", "m1-a1") for i in range(40)]
    reset = AgentText("new0 ", "m1-a2", ResetMarker(2, "stream_interrupted"))
    second = [AgentText(f"new{i} ", "m1-a2") for i in range(1, 40)]
    got = await _stream_behind_busy_editor(acp_wire, [*first, reset, *second], merge=merge)

    flagged = [i for i, u in enumerate(got) if u.get("_meta", {}).get("reset")]
    assert len(flagged) == 1
    (at,) = flagged
    # Nothing of the abandoned attempt is merged into or after the flagged chunk, and the
    # flagged chunk is exactly the retry's first chunk (it is never merged with others).
    assert {u["messageId"] for u in got[:at]} == {"m1-a1"}
    assert "".join(_text(u) for u in got[:at]) == "".join(c.text for c in first)
    assert got[at]["messageId"] == "m1-a2"
    assert _text(got[at]) == "new0 "
    assert got[at]["_meta"] == {"reset": True, "attempt": 2, "reason": "stream_interrupted"}
    assert {u["messageId"] for u in got[at + 1 :]} == {"m1-a2"}
    assert not any("_meta" in u for u in got[at + 1 :])
    assert "".join(_text(u) for u in got[at + 1 :]) == "".join(c.text for c in second)
    if merge:
        assert len(got) < len(first) + 1 + len(second)
    else:
        assert len(got) == len(first) + 1 + len(second)
