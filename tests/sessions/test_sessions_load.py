"""session/load after a restart replays exactly what the editor showed, before it answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from bridge import scripted_config
from sessions.sesskit import EditorLog, comparable, load, serving, settle, view_of

from acp_bridge.client import RetryNotice

pytestmark = pytest.mark.anyio

# The scripted model reports usage: the last usage_update closes the replay (USAGE-006).
REPLAY_KINDS = {
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "usage_update",
}


def _workspace(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# Demo\n\nA small demo project.\n")
    return work


@pytest.mark.requirement("SESS-030")
@pytest.mark.requirement("SESS-031")
@pytest.mark.requirement("SESS-040")
async def test_load_after_restart_reduces_to_what_the_editor_showed(tmp_path: Path) -> None:
    work, state = _workspace(tmp_path), tmp_path / "state"
    prompts = [
        "/tool-loop-break-second-call",  # a tool loop whose second model call is retried
        "/broken-thought",  # thoughts, a break during them, a signature
        "/help-desk-refund-file",  # a write_file asked about and run, then a reset
    ]
    async with serving(scripted_config(state)) as editor:
        log = EditorLog(editor)
        await editor.initialize()
        session_id = await editor.new_session(work)
        for text in prompts:
            reply = await log.prompt(session_id, text)
            assert reply["result"]["stopReason"] == "end_turn"
        shown = log.view(session_id)
    assert any(isinstance(e, RetryNotice) for e in shown.entries)  # resets were live
    assert (work / "refunds" / "ORD-7781.txt").exists()

    async with serving(scripted_config(state)) as editor:
        init = await editor.initialize()
        assert init["agentCapabilities"]["loadSession"] is True
        assert init["agentCapabilities"]["sessionCapabilities"] == {
            "list": {},
            "resume": {},
            "close": {},
            "delete": {},
            "additionalDirectories": {},
        }
        reply, replayed = await load(editor, session_id, work)
        assert set(reply["result"]) >= {"modes", "configOptions"}
        await settle()
        kinds = ["response" if "result" in m else m.get("method") for m in editor.received[1:]]
        after_response = [
            m["params"]["update"]["sessionUpdate"]
            for m in editor.received[1 + kinds.index("response") :]
            if m.get("method") == "session/update"
        ]
    assert {u["sessionUpdate"] for u in replayed} == REPLAY_KINDS
    assert not any((u.get("_meta") or {}).get("reset") for u in replayed)  # RESET-004
    assert after_response == ["available_commands_update"]
    assert comparable(view_of(replayed)) == comparable(shown)
    statuses = [u["status"] for u in replayed if u["sessionUpdate"] == "tool_call"]
    assert statuses == ["completed", "completed"]


@pytest.mark.requirement("SESS-030")
async def test_load_replays_the_prompt_blocks_as_sent(tmp_path: Path) -> None:
    work, state = _workspace(tmp_path), tmp_path / "state"
    blocks = [
        {"type": "text", "text": "Summarise "},
        {"type": "resource_link", "uri": "file:///x/README.md", "name": "README.md"},
        {
            "type": "resource",
            "resource": {"uri": "file:///x/notes.txt", "text": "notes", "mimeType": "text/plain"},
        },
    ]
    async with serving(scripted_config(state)) as editor:
        await editor.initialize()
        session_id = await editor.new_session(work)
        reply = await editor.request("session/prompt", {"sessionId": session_id, "prompt": blocks})
        assert reply["result"]["stopReason"] == "end_turn"
    async with serving(scripted_config(state)) as editor:
        await editor.initialize()
        _, replayed = await load(editor, session_id, work)
    user = [u for u in replayed if u["sessionUpdate"] == "user_message_chunk"]
    assert [u["content"] for u in user] == blocks
    assert len({u["messageId"] for u in user}) == 1


@pytest.mark.requirement("SESS-034")
async def test_load_honours_the_request_cwd_and_mcp_servers(tmp_path: Path) -> None:
    work, state = _workspace(tmp_path), tmp_path / "state"
    moved = tmp_path / "moved"
    moved.mkdir()
    (moved / "README.md").write_text("# Moved\n")
    async with serving(scripted_config(state)) as editor:
        await editor.initialize()
        session_id = await editor.new_session(work)
        await editor.prompt(session_id, "/hello")
    secret = {"name": "TOKEN", "value": "secret-token-value"}
    servers = [{"name": "files", "command": "/bin/mcp-files", "args": [], "env": [secret]}]
    async with serving(scripted_config(state)) as editor:
        await editor.initialize()
        reply, _ = await load(editor, session_id, moved, mcpServers=servers)
        assert "result" in reply
        listed = await editor.call("session/list", {})
        reply = await editor.prompt(session_id, "/tool-loop-break-second-call")
        assert reply["result"]["stopReason"] == "end_turn"
        reads = editor.requests_of("fs/read_text_file")
    assert listed["sessions"][0]["cwd"] == str(moved)
    # The tool read the README of the request's cwd, not the one the session started in.
    assert [r["params"]["path"] for r in reads] == [str(moved / "README.md")]
    stored = (state / "sessions.sqlite3").read_bytes()
    assert b"mcp-files" in stored
    assert b"secret-token-value" not in stored


@pytest.mark.requirement("SESS-050")
async def test_load_of_an_unknown_session_is_resource_not_found(tmp_path: Path) -> None:
    async with serving(scripted_config(tmp_path / "state")) as editor:
        await editor.initialize()
        reply, replayed = await load(editor, "sess_nope", tmp_path)
        relative = await editor.request(
            "session/load", {"sessionId": "sess_nope", "cwd": "rel", "mcpServers": []}
        )
    assert reply["error"]["code"] == -32002
    assert reply["error"]["data"] == {"sessionId": "sess_nope"}
    assert "Unknown session" in reply["error"]["message"]
    assert replayed == []
    assert relative["error"]["code"] == -32602
