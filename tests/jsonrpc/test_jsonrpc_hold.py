"""`JsonRpcPeer.notify_with_next`: a notification written with the next message (TAIL-001).

A turn's last usage_update goes out with its response: the editor is woken once for the
turn's end (issue 15.2). The held line is still written before every message given after it,
in one transport `send` with the next one; the tracer sees it when it is given; and a write
cancelled before it wrote anything keeps it for the write after.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.wire import encode

pytestmark = [pytest.mark.anyio, pytest.mark.requirement("TAIL-001")]


class RecordingTransport:
    """Keeps what is sent; `blocked` makes a send wait (cancellably) until set, `entered`
    set once a send waits."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.blocked: anyio.Event | None = None
        self.entered = anyio.Event()

    async def receive(self) -> bytes:
        raise AssertionError("not read in this test")

    async def send(self, data: bytes) -> None:
        if self.blocked is not None:
            self.entered.set()
            await self.blocked.wait()  # cancelled here: nothing was written
        self.sent.append(data)

    async def aclose(self) -> None:
        pass


def _update(n: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"n": n}}


async def test_a_held_notification_goes_out_first_in_the_next_write() -> None:
    traced: list[tuple[str, Any]] = []
    transport = RecordingTransport()
    peer = JsonRpcPeer(transport, trace=lambda direction, m: traced.append((direction, m)))
    peer.notify_with_next("session/update", {"n": 1})
    peer.notify_with_next("session/update", {"n": 2})
    assert transport.sent == []  # held, not written
    await peer.notify("session/update", {"n": 3})
    await peer.notify("session/update", {"n": 4})
    assert transport.sent == [
        encode(_update(1)) + encode(_update(2)) + encode(_update(3)),
        encode(_update(4)),
    ]
    assert traced == [("out", _update(n)) for n in (1, 2, 3, 4)]


async def test_a_held_notification_rides_with_a_line_of_pieces_and_with_lines() -> None:
    transport = RecordingTransport()
    peer = JsonRpcPeer(transport)
    big = "x" * 300_000  # written in pieces (PERF-BIG-004)
    peer.notify_with_next("session/update", {"n": 1})
    await peer.notify("session/update", {"text": big})
    assert transport.sent[0].startswith(encode(_update(1)) + b'{"jsonrpc"')
    whole = encode({"jsonrpc": "2.0", "method": "session/update", "params": {"text": big}})
    assert b"".join(transport.sent) == encode(_update(1)) + whole
    transport.sent.clear()
    peer.notify_with_next("session/update", {"n": 2})
    await peer.notify_lines([encode(_update(3))])
    assert transport.sent == [encode(_update(2)) + encode(_update(3))]


async def test_a_write_cancelled_before_it_wrote_keeps_the_held_line() -> None:
    transport = RecordingTransport()
    peer = JsonRpcPeer(transport)
    peer.notify_with_next("session/update", {"n": 1})
    transport.blocked = anyio.Event()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.notify, "session/update", {"n": 2})
            await transport.entered.wait()
            tg.cancel_scope.cancel()  # the send is waiting: cancelled before it wrote
        assert transport.sent == []
        transport.blocked.set()
        await peer.notify("session/update", {"n": 3})
    assert transport.sent == [encode(_update(1)) + encode(_update(3))]
