"""Memory stays bounded under a runaway model and a stalled editor (issue 11.3, spec/robustness.md
"Memory"). Proven structurally, never by timing: the provider's bytes sent stop advancing once
the bridge's queues are full (every task blocked, twice in a row, and the counter unchanged), the
cap ends a call with an error naming the setting, and the structures that hold streamed text
are measured with tracemalloc. The RSS figures come from benchmarks/rss_runaway.py."""

from __future__ import annotations

import json
import socket
import tracemalloc
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from acp_bridge.agent import AgentConfig, serve
from acp_bridge.agent._chunks import MAX_QUEUED_CHARS, MAX_QUEUED_PIECES, ChunkBuffer
from acp_bridge.providers import Finish, FinishReason, TextDelta, TextParts, UserTurn
from acp_bridge.providers.http import HttpProviderOptions, OpenAIProvider, SseDecoder, SseEvent
from acp_bridge.sessions import Owner, SessionRecord, SessionStore, TurnRecorder
from acp_bridge.turn import AgentText, ModelCall, message_id
from acp_bridge.wire import MemoryTransport, create_memory_pair

pytestmark = pytest.mark.anyio

_MIB = 1024 * 1024


def _event(text: str) -> bytes:
    chunk = {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": text}}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def _chunk_text(index: int, size: int) -> str:
    head = f"<{index:07d}>"
    return head + "x" * (size - len(head))


class FloodServer:
    """An OpenAI-compatible server that streams `chunks` text chunks of `size` characters as
    fast as its socket takes them, counting the body bytes it has handed to the kernel."""

    def __init__(self, chunks: int, size: int) -> None:
        self.chunks = chunks
        self.size = size
        self.sent = 0
        self.total = sum(len(self._frame(i)) for i in range(chunks))
        self._tg: anyio.abc.TaskGroup | None = None
        self._listener: anyio.abc.Listener[anyio.abc.SocketStream] | None = None
        self.port = 0
        self.client_port = 0

    def _frame(self, index: int) -> bytes:
        event = _event(_chunk_text(index, self.size))
        return b"%x\r\n%s\r\n" % (len(event), event)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def __aenter__(self) -> FloodServer:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self._listener = listener
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(listener.serve, self._handle)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._tg is not None
        assert self._listener is not None
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)
        await self._listener.aclose()

    def in_kernel(self) -> int:
        """Bytes sent but not yet read by the client: the server socket's unacknowledged
        send queue plus the client socket's receive queue (/proc/net/tcp)."""
        queued = 0
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            local, remote = (int(a.split(":")[1], 16) for a in fields[1:3])
            tx, rx = (int(q, 16) for q in fields[4].split(":"))
            if (local, remote) == (self.port, self.client_port):
                queued += tx
            elif (local, remote) == (self.client_port, self.port):
                queued += rx
        return queued

    async def _handle(self, stream: anyio.abc.SocketStream) -> None:
        raw = stream.extra(anyio.abc.SocketAttribute.raw_socket)
        self.client_port = raw.getpeername()[1]
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
        buffered = BufferedByteReceiveStream(stream)
        head = await buffered.receive_until(b"\r\n\r\n", 65536)
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        await buffered.receive_exactly(length)
        try:
            await stream.send(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
            )
            for index in range(self.chunks):
                frame = self._frame(index)
                await stream.send(frame)
                self.sent += len(frame)
            stop = {
                "id": "c",
                "model": "m",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            }
            tail = b"data: " + json.dumps(stop).encode() + b"\n\ndata: [DONE]\n\n"
            await stream.send(b"%x\r\n%s\r\n0\r\n\r\n" % (len(tail), tail))
            while await stream.receive():  # until the client hangs up
                pass
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream):
            pass
        finally:
            await stream.aclose()


class LineEditor:
    """The editor's end of the pipe: writes requests, reads lines only when asked to."""

    def __init__(self, transport: MemoryTransport, validator: Any) -> None:
        self._transport = transport
        self._validator = validator
        self._buffer = b""
        self._lines: list[bytes] = []

    async def send(self, message: dict[str, Any]) -> None:
        self._validator.note_client_message(message)
        await self._transport.send(json.dumps(message).encode() + b"\n")

    async def receive(self) -> dict[str, Any]:
        while not self._lines:
            *lines, self._buffer = (self._buffer + await self._transport.receive()).split(b"\n")
            self._lines.extend(lines)
        message: dict[str, Any] = json.loads(self._lines.pop(0))
        self._validator.check(message)
        return message

    async def response(self, request_id: int, texts: list[str] | None = None) -> dict[str, Any]:
        """Reads until the response to `request_id`; chunk texts on the way go to `texts`."""
        while True:
            message = await self.receive()
            if message.get("method") == "session/update" and texts is not None:
                update = message["params"]["update"]
                if update["sessionUpdate"] == "agent_message_chunk":
                    texts.append(update["content"]["text"])
            elif message.get("id") == request_id and "method" not in message:
                return message

    async def open_session(self, cwd: Path) -> str:
        await self.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": 1, "clientCapabilities": {}},
            }
        )
        await self.response(1)
        await self.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/new",
                "params": {"cwd": str(cwd), "mcpServers": []},
            }
        )
        session: str = (await self.response(2))["result"]["sessionId"]
        return session

    async def prompt(self, request_id: int, session: str, text: str) -> None:
        await self.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "session/prompt",
                "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]},
            }
        )


async def _quiescent(flood: FloodServer) -> int:
    """The server's bytes sent once nothing can move: every task blocked, twice in a row
    (a readiness the loop had not yet polled the first time would wake a task by the
    second), with the counter unchanged in between."""
    last = -1
    while True:
        await anyio.wait_all_tasks_blocked()
        if flood.sent == last:
            return last
        last = flood.sent


@pytest.mark.requirement("MEM-003")
async def test_an_editor_that_stops_reading_stops_the_provider_socket(
    tmp_path: Path, acp_wire: Any
) -> None:
    # 8 MiB of text in 64 KiB chunks: far more than the queues and the socket buffers hold.
    flood = FloodServer(chunks=128, size=64 * 1024)
    agent_side, editor_side = create_memory_pair(buffer=0)  # a pipe with no slack
    editor = LineEditor(editor_side, acp_wire)
    with anyio.fail_after(120):
        async with flood:
            options = HttpProviderOptions("m", base_url=flood.base_url)
            async with OpenAIProvider(options) as model, anyio.create_task_group() as tg:
                config = AgentConfig(provider=model, models=("m",), state_dir=tmp_path / "s")
                tg.start_soon(serve, agent_side, config)
                session = await editor.open_session(tmp_path)
                await editor.prompt(3, session, "flood")
                # The editor reads nothing from here on.
                stalled_at = await _quiescent(flood)
                read_by_bridge = stalled_at - flood.in_kernel()
                frame = flood.total // flood.chunks
                # The chunk queue, the line being written and the SSE decoder's event.
                queued = (2 * (MAX_QUEUED_CHARS // flood.size + 1) + 1) * frame
                assert stalled_at < flood.total, "the server sent everything: no backpressure"
                assert read_by_bridge <= queued + 256 * 1024, (read_by_bridge, queued)
                # The editor reads again: every chunk arrives, in order, then the response.
                texts: list[str] = []
                response = await editor.response(3, texts)
                assert response["result"]["stopReason"] == "end_turn"
                assert flood.sent == flood.total
                shown = "".join(texts)
                assert len(shown) == flood.chunks * flood.size
                assert shown == "".join(_chunk_text(i, flood.size) for i in range(flood.chunks))
                tg.cancel_scope.cancel()
    await agent_side.aclose()
    await editor_side.aclose()


@pytest.mark.requirement("MEM-001")
async def test_a_runaway_model_call_ends_at_the_cap_with_an_error_naming_it(
    tmp_path: Path, acp_wire: Any
) -> None:
    cap = 256 * 1024
    flood = FloodServer(chunks=4096, size=1024)  # 4 MiB offered, 256 KiB allowed
    agent_side, editor_side = create_memory_pair()
    editor = LineEditor(editor_side, acp_wire)
    with anyio.fail_after(120):
        async with flood:
            options = HttpProviderOptions("m", base_url=flood.base_url, max_output_bytes=cap)
            async with OpenAIProvider(options) as model, anyio.create_task_group() as tg:
                config = AgentConfig(provider=model, models=("m",), state_dir=tmp_path / "s")
                tg.start_soon(serve, agent_side, config)
                session = await editor.open_session(tmp_path)
                await editor.prompt(3, session, "flood")
                texts: list[str] = []
                response = await editor.response(3, texts)
                error = response["error"]
                assert error["code"] == -32603
                assert error["data"]["reason"] == "provider_error"
                message = error["message"]
                assert f"max_output_bytes ({cap} bytes)" in message
                assert "ACP_BRIDGE_MAX_OUTPUT_BYTES" in message
                assert "config key max_output_bytes" in message
                assert len("".join(texts)) <= cap  # nothing past the cap was shown
                # Final, not retried: the server saw one request; the bridge keeps serving.
                await editor.send(
                    {"jsonrpc": "2.0", "id": 4, "method": "session/list", "params": {}}
                )
                assert "result" in await editor.response(4)
                tg.cancel_scope.cancel()
    await agent_side.aclose()
    await editor_side.aclose()


def _traced(build: Any) -> tuple[Any, int]:
    """What `build()` returns and the bytes of Python memory it still holds afterwards."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = build()
        return kept, tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


_DELTAS = 20_000
_DELTA = "tok "  # a model's usual delta: a few characters


@pytest.mark.requirement("MEM-002")
def test_text_parts_hold_a_million_deltas_as_their_characters() -> None:
    def build() -> TextParts:
        parts = TextParts()
        for _ in range(_DELTAS):
            parts.append(_DELTA[:-1] + " ")  # a fresh string per delta, as a decoder makes
        return parts

    parts, held = _traced(build)
    chars = _DELTAS * len(_DELTA)
    assert parts.size == chars
    # A list of the pieces would hold ~60 bytes per 4-character piece (15x the text).
    assert held <= 2 * chars, held
    assert parts.objects <= _DELTAS // 256 + 256
    assert parts.text() == _DELTA * _DELTAS
    assert parts.objects == 1


@pytest.mark.requirement("MEM-002")
def test_an_attempt_holds_its_reply_as_its_characters() -> None:
    def build() -> ModelCall:
        call = ModelCall(1)
        call.start_attempt()
        for _ in range(_DELTAS):
            call.feed(TextDelta(_DELTA[:-1] + " "))
        return call

    call, held = _traced(build)
    chars = _DELTAS * len(_DELTA)
    assert held <= 2 * chars, held
    call.feed(Finish(FinishReason.STOP))
    assert call.current.to_assistant_turn().text == _DELTA * _DELTAS


@pytest.mark.requirement("MEM-002")
async def test_the_turn_recorder_holds_a_reply_as_its_characters() -> None:
    store = SessionStore.in_memory()
    owner = Owner()
    store.create(SessionRecord("s1", "/w", (), "ask", "m", None, 1.0, 1.0), owner)
    begun = store.begin_turn("s1", owner, [{"type": "text", "text": "hi"}], UserTurn(("hi",)))

    class Discard:
        async def send_update(self, update: object) -> None:
            return None

    recorder = TurnRecorder(store, "s1", begun, Discard())  # type: ignore[arg-type]
    mid = message_id(begun.id_prefix, 1, 1)
    chunks = [AgentText(_DELTA[:-1] + " ", mid) for _ in range(_DELTAS)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for chunk in chunks:
            await recorder.send_update(chunk)
        chunks.clear()  # what remains is what the recorder holds
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held <= 2 * _DELTAS * len(_DELTA), held


@pytest.mark.requirement("MEM-004")
def test_the_chunk_queue_is_bounded_by_characters_and_by_chunks() -> None:
    for merge in (True, False):
        queue = ChunkBuffer(merge=merge)
        added = 0
        while not queue.full:
            queue.add(AgentText("ab", "m1"))
            added += 1
        assert added == MAX_QUEUED_PIECES  # tiny chunks: the chunk count bounds the queue
        taken = queue.take()
        assert len(taken) == (1 if merge else MAX_QUEUED_PIECES)
        assert "".join(c.text for c in taken) == "ab" * MAX_QUEUED_PIECES
        assert not queue
        assert not queue.full
        big = ChunkBuffer(merge=merge)
        big.add(AgentText("y" * MAX_QUEUED_CHARS, "m1"))
        assert big.full  # large chunks: the character count does


@pytest.mark.requirement("MEM-005")
def test_an_event_larger_than_any_read_is_held_as_a_few_copies_of_itself() -> None:
    line = b"data: " + json.dumps({"text": "z" * (4 * _MIB)}).encode()
    pieces = [line[i : i + 4096] for i in range(0, len(line), 4096)]

    def build() -> list[object]:
        decoder = SseDecoder()
        items: list[object] = []
        for piece in pieces:
            items += decoder.feed(piece)
        assert not items  # no line end yet: nothing dispatched
        items += decoder.feed(b"\r\n\r\n")
        return items

    tracemalloc.start()
    try:
        items = build()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(items) == 1
    assert isinstance(items[0], SseEvent)
    assert json.loads(items[0].data) == {"text": "z" * (4 * _MIB)}
    # The held pieces, their join and the decoded event: a few copies of the line, whatever
    # the number of reads; the line itself is bounded by max_output_bytes (MEM-001).
    assert peak <= 6 * len(line), peak
