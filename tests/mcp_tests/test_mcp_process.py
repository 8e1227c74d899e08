"""Real `python -m acp_bridge` processes with a real stdio MCP server: crash safety, no orphans.

The editor side is the raw NDJSON `StdioEditor` of the session tests (every line validated
against the ACP schema); the MCP server is our SDK fault server, which logs each call it gets.
Processes are checked with pidfd (an event, bounded), never by sleeping.
"""

from __future__ import annotations

import json
import os
import select
from pathlib import Path
from typing import Any

import pytest
from mcp_tests.mcpkit import broken_refund_script, calls, fault_server
from sessions.stdio_kit import StdioEditor

pytestmark = pytest.mark.subprocess

SECRET = "s3cret-token-value-77"


def _gone(pid: int, timeout: float = 30.0) -> bool:
    """True once process `pid` ended (waited for with a pidfd, bounded)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
        if readable:
            return True
        stat = Path(f"/proc/{pid}/stat").read_text().split()
        return stat[2] == "Z"  # a zombie has ended; only its parent's reaping is missing
    except FileNotFoundError:
        return True
    finally:
        os.close(fd)


def _tool_done(message: dict[str, Any]) -> bool:
    update = message.get("params", {}).get("update", {})
    return update.get("sessionUpdate") == "tool_call_update" and update.get("status") in (
        "completed",
        "failed",
    )


def _script(path: Path, *, block: bool) -> Path:
    script = broken_refund_script()
    if block:  # call 2 streams very slowly: the bridge is killed meanwhile
        script["calls"][1]["attempts"][0].insert(0, {"text": "Refunded. ", "delay_ms": 60_000})
    path.write_text(json.dumps(script))
    return path


def _new_session(editor: StdioEditor, cwd: Path, servers: list[dict[str, Any]]) -> str:
    reply = editor.call("session/new", {"cwd": str(cwd), "mcpServers": servers})
    return str(reply["result"]["sessionId"])


def _prompt(editor: StdioEditor, session_id: str, text: str) -> int:
    return editor.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    )


@pytest.mark.requirement("MCP-EFFECT-002")
@pytest.mark.requirement("MCP-LIFE-004")
@pytest.mark.requirement("MCP-LIFE-007")
@pytest.mark.requirement("MCP-SECRET-001")
def test_kill_9_after_the_mcp_call_then_resend_still_one_call_and_no_orphans(
    tmp_path: Path,
) -> None:
    state, home, log = tmp_path / "state", tmp_path / "home", tmp_path / "calls.jsonl"
    server = fault_server(log)
    server["env"].append({"name": "API_TOKEN", "value": SECRET})
    trace = tmp_path / "trace.ndjson"
    slow = _script(tmp_path / "slow.json", block=True)
    with StdioEditor(state, home, "--script", str(slow), "--trace", str(trace)) as first:
        first.initialize()
        session_id = _new_session(first, tmp_path, [server])
        _prompt(first, session_id, "refund ORD-7781")
        first.read_until(_tool_done)
        [refund] = calls(log, "refund")
        server_pid = refund["pid"]
        first.kill()  # kill -9 while model call 2 streams
    # The lifeline took the stdio server down with the bridge (MCP-LIFE-004).
    assert _gone(server_pid)
    assert len(calls(log, "refund")) == 1

    fast = _script(tmp_path / "fast.json", block=False)
    with StdioEditor(state, home, "--script", str(fast)) as second:
        second.initialize()
        reply = second.call(
            "session/load", {"sessionId": session_id, "cwd": str(tmp_path), "mcpServers": [server]}
        )
        assert "result" in reply
        again = second.response(_prompt(second, session_id, "refund ORD-7781"))
        assert again["result"]["stopReason"] == "end_turn"
        effects = again["result"]["_meta"]["acpBridge"]["effects"]
        assert [(e["ran"], e["reused"]) for e in effects] == [(False, True)]
        second.stop()
    assert len(calls(log, "refund")) == 1  # exactly once in total
    # Secrets: never in the trace or the session store (MCP-SECRET-001).
    assert SECRET not in trace.read_text()
    for stored in state.rglob("*"):
        if stored.is_file():
            assert SECRET.encode() not in stored.read_bytes(), stored
    assert "faults: refund" in trace.read_text()  # the trace itself was written


@pytest.mark.requirement("MCP-LIFE-003")
@pytest.mark.requirement("MCP-LIFE-004")
def test_close_end_of_input_and_cancel_leave_no_server_or_child_behind(tmp_path: Path) -> None:
    state, home = tmp_path / "state", tmp_path / "home"
    script = tmp_path / "spawn.json"
    script.write_text(
        json.dumps(
            {
                "name": "spawn",
                "description": "the server starts a grandchild, then the model pauses",
                "calls": [
                    {
                        "attempts": [
                            [
                                {"tool_call": "mcp__one__spawn_child", "arguments": {}},
                                {"finish": "auto"},
                            ]
                        ]
                    },
                    {"attempts": [[{"text": "Started.", "delay_ms": 60_000}, {"finish": "stop"}]]},
                ],
            }
        )
    )
    log_one, log_two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    with StdioEditor(state, home, "--script", str(script)) as editor:
        editor.initialize()
        session = _new_session(editor, tmp_path, [fault_server(log_one, "one")])
        other = _new_session(editor, tmp_path, [fault_server(log_two, "two")])
        _prompt(editor, session, "start it")
        editor.read_until(_tool_done)
        [spawned] = calls(log_one, "spawn_child")
        editor.send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}
        )
        # session/close: its server and the server's child are gone (MCP-LIFE-003).
        reply = editor.call("session/close", {"sessionId": session})
        assert "result" in reply
        assert _gone(spawned["child"])
        assert _gone(spawned["pid"])
        # The other session's server is still there; end of input takes it down too.
        pending = _prompt(editor, other, "start it")  # waits for its server, then fails
        editor.read_until(_tool_done)
        [started] = calls(log_two, "started")
        assert not _gone(started["pid"], timeout=0)
        editor.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": other}})
        assert editor.response(pending)["result"]["stopReason"] == "cancelled"
        assert editor.stop() == 0
    assert _gone(started["pid"])
    assert _gone(spawned["child"])
