"""The turn's tail, third round (issue 15.2): event-loop round trips taken out of what runs
between the model stream's last chunk and the response. Checked structurally, never by
timing: the benchmark (`bench_per_turn.py --tail-only`) measures the time."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from perturn.test_perturn_tail import _Editor

from acp_bridge.agent._sink import PeerTurnSink
from acp_bridge.errors import PeerGone
from acp_bridge.providers import FaultKind, ModelStreamError
from acp_bridge.turn import AgentText, UserNotice
from acp_bridge.turn._watch import ProgressWatch, run_watched


class _EndsRecorded(PeerTurnSink):
    """Records when each run's writer task has ended."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.ended: list[int] = []  # returned
        self.finished: list[int] = []  # returned or cancelled

    async def _write_queued(self, run: int) -> None:
        try:
            await super()._write_queued(run)
            self.ended.append(run)
        finally:
            self.finished.append(run)


@pytest.mark.requirement("TAIL2-001")
@pytest.mark.anyio
async def test_leaving_running_does_not_wait_for_a_background_writer() -> None:
    """With the connection's background group the writer's end is not joined: right after
    `running()` returns its writer has not ended yet, though every chunk is written; it
    ends at the next checkpoint, and a new run starts a new writer."""
    editor = _Editor()
    with anyio.fail_after(30):
        async with anyio.create_task_group() as background:
            sink = _EndsRecorded(editor, "s", background=background)
            for turn in range(3):
                async with sink.running():
                    for n in range(5):
                        await sink.send_update(AgentText(f"<{turn}.{n}>", f"m{turn}"))
                assert turn + 1 not in sink.ended  # not joined
                written = b"".join(editor.lines).decode()
                assert all(f"<{turn}.{n}>" in written for n in range(5))
            while len(sink.ended) < 3:
                await anyio.lowlevel.checkpoint()
    assert sorted(sink.ended) == [1, 2, 3]
    written = b"".join(editor.lines).decode()
    marks = [f"<{t}.{n}>" for t in range(3) for n in range(5)]
    assert [written.index(m) for m in marks] == sorted(written.index(m) for m in marks)


@pytest.mark.requirement("TAIL2-001")
@pytest.mark.anyio
async def test_a_background_writer_still_busy_at_the_exit_bound_is_cancelled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Still writing when the exit's flush gives up (an editor that never reads), the writer
    is cancelled by its own scope; the background group goes on."""
    monkeypatch.setattr("acp_bridge.agent._sink._FLUSH_ON_EXIT", 0.01)
    never = anyio.Event()

    class _Stuck(_Editor):
        async def notify_encoded(self, line: bytes, message: object) -> None:
            await never.wait()

    with anyio.fail_after(30):
        async with anyio.create_task_group() as background:
            sink = _EndsRecorded(_Stuck(), "s", background=background)
            async with sink.running():
                await sink.send_update(AgentText("stuck", "m1"))
            while not sink.finished:
                await anyio.lowlevel.checkpoint()

            async def unblock() -> None:
                never.set()

            background.start_soon(unblock)  # the group still runs tasks
    assert never.is_set()
    assert sink.ended == []  # cancelled inside its writes, it never returned


class _WatchEnds(ProgressWatch):
    """Records when its watch task has ended."""

    ended = False

    async def watch(self, *args: Any) -> None:
        await super().watch(*args)
        for _ in range(3):  # an end that takes a few turns of the loop: a join would wait
            await anyio.lowlevel.checkpoint()
        self.ended = True


def _jumping_clock() -> Callable[[], float]:
    """A clock 100 s later at every look: any wait is past any bound at once."""
    ticks = itertools.count()
    return lambda: next(ticks) * 100.0


async def _no_notices(notice: UserNotice) -> None:
    raise AssertionError(f"no notice expected: {notice}")


@pytest.mark.requirement("TAIL2-002")
@pytest.mark.anyio
@pytest.mark.parametrize("stall_after", [None, 15.0])
async def test_run_watched_does_not_join_a_background_watch(stall_after: float | None) -> None:
    watch = _WatchEnds(stall_after=stall_after, max_wait=None)
    streamed: list[str] = []

    async def run() -> None:
        await anyio.lowlevel.checkpoint()
        streamed.append("done")

    with anyio.fail_after(30):
        async with anyio.create_task_group() as background:
            await run_watched(run, watch, _no_notices, "p", background)
            assert streamed == ["done"]
            assert not watch.ended  # not joined: it returns when it next runs
            while not watch.ended:
                await anyio.lowlevel.checkpoint()


@pytest.mark.requirement("TAIL2-002")
@pytest.mark.anyio
async def test_a_background_watch_still_cuts_the_stream_off_past_max_wait() -> None:
    watch = ProgressWatch(stall_after=None, max_wait=1.0, clock=_jumping_clock())
    with anyio.fail_after(30):
        async with anyio.create_task_group() as background:
            with pytest.raises(ModelStreamError) as raised:
                await run_watched(anyio.sleep_forever, watch, _no_notices, "p", background)
            assert not background.cancel_scope.cancel_called
    assert watch.exceeded
    assert raised.value.kind is FaultKind.IDLE_TIMEOUT


@pytest.mark.requirement("TAIL2-002")
@pytest.mark.anyio
async def test_a_failing_background_watch_cancels_the_stream_and_raises_its_error() -> None:
    watch = ProgressWatch(stall_after=1.0, max_wait=None, clock=_jumping_clock())

    async def editor_gone(notice: UserNotice) -> None:
        raise PeerGone("the editor stopped reading")

    with anyio.fail_after(30):
        async with anyio.create_task_group() as background:
            with pytest.raises(PeerGone):
                await run_watched(anyio.sleep_forever, watch, editor_gone, "p", background)
            assert not background.cancel_scope.cancel_called
