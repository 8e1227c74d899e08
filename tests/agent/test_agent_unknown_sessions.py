"""One contract per method for a session id that names no session here (AGENT-SESSID-001)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config

pytestmark = pytest.mark.anyio

NOPE = "sess_nope"


def calls(cwd: Path) -> dict[str, dict[str, Any]]:
    return {
        "session/prompt": {"sessionId": NOPE, "prompt": [{"type": "text", "text": "hi"}]},
        "session/set_mode": {"sessionId": NOPE, "modeId": "ask"},
        "session/set_config_option": {"sessionId": NOPE, "configId": "model", "value": "scripted"},
        "session/load": {"sessionId": NOPE, "cwd": str(cwd), "mcpServers": []},
        "session/resume": {"sessionId": NOPE, "cwd": str(cwd), "mcpServers": []},
    }


@pytest.mark.requirement("AGENT-SESSID-001")
async def test_every_method_that_needs_the_session_answers_resource_not_found(
    tmp_path: Path,
) -> None:
    async with running_bridge(scripted_config(tmp_path / "s")) as ed:
        await ed.initialize()
        replies = {
            method: await ed.request(method, params) for method, params in calls(tmp_path).items()
        }
        closed = await ed.request("session/close", {"sessionId": NOPE})
        deleted = await ed.request("session/delete", {"sessionId": NOPE})
        await ed.notify("session/cancel", {"sessionId": NOPE})  # a notification: never answered
        session = await ed.new_session(tmp_path)
        after = await ed.prompt(session, "/hello")
    for method, reply in replies.items():
        error = reply["error"]
        assert error["code"] == -32002, method
        assert error["message"].startswith(f"Unknown session: {NOPE!r} ("), method
        assert "session/new" in error["message"], method
        assert error["data"]["sessionId"] == NOPE, method
    # Closing or deleting what is not there succeeds (ACP: delete SHOULD succeed silently).
    assert closed["result"] == {}
    assert deleted["result"] == {}
    assert after["result"]["stopReason"] == "end_turn"


@pytest.mark.requirement("AGENT-SESSID-001")
async def test_a_stored_session_not_open_here_names_load_as_the_fix(tmp_path: Path) -> None:
    async with running_bridge(scripted_config(tmp_path / "s")) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        await ed.call("session/close", {"sessionId": session})
        reply = await ed.prompt(session, "/hello")
        mode = await ed.request("session/set_mode", {"sessionId": session, "modeId": "ask"})
    for answer in (reply, mode):
        assert answer["error"]["code"] == -32002
        assert "session/load" in answer["error"]["message"]
        assert answer["error"]["data"] == {"sessionId": session}
