"""The peer's outgoing side: messages encoded and written whole, one at a time, in the order
they were queued; a peer that stopped reading ends the connection.

A message holding a big string (a 10 MB file's diff, a file written through the editor) is
written in pieces (`wire.encode_pieces`), so its whole line never exists at once (issue 15
item 5): the write lock is held from the first piece to the newline, so no other message
lands inside the line, and once the first piece is out the rest is shielded from
cancellation, so a cancelled writer never leaves half a line on the wire. Each piece waits
for the transport, which keeps the backpressure of a reader that is slow.

A message may also be held (`hold`): encoded now, it goes out in the same write as the next
message, just before it, so the order of messages is the order they were given in and the
reader is woken once for both (a turn's last usage_update rides with its response, issue
15.2). Whoever holds one makes sure a message follows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from json.encoder import encode_basestring
from typing import NoReturn

import anyio

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.errors import PeerGone
from acp_bridge.jsonrpc._envelope import RequestId
from acp_bridge.jsonrpc._handler import EncodedResult, Tracer, traced
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
        self._held: list[bytes] = []

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

    async def send_response(self, request_id: RequestId, result: JsonValue | EncodedResult) -> None:
        """Writes the response of `request_id`; a result its handler encoded itself is not
        encoded nor scanned: the line is `encode` of the response, put together around it."""
        if not isinstance(result, EncodedResult):
            await self.send({"jsonrpc": "2.0", "id": request_id, "result": result})
            return
        try:
            key = str(request_id) if isinstance(request_id, int) else encode_basestring(request_id)
            line = f'{{"jsonrpc":"2.0","id":{key},"result":{result.text}}}\n'.encode()
        except UnicodeEncodeError:  # a lone surrogate: the generic encoder escapes the line
            await self.send({"jsonrpc": "2.0", "id": request_id, "result": result.value()})
            return
        if self._trace is not None:
            traced(
                self._trace, "out", {"jsonrpc": "2.0", "id": request_id, "result": result.value()}
            )
        lock = self._lock
        try:
            # Free (the common case): taken without a checkpoint, since a response that is
            # due is written even if the request was cancelled meanwhile (REPLY4-004).
            lock.acquire_nowait()
        except anyio.WouldBlock:
            await lock.acquire()
        try:
            await self._send(line)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._gone()
        finally:
            lock.release()

    def hold(self, line: bytes, message: Callable[[], JsonObject]) -> None:
        """Keeps a message the caller encoded itself (`line` is `encode(message())`) for the
        next write, which writes it first: still before every message given after it."""
        if self._trace is not None:
            traced(self._trace, "out", message())
        self._held.append(line)

    async def _send(self, data: bytes) -> None:
        """The transport's send of `data` behind the held lines (the write lock is ours);
        a send cancelled before it wrote anything keeps them held."""
        held = self._held
        if not held:
            await self._transport.send(data)
            return
        self._held = []
        try:
            await self._transport.send(b"".join((*held, data)))
        except anyio.get_cancelled_exc_class():
            self._held[:0] = held
            raise

    async def write(self, data: bytes) -> None:
        async with self._lock:
            try:
                await self._send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._gone()

    async def _write_pieces(self, pieces: Iterator[bytes]) -> None:
        async with self._lock:
            try:
                await self._send(next(pieces))  # cancellable: nothing written yet
                with anyio.CancelScope(shield=True):
                    for piece in pieces:
                        await self._transport.send(piece)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._gone()

    def _gone(self) -> NoReturn:
        # The editor stopped reading: nothing more can be delivered.
        self._on_gone()
        raise PeerGone("the editor stopped reading") from None
