"""`JsonRpcPeer.notify_lines`: notifications the caller encoded, many in one write (PERF-LOAD-003).

A `session/load` replay writes a page's lines at once: the transport gets one `send` with
every line, in order, and the tracer (`--trace`) still sees each message on its own.
"""

from __future__ import annotations

from typing import Any

import pytest

from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.wire import encode

pytestmark = [pytest.mark.anyio, pytest.mark.requirement("PERF-LOAD-003")]


class RecordingTransport:
    """Keeps what is sent; never receives."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    async def receive(self) -> bytes:
        raise AssertionError("not read in this test")

    async def send(self, data: bytes) -> None:
        self.sent.append(data)

    async def aclose(self) -> None:
        pass


async def test_the_lines_go_out_in_one_write_and_are_traced_one_by_one() -> None:
    messages = [
        {"jsonrpc": "2.0", "method": "session/update", "params": {"n": n, "text": "é\n"}}
        for n in range(3)
    ]
    traced: list[tuple[str, Any]] = []
    transport = RecordingTransport()
    peer = JsonRpcPeer(transport, trace=lambda direction, m: traced.append((direction, m)))
    await peer.notify_lines([encode(m) for m in messages])
    assert transport.sent == [b"".join(encode(m) for m in messages)]
    assert traced == [("out", m) for m in messages]
