"""The turn's tail, third round (issue 15.2): event-loop round trips taken out of what runs
between the model stream's last chunk and the response. Checked structurally, never by
timing: the benchmark (`bench_per_turn.py --tail-only`) measures the time."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest
from perturn.test_perturn_tail import _Editor

from acp_bridge.agent._sink import PeerTurnSink
from acp_bridge.turn import AgentText


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
