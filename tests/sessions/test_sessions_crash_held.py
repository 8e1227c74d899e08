"""A kill while the turn's last answer is kept in memory and its end not yet committed
(STORE4-002).

The last answer (no tool calls) is written in the transaction of the turn's end (STORE4-001),
so a bridge killed between the two leaves the turn `running` without that answer, and its
response was never written: the same state as a kill while the answer was still streaming.
A real `python -m acp_bridge` kills itself there (`ACP_BRIDGE_TEST_CRASH_AT=turn-ending`).
After the restart the load settles the turn `interrupted` (SESS-020), replaying what the
journal holds (the first model call's text and its tool call, not the lost answer) and the
note; the same prompt sent again runs the turn again (SESS-021), its effect reused, not run
twice (SESS-022).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sessions.stdio_kit import StdioEditor, file_lines
from sessions.test_sessions_unanswered import PROMPT, crash_in_first_prompt

from acp_bridge.providers import AssistantTurn
from acp_bridge.sessions import SessionStore, TurnState

pytestmark = [pytest.mark.subprocess, pytest.mark.requirement("STORE4-002")]


def test_a_kill_with_the_answer_held_reruns_the_resent_prompt(tmp_path: Path) -> None:
    crashed = crash_in_first_prompt(tmp_path, "turn-ending")
    state, home, workspace, script = crashed.state, crashed.home, crashed.workspace, crashed.script
    session_id, shown = crashed.session_id, crashed.shown
    texts = [u["content"]["text"] for u in shown if u["sessionUpdate"] == "agent_message_chunk"]
    assert "".join(texts).endswith("Done.")  # the editor saw the whole answer live
    assert file_lines(workspace / "effects.log") == ["x"]
    with SessionStore(state) as store:  # running, without the answer it never committed
        (turn,) = store.turns(session_id)
        assert turn.state is TurnState.RUNNING
        kept = [m for m in store.history(session_id) if isinstance(m, AssistantTurn)]
        assert [m.text for m in kept] == ["Appending a line. "]

    with StdioEditor(state, home, "--script", str(script)) as second:
        second.initialize()
        reply, replayed = second.load(session_id, workspace)
        assert "result" in reply
        texts = [
            u["content"]["text"] for u in replayed if u["sessionUpdate"] == "agent_message_chunk"
        ]
        assert texts[0] == "Appending a line. "
        assert "interrupted" in texts[-1]  # the note (SESS-020), no lost answer before it
        assert not any("Done." in text for text in texts)
        result = second.prompt(session_id, PROMPT)["result"]
        assert result["stopReason"] == "end_turn"
        report = result["_meta"]["acpBridge"]
        assert (report["turnId"], report["rerun"]) == (f"{session_id}-turn1", True)
        assert second.stop() == 0
    assert file_lines(workspace / "effects.log") == ["x"]  # its effect reused, never run twice
    with SessionStore(state) as store:
        runs = store.turns(session_id)
        assert [(t.state, t.superseded) for t in runs] == [
            (TurnState.INTERRUPTED, True),
            (TurnState.COMPLETED, False),
        ]
        assert store.history(session_id)[-1] == AssistantTurn(text="Appended. Done.")
