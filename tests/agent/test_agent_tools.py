"""Tools through the editor or locally, behind the permission gate (issue 5), in-process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config
from editor import choose

from acp_bridge.providers.scripted import ScriptedProvider, loads_script

pytestmark = pytest.mark.anyio

WORKSPACE_EDITS = {
    "name": "workspace-edits",
    "description": "write, edit, then run a command in one completed attempt",
    "calls": [
        {
            "attempts": [
                [
                    {"text": "Setting up. "},
                    {
                        "tool_call": "write_file",
                        "arguments": {"path": "notes/todo.txt", "content": "alpha\nbeta\n"},
                    },
                    {"finish": "auto"},
                ]
            ]
        },
        {
            "attempts": [
                [
                    {
                        "tool_call": "edit_file",
                        "arguments": {
                            "path": "notes/todo.txt",
                            "old_text": "beta",
                            "new_text": "gamma",
                        },
                    },
                    {"finish": "auto"},
                ]
            ]
        },
        {
            "attempts": [
                [
                    {
                        "tool_call": "run_command",
                        "arguments": {"command": "cat notes/todo.txt > notes/copy.txt"},
                    },
                    {"finish": "auto"},
                ]
            ]
        },
        {"attempts": [[{"text": "Done."}, {"finish": "stop"}]]},
    ],
}


def _provider() -> ScriptedProvider:
    return ScriptedProvider(loads_script(json.dumps(WORKSPACE_EDITS)), delay_ms=0)


async def _run(
    tmp_path: Path, name: str, **editor: Any
) -> tuple[Path, list[str], list[dict[str, Any]]]:
    workspace = tmp_path / name
    workspace.mkdir()
    config = scripted_config(tmp_path / f"state-{name}", provider=_provider())
    async with running_bridge(config, **editor) as ed:
        await ed.initialize()
        session = await ed.new_session(workspace)
        reply = await ed.prompt(session, "please set things up")
        assert reply["result"]["stopReason"] == "end_turn"
        methods = [r["method"] for r in ed.agent_requests]
        return workspace, methods, ed.updates(session)


@pytest.mark.requirement("AGENT-EDITOR-001")
async def test_same_turn_same_files_through_editor_or_disk(tmp_path: Path) -> None:
    via_editor, editor_methods, _ = await _run(tmp_path, "editor", fs=True, terminal=True)
    local, local_methods, _ = await _run(tmp_path, "local", fs=False, terminal=False)
    for workspace in (via_editor, local):
        assert (workspace / "notes/todo.txt").read_text() == "alpha\ngamma\n"
        assert (workspace / "notes/copy.txt").read_text() == "alpha\ngamma\n"
    # Through the editor: every file write and the command went over fs/* and terminal/*.
    assert editor_methods.count("fs/write_text_file") == 2
    assert "fs/read_text_file" in editor_methods
    assert editor_methods.index("terminal/create") < editor_methods.index("terminal/release")
    assert "terminal/wait_for_exit" in editor_methods
    # Without the capabilities no client method was called at all (ACP-CLIENTCAP).
    assert set(local_methods) == {"session/request_permission"}


@pytest.mark.requirement("AGENT-EDITOR-001")
async def test_edit_shows_its_diff_before_approval_and_terminal_is_embedded(tmp_path: Path) -> None:
    workspace, _, updates = await _run(tmp_path, "editor", fs=True, terminal=True)
    shown = [u for u in updates if u["sessionUpdate"] == "tool_call"]
    assert [u["kind"] for u in shown] == ["edit", "edit", "execute"]
    assert all(u["status"] == "pending" for u in shown)
    diff = shown[1]["content"][0]
    assert diff == {
        "type": "diff",
        "path": str(workspace / "notes/todo.txt"),
        "oldText": "alpha\nbeta\n",
        "newText": "alpha\ngamma\n",
    }
    assert shown[0]["content"][0]["oldText"] is None  # a new file
    terminal_updates = [
        c
        for u in updates
        if u["sessionUpdate"] == "tool_call_update"
        for c in u.get("content") or []
        if c["type"] == "terminal"
    ]
    assert terminal_updates
    assert terminal_updates[0]["terminalId"].startswith("term-")


@pytest.mark.requirement("TURN-003")
async def test_abandoned_write_and_command_never_shown_prompted_or_run(tmp_path: Path) -> None:
    config = scripted_config(tmp_path / "state")
    async with running_bridge(config, fs=True, terminal=True) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        reply = await ed.prompt(session, "/abandoned-write-and-command")
        assert reply["result"]["stopReason"] == "end_turn"
        updates = ed.updates(session)
        prompts = ed.requests_of("session/request_permission")
        methods = [r["method"] for r in ed.agent_requests]
    assert not (tmp_path / "abandoned.txt").exists()
    assert (tmp_path / "kept.txt").read_text() == "Written by the completed attempt.\n"
    shown = [u for u in updates if u["sessionUpdate"] == "tool_call"]
    assert [(u["title"], u["content"][0]["type"]) for u in shown] == [(shown[0]["title"], "diff")]
    assert "kept.txt" in shown[0]["content"][0]["path"]
    assert len(prompts) == 1
    assert "kept.txt" in json.dumps(prompts[0]["params"]["toolCall"])
    assert "terminal/create" not in methods
    assert methods.count("fs/write_text_file") == 1
    resets = [u for u in updates if (u.get("_meta") or {}).get("reset")]
    assert len(resets) == 1
    assert resets[0]["_meta"]["attempt"] == 2


@pytest.mark.requirement("TURN-004")
async def test_allow_always_is_remembered_for_the_session(tmp_path: Path) -> None:
    config = scripted_config(tmp_path / "state", provider=_provider())
    async with running_bridge(config, permission=choose("allow_always")) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        await ed.prompt(session, "first")
        first = len(ed.requests_of("session/request_permission"))
        (tmp_path / "notes/todo.txt").write_text("alpha\nbeta\n")
        await ed.prompt(session, "second")
        second = len(ed.requests_of("session/request_permission"))
    # write_file + edit_file share "editing files"? Each tool is remembered on its own.
    assert first == 3
    assert second == first


async def test_reject_gives_failed_tool_call_and_model_continues(tmp_path: Path) -> None:
    config = scripted_config(tmp_path / "state", provider=_provider())
    async with running_bridge(config, permission=choose("reject_once")) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        reply = await ed.prompt(session, "go")
        updates = ed.updates(session)
    assert reply["result"]["stopReason"] == "end_turn"
    assert not (tmp_path / "notes").exists()
    failed = [
        u
        for u in updates
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") == "failed"
    ]
    assert len(failed) == 3
