"""`TurnSink` over JSON-RPC: each turn update becomes one `session/update`, in order.

Text and thought chunks are written behind the turn by a writer task, so the turn keeps
reading the model while a line is on its way; chunks that pile up while the writer is busy
(the editor reads slower than the model streams) are merged into one chunk of the same
message, which an editor shows identically. Every other update (tool calls, a reset chunk)
and every permission prompt first waits until the queued chunks are written, so the order
on the wire is the order of the turn. Leaving `running()` writes everything still queued:
the prompt response always comes after the turn's last update (AGENT-ORDER-001).

The queue (`_chunks.ChunkBuffer`) is bounded (`MAX_QUEUED_CHARS` characters,
`MAX_QUEUED_PIECES` chunks): once that much waits, `send_update` waits for the writer, so
an editor that stops reading stops the turn from reading the model, and the provider's
socket fills instead of our memory (backpressure, ROBUST-BP-001). With `merge=False` (the
`merge_chunks` setting) every chunk is written as its own notification.

Given the connection's `background` task group, the writer runs there: leaving `running()`
then only tells the idle writer to return (a flag and an event) and does not wait for its
task to end, a round trip of the event loop the turn's tail would pay before the response
(TAIL2-001). Without one, the writer runs in a task group of `running()`'s own.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

import anyio
import anyio.abc

from acp_bridge.agent._chunks import ChunkBuffer, ChunkLines, chunk_params, queueable
from acp_bridge.agent._live import LIVE_UPDATES, LiveUpdates
from acp_bridge.agent._translate import permission_options, tool_call_fields, update_model
from acp_bridge.agent._usage_line import UsageLines
from acp_bridge.errors import PeerError, PeerGone
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.turn import (
    AgentText,
    AgentThought,
    PermissionDecision,
    PermissionOption,
    ToolCallShown,
    TurnUpdate,
    UsageReport,
)

if TYPE_CHECKING:
    from acp_bridge import protocol as acp
else:
    from acp_bridge.agent._lazy import acp

__all__ = ["PeerTurnSink", "send_session_update"]

_FLUSH_ON_EXIT = 30.0
_log = logging.getLogger("acp_bridge.agent")


async def send_session_update(
    peer: JsonRpcPeer, session_id: str, update: acp.SessionUpdate
) -> None:
    """Writes one `session/update` notification and returns once it is on the wire."""
    note = acp.SessionNotification(session_id=session_id, update=update)
    await peer.notify("session/update", acp.to_wire(note))


class PeerTurnSink:
    """Sends one turn's updates and permission prompts for one session.

    Use `async with sink.running():` around the turn; outside it every update is written
    synchronously.
    """

    def __init__(
        self,
        peer: JsonRpcPeer,
        session_id: str,
        live: LiveUpdates | None = None,
        *,
        merge: bool = True,
        background: anyio.abc.TaskGroup | None = None,
    ) -> None:
        self._peer = peer
        self._background = background
        self._session_id = session_id
        self._live = live or LiveUpdates("")
        self._buffer = ChunkBuffer(merge=merge)
        self._lines = ChunkLines(session_id)
        self._usage = UsageLines(peer, session_id, self._live)
        self._wake = anyio.Event()
        self._idle = anyio.Event()
        self._idle.set()
        self._writer_running = False
        self._runs = 0  # `running()` calls so far: a writer ends when the next one starts
        self._failure: Exception | None = None

    # -- the writer ----------------------------------------------------------------------

    def running(self) -> contextlib.AbstractAsyncContextManager[PeerTurnSink]:
        """Runs the writer around a turn; on the way out, writes what is still queued.

        The turn's own exception (e.g. `TurnFailed`) leaves unwrapped, as if there were no
        task group here: callers catch it by type.
        """
        if self._background is not None:
            return _Running(self, self._background)
        return self._own_group()

    @contextlib.asynccontextmanager
    async def _own_group(self) -> AsyncIterator[PeerTurnSink]:
        failure: Exception | None = None
        async with anyio.create_task_group() as group:
            try:
                async with _Running(self, group):
                    yield self
            except Exception as exc:  # unwrapped: the task group would wrap it
                failure = exc
        if failure is not None:
            raise failure

    async def _start(self, group: anyio.abc.TaskGroup) -> anyio.CancelScope:
        writer: anyio.CancelScope = await group.start(self._writer)
        try:
            for notice in self._live.take_pending():
                await self.send_update(notice)
        except BaseException:
            await self._stop(writer)
            raise
        return writer

    async def _stop(self, writer: anyio.CancelScope) -> Exception | None:
        """Writes what is queued and tells the writer to return; what stopped the writer
        (e.g. `PeerGone`), if anything did."""
        failure = self._failure
        if self._buffer or not self._idle.is_set():  # chunks still on their way
            with anyio.CancelScope(shield=True), anyio.move_on_after(_FLUSH_ON_EXIT):
                try:
                    await self.flush()
                except Exception as exc:
                    failure = exc
        # Else everything is written (the turn's last update waited for the queue): no
        # shielded wait to set up in the turn's tail (LIVE4-003).
        self._writer_running = False
        if self._idle.is_set() and not self._buffer:
            self._wake.set()  # the idle writer returns: no cancellation (issue 15.2)
        else:
            writer.cancel()  # still writing after _FLUSH_ON_EXIT
        return failure

    async def _writer(self, *, task_status: anyio.abc.TaskStatus[anyio.CancelScope]) -> None:
        self._runs += 1
        run = self._runs
        with anyio.CancelScope() as scope:
            self._writer_running = True
            task_status.started(scope)
            await self._write_queued(run)

    async def _write_queued(self, run: int) -> None:
        try:
            while True:
                await self._wake.wait()
                if not self._writer_running or run != self._runs:
                    return  # its turn is over and everything is written (or the next began)
                self._wake = anyio.Event()
                while self._buffer:
                    await self._write_runs(self._buffer.take_runs())
                self._idle.set()
        except Exception as exc:  # the editor went away: hand the error to the turn
            self._failure = exc
            self._writer_running = False
            self._buffer.take()
            self._idle.set()

    async def flush(self) -> None:
        """Returns once every queued chunk is on the wire.

        Raises what stopped the writer (e.g. `PeerGone`), so nobody waits for a writer
        that is gone.
        """
        while self._buffer or not self._idle.is_set():
            await self._idle.wait()
        if self._failure is not None:
            raise self._failure

    async def _write_runs(
        self, runs: list[tuple[type[AgentText | AgentThought], str, str]]
    ) -> None:
        """Writes the chunks a batch took from the queue, one line each, all the lines in
        one write (one lock and one system call for the batch, merging on or off)."""
        lines: list[bytes] = []
        for kind, message_id, text in runs:
            line = self._lines.line(kind, message_id, text)
            if line is None:  # a lone surrogate: written alone, in its place
                await self._write_lines(lines)
                lines = []
                await self._write_chunk(kind(text, message_id))
            else:
                lines.append(line)
        await self._write_lines(lines)

    async def _write_lines(self, lines: list[bytes]) -> None:
        if len(lines) == 1:
            line = lines[0]
            await self._peer.notify_encoded(line, lambda: ChunkLines.message(line))
        elif lines:
            await self._peer.notify_lines(lines)

    async def _write_chunk(self, chunk: AgentText | AgentThought) -> None:
        line = None
        if not (isinstance(chunk, AgentText) and chunk.reset is not None):
            line = self._lines.line(type(chunk), chunk.message_id, chunk.text)
        if line is None:  # a reset chunk, or a lone surrogate: the general encoder
            await self._peer.notify("session/update", chunk_params(self._session_id, chunk))
        else:
            await self._write_lines([line])

    # -- TurnSink ------------------------------------------------------------------------

    async def send_update(self, update: TurnUpdate) -> None:
        if self._writer_running and queueable(update):
            buffer = self._buffer
            if not buffer.pieces:
                # The first chunk of a batch wakes the writer. While the queue is not
                # empty the writer is awake and drains it before it is idle again, so
                # the chunks behind this one only join the queue (the per-chunk path).
                if self._idle.is_set():
                    self._idle = anyio.Event()
                self._wake.set()
            if buffer.add(update):
                await self.flush()  # backpressure: wait for the editor to read (ROBUST-BP-001)
            return
        await self.flush()
        if isinstance(update, AgentText | AgentThought):
            await self._write_chunk(update)
        elif isinstance(update, UsageReport):
            await self._usage.send(update)
        elif isinstance(update, LIVE_UPDATES):
            live = self._live.wire(update)
            if live is not None and not isinstance(live, dict):  # dicts are usage_updates
                await send_session_update(self._peer, self._session_id, live)
        else:
            await send_session_update(self._peer, self._session_id, update_model(update))

    async def request_permission(
        self, call: ToolCallShown, options: Sequence[PermissionOption]
    ) -> PermissionDecision:
        await self.flush()
        # When the turn is cancelled while we wait, the peer sends $/cancel_request for
        # this request and the cancellation propagates (acp-protocol: cancellation).
        request = acp.RequestPermissionRequest(
            session_id=self._session_id,
            tool_call=tool_call_fields(call),
            options=permission_options(tuple(options)),
        )
        try:
            result = await self._peer.request("session/request_permission", acp.to_wire(request))
            outcome = acp.from_wire(acp.RequestPermissionResponse, result).outcome
        except PeerGone:
            raise
        except (PeerError, ValueError) as error:  # ValueError: pydantic's ValidationError
            # TURN-PERM-001: not allowed, the turn goes on; one line for the log, no traceback.
            reason = _why_not_asked(error)
            _log.warning("could not ask for permission (%s): the call is not run", reason)
            return PermissionDecision(None, unavailable=reason)
        if isinstance(outcome, acp.SelectedPermissionOutcome):
            known = {o.option_id for o in options}
            if outcome.option_id in known:
                return PermissionDecision(outcome.option_id)
            # An option we never offered: treat it as the safest answer, a one-time reject.
            return PermissionDecision(_reject_once(options))
        return PermissionDecision(None)


class _Running:
    """`PeerTurnSink.running()` in a task group that is not its own (no exit stack, no
    generator: it is left in every turn's tail)."""

    __slots__ = ("_group", "_sink", "_writer")

    def __init__(self, sink: PeerTurnSink, group: anyio.abc.TaskGroup) -> None:
        self._sink = sink
        self._group = group

    async def __aenter__(self) -> PeerTurnSink:
        self._writer = await self._sink._start(self._group)
        return self._sink

    async def __aexit__(self, kind: object, error: BaseException | None, tb: object) -> None:
        # The turn's own exception wins over the writer's failure, and leaves as it is.
        failure = await self._sink._stop(self._writer)
        if failure is not None and error is None:
            raise failure


def _why_not_asked(error: PeerError | ValueError) -> str:
    if isinstance(error, PeerError):
        return f"it answered session/request_permission with error {error.code}: {error.message}"
    return "its answer to session/request_permission was not a permission outcome"


def _reject_once(options: Sequence[PermissionOption]) -> str | None:
    for option in options:
        if option.kind.value == "reject_once":
            return option.option_id
    return None
