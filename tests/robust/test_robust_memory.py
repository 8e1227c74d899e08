"""Bounded memory: one model call's output is capped, and an editor that stops reading stops
the turn from reading the model (issue 11.3). Boundedness is asserted structurally (the cap's
error, the queue's size while the editor does not read), never by timing; the RSS figures are
measured by benchmarks/rss_runaway.py."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from loopback_http import LoopbackServer, Reply, Send, WaitFor, drain, sse

from acp_bridge.agent._chunks import MAX_QUEUED_CHARS
from acp_bridge.agent._sink import PeerTurnSink
from acp_bridge.providers import FaultKind, ModelRequest, UserTurn
from acp_bridge.providers.http import HttpProviderOptions, OpenAIProvider
from acp_bridge.turn import AgentText

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(model="", messages=[UserTurn(("hi",))])


def _text_chunk(text: str) -> str:
    return sse({"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": text}}]})


@pytest.mark.requirement("ROBUST-OUT-001")
async def test_a_never_ending_stream_is_stopped_at_max_output_bytes() -> None:
    never = anyio.Event()  # the server would stream on forever: it never finishes
    steps: list[Any] = [Send(_text_chunk("x" * 1000)) for _ in range(200)]
    reply = Reply(steps=(*steps, WaitFor(never)))
    async with LoopbackServer([reply]) as server:
        options = HttpProviderOptions(
            "m", base_url=f"{server.base_url}/v1", max_output_bytes=32 * 1024
        )
        async with OpenAIProvider(options) as model:
            with anyio.fail_after(30):
                events, error = await drain(model.stream(REQUEST))
        never.set()
    assert error is not None
    assert (error.kind, error.retryable) == (FaultKind.PROVIDER_ERROR, False)
    assert "max_output_bytes (32768 bytes)" in error.message
    assert "ACP_BRIDGE_MAX_OUTPUT_BYTES" in error.message
    text = sum(len(getattr(e, "text", "")) for e in events)
    assert text <= 32 * 1024  # nothing past the cap was handed on


class _StalledEditor:
    """A peer whose editor stopped reading: every write blocks until `resume` is set."""

    def __init__(self) -> None:
        self.resume = anyio.Event()
        self.written = 0

    async def notify(self, method: str, params: Any) -> None:
        await self.resume.wait()
        self.written += len(params["update"]["content"]["text"])

    async def notify_encoded(self, line: bytes, message: Any) -> None:
        await self.notify("session/update", message()["params"])

    async def notify_lines(self, lines: list[bytes]) -> None:
        for line in lines:
            await self.notify("session/update", json.loads(line)["params"])


@pytest.mark.requirement("ROBUST-BP-001")
async def test_an_editor_that_stops_reading_stops_the_turn_at_a_bounded_queue() -> None:
    editor = _StalledEditor()
    sink = PeerTurnSink(editor, "s")  # type: ignore[arg-type]
    chunk, total = "y" * 1000, 5000  # 5 M characters offered, 1 M may wait
    produced = 0

    async def turn() -> None:
        nonlocal produced
        async with sink.running():
            for _ in range(total):
                await sink.send_update(AgentText(chunk, "m1"))
                produced += 1

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(turn)
            await (
                anyio.wait_all_tasks_blocked()
            )  # the writer waits for the editor; so must the turn
            queued = sink._buffer.size
            assert produced < total, "the turn kept reading while the editor did not"
            assert queued <= MAX_QUEUED_CHARS + len(chunk) * 2
            editor.resume.set()  # the editor reads again: everything arrives, in order
    assert editor.written == total * len(chunk)
