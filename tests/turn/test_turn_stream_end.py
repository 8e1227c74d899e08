"""A completed attempt's stream is closed after the turn, not inside it (TAIL4-STREAM-001).

After the provider's terminal marker the turn needs nothing more from the stream; closing it
(an HTTP adapter drains the rest of the body there and returns the connection to its pool)
is left to the model call's watch task in the connection's background group, which runs
after the turn's response. Checked structurally with streams whose close the test holds:
the turn ends while the close is still held, the close still runs when the connection's
group is cancelled, and a failed attempt's stream is closed before its retry, as before.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Self

import anyio
import anyio.lowlevel
import pytest
from turn.turnkit import FakeProvider, RecordingSink, broken, finish, make_request, start, text

from acp_bridge.providers import ModelRequest, StreamEvent
from acp_bridge.turn import StopReason, Turn, TurnRequest


class _HeldClose:
    """One attempt's events; `aclose` records that it began, then waits for `release`."""

    def __init__(self, events: Sequence[StreamEvent | Exception], release: anyio.Event) -> None:
        self._events = list(events)
        self._release = release
        self.close_began = anyio.Event()
        self.closed = anyio.Event()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> StreamEvent:
        await anyio.lowlevel.checkpoint()
        if not self._events:
            raise StopAsyncIteration
        event = self._events.pop(0)
        if isinstance(event, Exception):
            raise event
        return event

    async def aclose(self) -> None:
        self.close_began.set()
        await self._release.wait()
        self.closed.set()


class _Provider(FakeProvider):
    """Each attempt's script as a `_HeldClose`; `streams` in the order they were asked for,
    and how many of the earlier ones were closed when each was asked for."""

    def __init__(self, *scripts: Sequence[StreamEvent | Exception], release: anyio.Event) -> None:
        super().__init__()
        self._held = [list(s) for s in scripts]
        self._release = release
        self.streams: list[_HeldClose] = []
        self.closed_before: list[int] = []

    def stream(self, request: ModelRequest) -> _HeldClose:  # type: ignore[override]
        self.requests.append(request)
        self.closed_before.append(sum(s.closed.is_set() for s in self.streams))
        stream = _HeldClose(self._held.pop(0), self._release)
        self.streams.append(stream)
        return stream


def _answer() -> list[StreamEvent | Exception]:
    return [start(), *text("Hel", "lo"), finish()]


def _request(provider: _Provider, **changes: object) -> TurnRequest:
    return dataclasses.replace(make_request(provider, RecordingSink()), **changes)  # type: ignore[arg-type]


@pytest.mark.requirement("TAIL4-STREAM-001")
@pytest.mark.anyio
async def test_the_turn_ends_before_its_completed_stream_is_closed() -> None:
    """The close is held: with the connection's background group the turn still ends (its
    response would be written), and the close runs after it, in that group."""
    release = anyio.Event()
    provider = _Provider(_answer(), release=release)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as background:
            result = await Turn(_request(provider, background=background)).run()
            assert result.stop_reason is StopReason.END_TURN
            stream = provider.streams[0]
            assert not stream.closed.is_set()  # the turn did not wait for it
            await stream.close_began.wait()  # it begins at the turn's next yield
            release.set()
            await stream.closed.wait()


@pytest.mark.requirement("TAIL4-STREAM-001")
@pytest.mark.anyio
async def test_without_a_background_group_the_stream_is_closed_inside_the_turn() -> None:
    release = anyio.Event()
    release.set()
    provider = _Provider(_answer(), release=release)
    with anyio.fail_after(30):
        await Turn(_request(provider)).run()
    assert provider.streams[0].closed.is_set()


@pytest.mark.requirement("TAIL4-STREAM-001")
@pytest.mark.anyio
async def test_a_failed_attempt_is_closed_before_its_retry() -> None:
    """Only a completed attempt's close is left for later: a broken stream is closed before
    the retry's request goes out (the retry may need the connection's slot)."""
    release = anyio.Event()
    release.set()
    provider = _Provider([start(), broken()], _answer(), release=release)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as background:
            result = await Turn(_request(provider, background=background)).run()
            assert result.stop_reason is StopReason.END_TURN
            assert provider.closed_before == [0, 1]  # attempt 1 closed when 2 was asked for
            await provider.streams[1].closed.wait()


@pytest.mark.requirement("TAIL4-STREAM-001")
@pytest.mark.anyio
async def test_the_close_still_runs_bounded_when_the_connection_ends() -> None:
    """The connection's group is cancelled (the connection ends) before the held close is
    released: the close runs anyway, shielded, and gives up at `cleanup_timeout`; the group
    then exits, no task left behind."""
    never = anyio.Event()
    provider = _Provider(_answer(), release=never)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as background:
            request = _request(provider, background=background, cleanup_timeout=0.05)
            await Turn(request).run()
            background.cancel_scope.cancel()
    stream = provider.streams[0]
    assert stream.close_began.is_set()
    assert not stream.closed.is_set()  # cut off by its bound, not waited for forever
