"""An editor that answers `session/request_permission` with an error did not allow the call
(TURN-PERM-001): the call is not run, the model is told, the turn goes on, one warning line."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config
from editor import _EditorError

from acp_bridge.providers import ToolResults
from acp_bridge.sessions import SessionStore

pytestmark = pytest.mark.anyio


def failing(code: int) -> Any:
    def policy(params: dict[str, Any]) -> dict[str, Any]:
        raise _EditorError(code, "Method not found" if code == -32601 else "Internal error")

    return policy


def malformed(params: dict[str, Any]) -> dict[str, Any]:
    return {"outcome": {"outcome": "perhaps"}}


@pytest.mark.requirement("TURN-PERM-001")
@pytest.mark.parametrize(
    "policy", [failing(-32601), failing(-32603), malformed], ids=["-32601", "-32603", "malformed"]
)
async def test_an_error_reply_to_a_permission_request_means_not_allowed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, policy: Any
) -> None:
    caplog.set_level(logging.DEBUG, logger="acp_bridge")
    async with running_bridge(scripted_config(tmp_path / "s"), permission=policy) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        reply = await ed.prompt(session, "/tool-call-broken-before-finish")
        assert ed.requests_of("session/request_permission")
        updates = ed.updates(session)
    assert reply["result"]["stopReason"] == "end_turn"  # the turn went on to its end
    assert not (tmp_path / "scripted-note.txt").exists()
    (closed,) = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
    assert closed["status"] == "failed"
    assert "could not ask" in closed["content"][0]["content"]["text"]
    with SessionStore(tmp_path / "s") as store:
        results = [m for m in store.history(session) if isinstance(m, ToolResults)]
    (told,) = results[0].results
    assert told.is_error
    assert "could not ask the user for permission" in told.output
    # One warning line on stderr, no traceback and nothing at ERROR.
    ours = [r for r in caplog.records if r.name.startswith("acp_bridge")]
    assert not [r for r in ours if r.levelno >= logging.ERROR]
    assert not [r for r in ours if r.exc_info]
    warnings = [r for r in ours if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "\n" not in warnings[0].getMessage()
