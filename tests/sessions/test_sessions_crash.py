"""Real `python -m acp_bridge` processes: restart, kill -9, recovery, and two processes at once.

Effects are counted in their own target: lines a `run_command` appends to a file in the
workspace. The editor side (`StdioEditor`) advertises no fs/terminal, so the bridge runs the
commands itself and a kill -9 stops it wherever it is.
"""

from __future__ import annotations

import os
import random
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sessions.sesskit import comparable, editor_events, view_of
from sessions.stdio_kit import (
    APPEND,
    Killed,
    StdioEditor,
    append_script,
    file_lines,
    is_update,
    write_script,
)

from acp_bridge.client import reduce
from acp_bridge.sessions import INTERRUPTED_NOTE, OUTCOME_UNKNOWN, SessionStore, TurnState
from acp_bridge.turn import EffectLedger

pytestmark = pytest.mark.subprocess


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# Demo\n\nA small demo project.\n")
    return work


@pytest.mark.requirement("SESS-022")
@pytest.mark.requirement("SESS-020")
def test_kill_after_the_effect_ran_then_the_same_prompt_runs_it_once(
    tmp_path: Path, workspace: Path
) -> None:
    state, home = tmp_path / "state", tmp_path / "home"
    slow = append_script(tmp_path / "slow.json", then_block=True)
    fast = append_script(tmp_path / "fast.json", then_block=False)
    with StdioEditor(state, home, "--script", str(slow)) as first:
        first.initialize()
        session_id = first.new_session(workspace)
        first.request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "append a line"}]},
        )
        first.read_until(is_update("tool_call_update", status="completed"))
        first.read_until(is_update("agent_message_chunk"))  # model call 2 is streaming
        first.kill()  # kill -9: the turn never completes
    assert file_lines(workspace / "effects.log") == ["x"]

    with StdioEditor(state, home, "--script", str(fast)) as second:
        second.initialize()
        reply, replayed = second.load(session_id, workspace)
        assert "result" in reply
        calls = [u for u in replayed if u["sessionUpdate"] == "tool_call"]
        assert [c["status"] for c in calls] == ["completed"]
        assert replayed[-1]["sessionUpdate"] == "agent_message_chunk"
        assert replayed[-1]["content"]["text"] == INTERRUPTED_NOTE
        again = second.prompt(session_id, "append a line")
        report = again["result"]["_meta"]["acpBridge"]
        assert again["result"]["stopReason"] == "end_turn"
        assert report["turnId"] == f"{session_id}-turn1"  # the same turn, so the same keys
        assert (report["idPrefix"], report["rerun"]) == (f"{session_id}-turn1-r1", True)
        assert [(e["ran"], e["reused"]) for e in report["effects"]] == [(False, True)]
        assert second.permission_titles() == []  # a recorded effect is reused, not asked
        second.stop()
    assert file_lines(workspace / "effects.log") == ["x"]  # exactly once in total


def _fifo_read(path: Path, out: list[str]) -> None:
    with open(path) as fifo:
        out.append(fifo.read())


def _bounded(target: Callable[..., None], *args: Any) -> None:
    thread = threading.Thread(target=target, args=args, daemon=True)
    thread.start()
    thread.join(30)
    assert not thread.is_alive(), f"{target.__name__} did not finish"


@pytest.mark.requirement("SESS-020")
@pytest.mark.requirement("SESS-022")
def test_an_effect_killed_mid_run_is_unknown_and_asked_about(
    tmp_path: Path, workspace: Path
) -> None:
    state, home = tmp_path / "state", tmp_path / "home"
    ran, release = workspace / "ran.fifo", workspace / "release.fifo"
    os.mkfifo(ran)
    os.mkfifo(release)
    command = f"{APPEND} && echo ran > ran.fifo && cat release.fifo"
    script = append_script(tmp_path / "s.json", command, then_block=False)
    signal: list[str] = []
    with StdioEditor(state, home, "--script", str(script)) as first:
        first.initialize()
        session_id = first.new_session(workspace)
        first.request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "append"}]},
        )
        first.read_until(is_update("tool_call_update", status="in_progress"))
        _bounded(_fifo_read, ran, signal)  # the effect has happened; the tool still runs
        first.kill()
    # No release needed: the command's process group died with the bridge (ROBUST-PROC-001).
    assert signal == ["ran\n"]
    assert file_lines(workspace / "effects.log") == ["x"]

    with StdioEditor(state, home, "--script", str(script)) as second:
        second.initialize()
        _, replayed = second.load(session_id, workspace)
        (call,) = [u for u in replayed if u["sessionUpdate"] == "tool_call"]
        assert call["status"] == "failed"
        assert call["content"][0]["content"]["text"] == OUTCOME_UNKNOWN
        again = second.prompt(session_id, "append")  # answered "Do not run it"
        assert again["result"]["_meta"]["acpBridge"]["turnId"] == f"{session_id}-turn1"
        (title,) = second.permission_titles()
        assert "outcome is unknown" in title
        second.stop()
    assert file_lines(workspace / "effects.log") == ["x"]  # never silently run again


def _marker_script(path: Path, marker: int) -> Path:
    return write_script(
        path,
        f"effect-{marker}",
        [
            {
                "attempts": [
                    [
                        {"text": f"Recording turn {marker}. "},
                        {
                            "tool_call": "run_command",
                            "arguments": {"command": f"echo {marker} >> effects.log"},
                        },
                        {"finish": "auto"},
                    ]
                ]
            },
            {"attempts": [[{"text": f"Recorded turn {marker}."}, {"finish": "stop"}]]},
        ],
    )


def _next_turn(state: Path, session_id: str | None) -> tuple[int, bool]:
    """The marker of the turn to send next, and whether it runs an unfinished turn again:
    what an editor decides from the loaded session (its last turn interrupted or not)."""
    if session_id is None:
        return 1, False
    with SessionStore(state) as store:  # the database always opens
        turns = [t for t in store.turns(session_id) if not t.superseded]
    if not turns:
        return 1, False
    last = turns[-1]
    marker = int(last.prompt[0]["text"].split()[-1])
    if last.state in (TurnState.RUNNING, TurnState.INTERRUPTED):
        return marker, True
    return marker + 1, False


@dataclass
class _Chain:
    """One editor's run of kill -9s against one session: bridge processes one after another,
    each killed at a chosen point, or left to complete its turn."""

    name: str
    workspace: Path
    seed: int
    session_id: str | None = None
    kills: int = 0
    reruns: int = 0
    completed: int = 0


def _kill_chain(chain: _Chain, state: Path, home: Path, scripts: Path, iterations: int) -> None:
    rng = random.Random(chain.seed)
    # Every kill point 0..14 (messages read before the kill) comes up once per 15 prompts,
    # in a seeded order; points past the turn's last message let it complete.
    points = [point for _ in range(iterations // 15 + 1) for point in rng.sample(range(15), 15)]
    for iteration in range(iterations):
        marker, rerun = _next_turn(state, chain.session_id)
        script = _marker_script(scripts / f"{chain.name}-turn-{marker}.json", marker)
        with StdioEditor(state, home, "--script", str(script)) as editor:
            editor.initialize()
            try:
                if chain.session_id is None:
                    chain.session_id = editor.new_session(chain.workspace)
                else:
                    if rng.random() < 0.15:  # sometimes die during the replay
                        editor.kill_after = len(editor.received) + rng.randint(1, 6)
                    reply, replayed = editor.load(chain.session_id, chain.workspace)
                    assert "result" in reply, reply
                    assert not any((u.get("_meta") or {}).get("reset") for u in replayed)
                    if rerun:
                        assert replayed[-1]["content"]["text"] == INTERRUPTED_NOTE
                editor.kill_after = len(editor.received) + points[iteration]
                answer = editor.prompt(chain.session_id, f"turn {marker}")
            except Killed:
                chain.kills += 1
                continue
            assert answer["result"]["stopReason"] == "end_turn", (chain.name, iteration, answer)
            turn_id = answer["result"]["_meta"]["acpBridge"]["turnId"]
            assert turn_id == f"{chain.session_id}-turn{marker}"
            chain.reruns += rerun
            chain.completed += 1
            editor.stop()


@pytest.mark.requirement("SESS-023")
def test_kill_9_at_random_points_never_runs_an_effect_twice(tmp_path: Path) -> None:
    """Two editors, each with its own session and workspace on one state directory, kill
    their bridge processes at every point of a turn (each chain meets every kill point 0..14
    once, then three more), 18 processes each. The two chains run side by side (threads that
    only wait on their processes), so the database also sees two processes writing, and
    killed, at once; on an idle 2-core machine that halves the wall time."""
    state, home = tmp_path / "state", tmp_path / "home"
    chains = []
    for name, seed in (("a", 20261130), ("b", 20261201)):
        work = tmp_path / f"work-{name}"
        work.mkdir()
        chains.append(_Chain(name, work, seed))
    with ThreadPoolExecutor(max_workers=len(chains)) as pool:
        running = [
            pool.submit(_kill_chain, chain, state, home / chain.name, tmp_path, 18)
            for chain in chains
        ]
        for future in running:
            future.result(timeout=900)  # re-raises a chain's failure
    for chain in chains:
        markers = file_lines(chain.workspace / "effects.log")
        assert len(markers) == len(set(markers)), f"an effect ran twice in {chain}: {markers}"
        assert chain.kills >= 10, chain
        assert chain.completed >= 3, chain
        with EffectLedger(state) as ledger:
            keyed = {r.turn_id for r in ledger.records()}
        assert {f"{chain.session_id}-turn{m}" for m in markers} <= keyed
    assert sum(chain.reruns for chain in chains) >= 1, chains
    with SessionStore(state) as store:
        integrity = store._db.execute("PRAGMA integrity_check").fetchone()
    assert integrity == ("ok",)


@pytest.mark.requirement("SESS-015")
@pytest.mark.requirement("SESS-016")
def test_two_processes_one_owner_and_a_killed_owner_is_stale(
    tmp_path: Path, workspace: Path
) -> None:
    state = tmp_path / "state"
    with StdioEditor(state, tmp_path / "a") as first, StdioEditor(state, tmp_path / "b") as second:
        first.initialize()
        second.initialize()
        session_id = first.new_session(workspace)
        assert first.prompt(session_id, "/hello")["result"]["stopReason"] == "end_turn"
        refused, replayed = second.load(session_id, workspace)
        assert replayed == []
        assert refused["error"]["code"] == -32603
        assert refused["error"]["data"] == {
            "reason": "session_in_use",
            "sessionId": session_id,
            "ownerPid": first.pid,
        }
        listed = second.call("session/list", {})["result"]["sessions"]
        assert [s["sessionId"] for s in listed] == [session_id]
        own = second.new_session(workspace)  # both write the same database meanwhile
        assert second.prompt(own, "/hello")["result"]["stopReason"] == "end_turn"
        first.kill()
        reply, replayed = second.load(session_id, workspace)
        assert "result" in reply
        assert next(u["sessionUpdate"] for u in replayed) == "user_message_chunk"


@pytest.mark.requirement("SESS-030")
def test_a_restarted_process_replays_what_the_editor_showed(
    tmp_path: Path, workspace: Path
) -> None:
    state, home = tmp_path / "state", tmp_path / "home"
    with StdioEditor(state, home) as first:
        first.initialize()
        session_id = first.new_session(workspace)
        for text in ("/tool-loop-break-second-call", "/broken-twice", "/help-desk-refund-file"):
            assert first.prompt(session_id, text)["result"]["stopReason"] == "end_turn"
        shown = reduce(editor_events(first.received, first.prompts, session_id))
        assert first.stop() == 0
    with StdioEditor(state, home) as second:
        second.initialize()
        reply, replayed = second.load(session_id, workspace)
        assert "result" in reply
        second.stop()
    assert comparable(view_of(replayed)) == comparable(shown)
