"""A kill between a turn's committed completion and its response (SESS-UNANSWERED-001).

A real `python -m acp_bridge` is told to kill itself (SIGKILL, as `kill -9`) right after the
journal committed its turn's completion and before the `session/prompt` response is written
(`ACP_BRIDGE_TEST_CRASH_AT=turn-committed`). The turn's effect (a line `run_command` appends
to `effects.log`) ran once. The editor restarts the bridge, loads the session and sends the same
prompt again: it is answered from the journal (the stored stop reason), with no model call and
no effect; sent once more after that answer, it is a new turn.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sessions.stdio_kit import StdioEditor, append_script, file_lines

from acp_bridge.agent._crash_point import CRASH_VARIABLE
from acp_bridge.sessions import SessionStore, TurnState

pytestmark = [pytest.mark.subprocess, pytest.mark.requirement("SESS-UNANSWERED-001")]

PROMPT = "append a line"


def _prompt_request(session_id: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": PROMPT}]}


def _read_until_it_dies(editor: StdioEditor, request_id: int) -> None:
    """Every message until stdout closes; the prompt's response never comes."""
    while True:
        message = editor.next_message()
        assert message.get("id") != request_id or "method" in message, message


@dataclass(frozen=True)
class Crashed:
    """A bridge that killed itself at a fault point during its first prompt."""

    state: Path
    home: Path
    workspace: Path
    script: Path
    session_id: str
    shown: list[dict[str, Any]]  # the updates the editor got before it died


def crash_in_first_prompt(tmp_path: Path, point: str) -> Crashed:
    """Runs the append script's prompt in a bridge told to SIGKILL itself at `point`."""
    state, home, workspace = tmp_path / "state", tmp_path / "home", tmp_path / "work"
    workspace.mkdir()
    script = append_script(tmp_path / "append.json", then_block=False)
    with StdioEditor(state, home, "--script", str(script), env={CRASH_VARIABLE: point}) as first:
        first.initialize()
        session_id = first.new_session(workspace)
        request_id = first.request("session/prompt", _prompt_request(session_id))
        with pytest.raises(AssertionError, match="closed stdout"):
            _read_until_it_dies(first, request_id)
        assert first.process.wait_exit() == -signal.SIGKILL  # it died in the window
        shown = first.updates(session_id)
    return Crashed(state, home, workspace, script, session_id, shown)


def test_a_kill_after_the_commit_answers_the_resent_prompt_from_the_journal(tmp_path: Path) -> None:
    crashed = crash_in_first_prompt(tmp_path, "turn-committed")
    state, home, workspace, script = crashed.state, crashed.home, crashed.workspace, crashed.script
    session_id, shown = crashed.session_id, crashed.shown
    assert [u["sessionUpdate"] for u in shown].count("tool_call") == 1
    assert shown[-1]["sessionUpdate"] == "agent_message_chunk"  # every update came first
    assert file_lines(workspace / "effects.log") == ["x"]
    with SessionStore(state) as store:  # the journal: completed, its response not written
        (turn,) = store.turns(session_id)
        assert (turn.state, turn.stop_reason) == (TurnState.COMPLETED, "end_turn")

    with StdioEditor(state, home, "--script", str(script)) as second:
        second.initialize()
        reply, replayed = second.load(session_id, workspace)
        assert "result" in reply
        assert [u["sessionUpdate"] for u in replayed].count("tool_call") == 1
        since = len(second.received)
        again = second.prompt(session_id, PROMPT)
        result = again["result"]
        assert result["stopReason"] == "end_turn"
        report = result["_meta"]["acpBridge"]
        assert report["answeredFromJournal"] is True
        assert (report["turnId"], report["modelCalls"], report["effects"]) == (
            f"{session_id}-turn1",
            0,
            [],
        )
        kinds = [u["sessionUpdate"] for u in second.updates(session_id, since)]
        kinds = [k for k in kinds if k != "available_commands_update"]  # after the load
        assert kinds == ["session_info_update"]  # the title it never sent; no model output
        assert second.permission_titles(since) == []
        assert file_lines(workspace / "effects.log") == ["x"]  # no second effect

        # Now answered: the same prompt once more is a new request, so a new turn.
        later = second.prompt(session_id, PROMPT)["result"]["_meta"]["acpBridge"]
        assert (later["turnId"], later.get("answeredFromJournal")) == (f"{session_id}-turn2", None)
        assert second.stop() == 0
    assert file_lines(workspace / "effects.log") == ["x", "x"]
