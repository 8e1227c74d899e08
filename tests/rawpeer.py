"""A test-side peer that speaks raw NDJSON over a memory transport (no project JSON-RPC code).

It is deliberately independent of `acp_bridge.jsonrpc`, so tests see exactly the bytes the
bridge writes. Every wait is bounded.
"""

from __future__ import annotations

import json
from typing import Any

import anyio

from acp_bridge.wire import MemoryTransport

WAIT = 5.0


class RawPeer:
    """Writes lines, reads lines, and keeps every decoded message it received."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport
        self.received: list[dict[str, Any]] = []
        self.raw_lines: list[bytes] = []
        self._buffer = b""
        self._next_id = 0

    async def send_bytes(self, data: bytes) -> None:
        await self.transport.send(data)

    async def send(self, message: dict[str, Any]) -> None:
        await self.transport.send(json.dumps(message).encode() + b"\n")

    async def request(self, method: str, params: Any = None, *, id: Any = None) -> Any:
        """Sends a request and returns its id."""
        if id is None:
            self._next_id += 1
            id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return id

    async def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def receive(self) -> dict[str, Any]:
        """The next message the bridge wrote."""
        with anyio.fail_after(WAIT):
            while b"\n" not in self._buffer:
                self._buffer += await self.transport.receive()
        line, self._buffer = self._buffer.split(b"\n", 1)
        self.raw_lines.append(line + b"\n")
        message: dict[str, Any] = json.loads(line)
        self.received.append(message)
        return message

    async def response(self, request_id: Any) -> dict[str, Any]:
        """Reads until the response to `request_id`; other messages are kept in `received`."""
        while True:
            message = await self.receive()
            if "method" not in message and message.get("id") == request_id:
                return message

    async def call(self, method: str, params: Any = None) -> dict[str, Any]:
        return await self.response(await self.request(method, params))


class MemoryLink:
    """Both ends of an in-memory pair, closed together (no unclosed-stream warnings)."""

    def __init__(self) -> None:
        from acp_bridge.wire import create_memory_pair

        self.agent_side, self.client_side = create_memory_pair()

    async def __aenter__(self) -> MemoryLink:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.agent_side.aclose()
        await self.client_side.aclose()
