"""The byte-transport seam and the in-memory pair used by tests and embedders."""

from __future__ import annotations

from typing import Protocol

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream

__all__ = ["MemoryTransport", "Transport", "create_memory_pair"]


class Transport(Protocol):
    """A duplex byte stream.

    Contract: `receive` returns the next non-empty chunk of bytes and raises
    `anyio.EndOfStream` when the peer closed; `send` writes all bytes or raises
    (`anyio.BrokenResourceError` when the peer is gone); `aclose` is idempotent.
    """

    async def receive(self) -> bytes: ...

    async def send(self, data: bytes) -> None: ...

    async def aclose(self) -> None: ...


class MemoryTransport:
    """One end of an in-memory duplex byte pipe (no sockets, no threads)."""

    def __init__(
        self, incoming: ObjectReceiveStream[bytes], outgoing: ObjectSendStream[bytes]
    ) -> None:
        self._incoming = incoming
        self._outgoing = outgoing

    async def receive(self) -> bytes:
        try:
            return await self._incoming.receive()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise anyio.EndOfStream from None

    async def send(self, data: bytes) -> None:
        await self._outgoing.send(data)

    async def send_eof(self) -> None:
        """Closes our sending direction only (the peer sees end of stream)."""
        await self._outgoing.aclose()

    async def aclose(self) -> None:
        await self._outgoing.aclose()
        await self._incoming.aclose()


def create_memory_pair(buffer: float = 1024) -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected transports: bytes sent on one are received on the other."""
    a_send, b_receive = anyio.create_memory_object_stream[bytes](buffer)
    b_send, a_receive = anyio.create_memory_object_stream[bytes](buffer)
    return MemoryTransport(a_receive, a_send), MemoryTransport(b_receive, b_send)
