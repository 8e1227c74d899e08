"""A big message goes out as one line in pieces, whole and alone (PERF-BIG-004).

Over an in-memory pair with no buffer (every piece waits for the reader: backpressure): the
transport never gets the whole line at once, another message sent meanwhile lands before or
after the line and never inside it, and a writer cancelled after its first piece still
finishes the line, so the reader never sees half of one.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.wire import PIECE_CHARS, MemoryTransport, create_memory_pair

pytestmark = pytest.mark.anyio

TEXT = "an ordinary line of a big file\n" * 100_000  # 3.1 MB


@contextlib.asynccontextmanager
async def _pair() -> AsyncIterator[tuple[JsonRpcPeer, MemoryTransport]]:
    ours, theirs = create_memory_pair(buffer=0)
    try:
        yield JsonRpcPeer(ours), theirs
    finally:
        await ours.aclose()
        await theirs.aclose()


async def _send_big(peer: JsonRpcPeer, scope: anyio.CancelScope) -> None:
    with scope:
        await peer.notify("big", {"text": TEXT})


async def _read_lines(reader: MemoryTransport, count: int, chunks: list[bytes]) -> list[bytes]:
    data = b"".join(chunks)  # what was read already
    with anyio.fail_after(60):
        while data.count(b"\n") < count:
            chunk = await reader.receive()
            chunks.append(chunk)
            data += chunk
    return data.split(b"\n")[:count]


@pytest.mark.requirement("PERF-BIG-004")
async def test_a_big_line_is_written_in_pieces_and_nothing_lands_inside_it() -> None:
    chunks: list[bytes] = []
    lines: list[bytes] = []
    async with _pair() as (peer, theirs), anyio.create_task_group() as tg:

        async def read() -> None:
            lines.extend(await _read_lines(theirs, 21, chunks))

        tg.start_soon(read)
        tg.start_soon(peer.notify, "big", {"text": TEXT})
        for n in range(20):  # queued while the big line is being written
            tg.start_soon(peer.notify, "small", {"n": n})
    messages: list[dict[str, Any]] = [json.loads(line) for line in lines]
    (big,) = [m for m in messages if m["method"] == "big"]
    assert big == {"jsonrpc": "2.0", "method": "big", "params": {"text": TEXT}}
    assert sorted(m["params"]["n"] for m in messages if m["method"] == "small") == list(range(20))
    assert len(chunks) > 10  # the line came in pieces...
    assert max(len(chunk) for chunk in chunks) <= 8 * PIECE_CHARS  # ...none of them whole


@pytest.mark.requirement("PERF-BIG-004")
async def test_a_writer_cancelled_after_its_first_piece_finishes_the_line() -> None:
    chunks: list[bytes] = []
    async with _pair() as (peer, theirs):
        async with anyio.create_task_group() as tg:
            scope = anyio.CancelScope()
            tg.start_soon(_send_big, peer, scope)
            chunks.append(await theirs.receive())  # the first piece is out
            scope.cancel()
            (line,) = await _read_lines(theirs, 1, chunks)
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.notify, "after", {})
            (after,) = await _read_lines(theirs, 1, [])
    assert json.loads(line)["params"]["text"] == TEXT
    assert json.loads(after)["method"] == "after"


@pytest.mark.requirement("PERF-BIG-004")
async def test_a_writer_cancelled_before_its_first_piece_writes_nothing() -> None:
    async with _pair() as (peer, theirs):
        async with anyio.create_task_group() as tg:
            scope = anyio.CancelScope()
            tg.start_soon(_send_big, peer, scope)
            await anyio.wait_all_tasks_blocked()  # nobody reads: the first piece waits
            scope.cancel()
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.notify, "after", {})
            (line,) = await _read_lines(theirs, 1, [])
    assert json.loads(line) == {"jsonrpc": "2.0", "method": "after", "params": {}}
