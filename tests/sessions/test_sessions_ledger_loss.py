"""A lost effect ledger never turns an effect that ran into a new one (EFFECT-LOST-001/002).

Real `python -m acp_bridge` processes on a real state directory: the first is killed (kill -9)
after its `run_command` appended a line to `effects.log`; then the ledger is damaged the ways
a red-team run found it silently emptied (its WAL deleted, the database file truncated,
garbage in its WAL), and a second process loads the session and is sent the interrupted
prompt again. The session journal (`sessions.sqlite3`) still holds the call's effect key, so
the effect's outcome is unknown: the user is asked ("Do not run it", the kit's answer) and
the line is never appended twice.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from sessions.stdio_kit import (
    APPEND,
    StdioEditor,
    append_script,
    file_lines,
    is_update,
    write_script,
)

from acp_bridge.sessions import OUTCOME_UNKNOWN, SessionStore
from acp_bridge.turn import EffectLedger

pytestmark = pytest.mark.subprocess

WAL = EffectLedger.FILENAME + "-wal"


def _delete_wal(state: Path) -> None:
    (state / WAL).unlink()


def _truncate_db(state: Path) -> None:
    os.truncate(state / EffectLedger.FILENAME, 0)


def _garbage_wal(state: Path) -> None:
    wal = state / WAL
    size = wal.stat().st_size
    with wal.open("r+b") as file:  # the header stays; every frame after it is noise
        file.seek(32)
        file.write(os.urandom(size - 32))


def _killed_after_the_effect(tmp_path: Path, workspace: Path) -> tuple[Path, str]:
    """A session whose turn ran its effect and was killed (-9) in the next model call."""
    state, home = tmp_path / "state", tmp_path / "home"
    slow = append_script(tmp_path / "slow.json", then_block=True)
    with StdioEditor(state, home, "--script", str(slow)) as first:
        first.initialize()
        session_id = first.new_session(workspace)
        first.request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "append a line"}]},
        )
        first.read_until(is_update("tool_call_update", status="completed"))
        first.read_until(is_update("agent_message_chunk"))  # model call 2 is streaming
        first.kill()
    assert file_lines(workspace / "effects.log") == ["x"]
    assert (state / WAL).stat().st_size > 0  # killed: nothing was checkpointed
    return state, session_id


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.mark.requirement("EFFECT-LOST-001")
@pytest.mark.requirement("EFFECT-LOST-002")
@pytest.mark.parametrize(
    "damage",
    [_delete_wal, _truncate_db, _garbage_wal],
    ids=["deleted-wal", "truncated-db", "garbage-wal"],
)
def test_a_lost_ledger_makes_the_effect_unknown_and_it_never_runs_twice(
    tmp_path: Path, workspace: Path, damage: Callable[[Path], None]
) -> None:
    state, session_id = _killed_after_the_effect(tmp_path, workspace)
    damage(state)
    with EffectLedger(state) as ledger:
        assert list(ledger.records()) == []  # the ledger forgot the effect...
    with SessionStore(state) as store:  # ...the journal did not
        (turn,) = store.turns(session_id)
        assert [c.effect_key is not None for c in turn.tool_calls] == [True]

    fast = append_script(tmp_path / "fast.json", then_block=False)
    with StdioEditor(state, tmp_path / "home", "--script", str(fast)) as second:
        second.initialize()
        reply, _ = second.load(session_id, workspace)
        assert "result" in reply
        again = second.prompt(session_id, "append a line")  # answered "Do not run it"
        report = again["result"]["_meta"]["acpBridge"]
        assert again["result"]["stopReason"] == "end_turn"
        assert (report["turnId"], report["rerun"]) == (f"{session_id}-turn1", True)
        (title,) = second.permission_titles()
        assert "outcome is unknown" in title
        assert [(e["ran"], e["asked"]) for e in report["effects"]] == [(False, True)]
        assert second.stop() == 0
        log = second.process.stderr_text(None)
    assert file_lines(workspace / "effects.log") == ["x"]  # never silently run again
    assert "has no record of it" in log  # said on stderr, naming the ledger file
    assert "the ledger was lost and started anew" in log  # EFFECT-LOST-002
    assert EffectLedger.FILENAME in log


@pytest.mark.requirement("EFFECT-LOST-001")
def test_an_effect_killed_mid_run_whose_ledger_was_lost_replays_as_unknown(
    tmp_path: Path, workspace: Path
) -> None:
    """Killed while the effect ran (journaled `in_progress` with its key), WAL deleted: the
    replay says the outcome is unknown, not that it never ran."""
    state, home = tmp_path / "state", tmp_path / "home"
    ran = workspace / "ran.fifo"
    os.mkfifo(ran)
    script = write_script(
        tmp_path / "s.json",
        "append-then-wait",
        [
            {
                "attempts": [
                    [
                        {
                            "tool_call": "run_command",
                            "arguments": {
                                "command": f"{APPEND} && echo ran > ran.fifo && sleep 60"
                            },
                        },
                        {"finish": "auto"},
                    ]
                ]
            },
            {"attempts": [[{"text": "Done."}, {"finish": "stop"}]]},
        ],
    )
    with StdioEditor(state, home, "--script", str(script)) as first:
        first.initialize()
        session_id = first.new_session(workspace)
        first.request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "append"}]},
        )
        first.read_until(is_update("tool_call_update", status="in_progress"))
        signal: list[str] = []
        reader = threading.Thread(target=lambda: signal.append(ran.read_text()), daemon=True)
        reader.start()
        reader.join(30)  # bounded: the effect happened; the command still runs
        assert signal == ["ran\n"]
        first.kill()
    _delete_wal(state)
    with StdioEditor(state, home, "--script", str(script)) as second:
        second.initialize()
        _, replayed = second.load(session_id, workspace)
        (call,) = [u for u in replayed if u["sessionUpdate"] == "tool_call"]
        assert call["status"] == "failed"
        assert call["content"][0]["content"]["text"] == OUTCOME_UNKNOWN
        second.prompt(session_id, "append")  # answered "Do not run it"
        assert ["outcome is unknown" in t for t in second.permission_titles()] == [True]
        second.stop()
    assert file_lines(workspace / "effects.log") == ["x"]
