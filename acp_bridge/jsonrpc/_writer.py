"""The peer's outgoing side: messages encoded and written whole, one at a time, in the order
they were queued; a peer that stopped reading ends the connection.

A message holding a big string (a 10 MB file's diff, a file written through the editor) is
written in pieces (`wire.encode_pieces`), so its whole line never exists at once (issue 15
item 5): the write lock is held from the first piece to the newline, so no other message
lands inside the line, and once the first piece is out the rest is shielded from
cancellation, so a cancelled writer never leaves half a line on the wire. Each piece waits
for the transport, which keeps the backpressure of a reader that is slow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import NoReturn

import anyio

from acp_bridge._json import JsonObject
from acp_bridge.errors import PeerGone
from acp_bridge.jsonrpc._handler import Tracer, traced
from acp_bridge.wire import Transport, encode, encode_pieces, loads, streamable

__all__ = ["LineWriter"]


class LineWriter:
    """Serialises writes to a transport; `on_gone` runs once the peer stopped reading."""

    def __init__(
        self, transport: Transport, trace: Tracer | None, on_gone: Callable[[], None]
    ) -> None:
        self._transport = transport
        self._trace = trace
        self._on_gone = on_gone
        self._lock = anyio.Lock(fast_acquire=True)  # per-message hot path

    async def send(self, message: JsonObject) -> None:
        if streamable(message):
            traced(self._trace, "out", message)
            await self._write_pieces(encode_pieces(message))
            return
        data = encode(message)
        traced(self._trace, "out", message)
        await self.write(data)

    async def send_encoded(self, line: bytes, message: Callable[[], JsonObject]) -> None:
        """Writes a message the caller encoded itself (`line` is `encode(message())`)."""
        if self._trace is not None:
            traced(self._trace, "out", message())
        await self.write(line)

    async def send_lines(self, lines: Sequence[bytes]) -> None:
        """Writes messages the caller encoded itself (each line one `encode(message)`), in
        one write."""
        if self._trace is not None:
            for line in lines:
                traced(self._trace, "out", loads(line.decode()))
        await self.write(b"".join(lines))

    async def write(self, data: bytes) -> None:
        async with self._lock:
            try:
                await self._transport.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._gone()

    async def _write_pieces(self, pieces: Iterator[bytes]) -> None:
        async with self._lock:
            try:
                await self._transport.send(next(pieces))  # cancellable: nothing written yet
                with anyio.CancelScope(shield=True):
                    for piece in pieces:
                        await self._transport.send(piece)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._gone()

    def _gone(self) -> NoReturn:
        # The editor stopped reading: nothing more can be delivered.
        self._on_gone()
        raise PeerGone("the editor stopped reading") from None
