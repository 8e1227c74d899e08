"""`session/set_mode` during a turn applies to the calls decided after it (TURN-MODE-001)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from bridge import running_bridge, scripted_config
from turn.turnkit import FakeProvider, Hold, finish, start, text, tool_call

from acp_bridge.providers import FinishReason

pytestmark = pytest.mark.anyio


@pytest.mark.requirement("TURN-MODE-001")
async def test_switching_to_read_only_mid_turn_refuses_the_next_write(tmp_path: Path) -> None:
    hold = Hold()
    provider = FakeProvider(
        [
            start(),
            *text("I will write the note. "),
            hold,  # the user switches to read-only while the model is still answering
            *tool_call("c1", "write_file", {"path": "note.txt", "content": "x\n"}),
            finish(FinishReason.TOOL_CALLS),
        ],
        [start(), *text("Done."), finish()],
    )
    async with running_bridge(scripted_config(tmp_path / "s", provider=provider)) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        await ed.call("session/set_mode", {"sessionId": session, "modeId": "auto-edit"})
        replies: list[dict[str, object]] = []
        async with anyio.create_task_group() as tg:

            async def prompt() -> None:
                replies.append(await ed.prompt(session, "write a note"))

            tg.start_soon(prompt)
            with anyio.fail_after(10):
                await hold.reached.wait()
            await ed.call("session/set_mode", {"sessionId": session, "modeId": "read-only"})
            hold.release.set()
        updates = ed.updates(session)
    assert replies[0]["result"]["stopReason"] == "end_turn"  # type: ignore[index]
    assert not (tmp_path / "note.txt").exists()
    assert not ed.requests_of("session/request_permission")
    (closed,) = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
    assert closed["status"] == "failed"
    assert "read-only" in closed["content"][0]["content"]["text"]
    # The next model call is offered no side-effecting tool.
    offered = {spec.name for spec in provider.requests[1].tools}
    assert "write_file" not in offered
    assert "read_file" in offered
