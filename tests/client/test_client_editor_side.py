"""The reference client's editor side: fs and terminals confined to the session, permission
policies, cancellation, and the recorded transcript. The agent is the real one, in-process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bridge import scripted_config
from client.wirekit import bridge_in_process, workspace

import acp_bridge.client as client_package
from acp_bridge.client import (
    AcpClient,
    PermissionAsked,
    allow_once,
    cancel_every_prompt,
    choose_option,
)
from acp_bridge.errors import InvalidParams, MethodNotFound, ResourceNotFound
from acp_bridge.providers.scripted import ScriptedProvider, loads_script

REFUND_FILE = Path("refunds") / "ORD-7781.txt"


def command_script(command: str) -> ScriptedProvider:
    """A model that runs `command` with run_command, then says it is done."""
    script = {
        "name": "run-it",
        "description": "Runs one command",
        "calls": [
            {
                "attempts": [
                    [
                        {"text": "Running it. "},
                        {"tool_call": "run_command", "arguments": {"command": command}},
                        {"finish": "auto"},
                    ]
                ]
            },
            {"attempts": [[{"text": "Done."}, {"finish": "stop"}]]},
        ],
    }
    return ScriptedProvider(loads_script(json.dumps(script)))


def test_public_names_are_exact() -> None:
    assert client_package.__all__ == sorted(client_package.__all__)
    assert set(client_package.__all__) == {
        "AcpClient",
        "BridgeProcess",
        "EditorEvent",
        "EditorView",
        "Entry",
        "MessageEntry",
        "MessageRole",
        "PermissionAsked",
        "PermissionPolicy",
        "PlanEntry",
        "ProcessTransport",
        "PromptOutcome",
        "PromptSent",
        "ReduceMode",
        "RetryNotice",
        "ToolCallEntry",
        "WireMessage",
        "allow_once",
        "bridge_command",
        "cancel_every_prompt",
        "choose_option",
        "connect",
        "reduce",
        "render_view",
        "spawn_bridge",
        "update_of",
    }
    for name in client_package.__all__:
        assert hasattr(client_package, name)


@pytest.mark.anyio
async def test_writes_land_on_disk_once_and_the_outcome_reports_the_turn(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    async with bridge_in_process(tmp_path / "state") as client:
        session_id = await client.new_session(ws)
        outcome = await client.prompt(session_id, "/help-desk-refund-file")
    assert (ws / REFUND_FILE).read_text().startswith("Full refund issued for order ORD-7781")
    writes = [m for m in client.transcript if m.message.get("method") == "fs/write_text_file"]
    assert len(writes) == 1
    assert [p.chosen_kind for p in outcome.permission_prompts] == ["allow_once"]
    assert outcome.billed_attempts == 3
    assert [(a["modelCall"], a["attempt"], a["state"]) for a in outcome.attempts] == [
        (1, 1, "abandoned"),
        (1, 2, "completed"),
        (2, 1, "completed"),
    ]
    assert outcome.bridge_report["turnId"] == f"{session_id}-turn1"
    assert isinstance(outcome.events[0], client_package.PromptSent)
    assert client.events(session_id)[-len(outcome.events) :] == outcome.events
    assert client.view(session_id).messages == outcome.view().messages


@pytest.mark.anyio
async def test_a_rejecting_policy_leaves_the_workspace_untouched(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    async with bridge_in_process(tmp_path / "state", policy=choose_option("reject_once")) as client:
        session_id = await client.new_session(ws)
        outcome = await client.prompt(session_id, "/help-desk-refund-file")
    assert not (ws / REFUND_FILE).exists()
    assert [t.status for t in outcome.view().tool_calls] == ["failed"]
    assert [p.chosen_kind for p in client.permission_prompts] == ["reject_once"]


@pytest.mark.anyio
async def test_a_cancelling_policy_ends_the_turn_cancelled(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    async with bridge_in_process(tmp_path / "state", policy=cancel_every_prompt) as client:
        session_id = await client.new_session(ws)
        outcome = await client.prompt(session_id, "/help-desk-refund-file")
    assert outcome.stop_reason == "cancelled"
    assert not (ws / REFUND_FILE).exists()
    (prompt,) = outcome.permission_prompts
    assert prompt.chosen is None


def test_choose_option_never_picks_more_than_asked() -> None:
    only_rejects = {"options": [{"optionId": "r", "kind": "reject_once"}]}
    assert choose_option("allow_always")(only_rejects) == "r"
    assert allow_once({"options": [{"optionId": "x", "kind": "allow_always"}]}) is None
    assert cancel_every_prompt(only_rejects) is None


@pytest.mark.anyio
async def test_commands_run_in_a_real_terminal_in_the_session_folder(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    config = scripted_config(
        tmp_path / "state", provider=command_script("pwd; echo from-the-terminal")
    )
    async with bridge_in_process(tmp_path / "state", config=config) as client:
        session_id = await client.new_session(ws)
        outcome = await client.prompt(session_id, "please run it")
    methods = [m.message.get("method") for m in client.transcript if m.direction == "received"]
    assert "terminal/create" in methods
    assert "terminal/release" in methods
    answers = [
        m.message["result"]
        for m in client.transcript
        if m.direction == "sent"
        and isinstance(m.message.get("result"), dict)
        and "output" in m.message["result"]
    ]
    assert any("from-the-terminal" in a["output"] and str(ws) in a["output"] for a in answers)
    assert [t.status for t in outcome.view().tool_calls] == ["completed"]
    assert outcome.view().messages == ("Running it. ", "Done.")


async def _session(client: AcpClient, tmp_path: Path) -> tuple[str, Path]:
    ws = workspace(tmp_path)
    return await client.new_session(ws), ws


@pytest.mark.anyio
async def test_fs_requests_are_confined_to_the_session_folder(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("not yours\n")
    async with bridge_in_process(tmp_path / "state") as client:
        session_id, ws = await _session(client, tmp_path)
        read = await client.handle_request(
            "fs/read_text_file",
            {"sessionId": session_id, "path": str(ws / "README.md"), "line": 3, "limit": 1},
        )
        assert read == {"content": "A test workspace.\n"}
        await client.handle_request(
            "fs/write_text_file",
            {"sessionId": session_id, "path": str(ws / "new" / "f.txt"), "content": "hi"},
        )
        assert (ws / "new" / "f.txt").read_text() == "hi"
        bad: list[dict[str, Any]] = [
            {"path": str(outside)},
            {"path": str(ws / ".." / "secret.txt")},
            {"path": "README.md"},
        ]
        for params in bad:
            with pytest.raises(InvalidParams):
                await client.handle_request(
                    "fs/read_text_file", {"sessionId": session_id, **params}
                )
            with pytest.raises(InvalidParams):
                await client.handle_request(
                    "fs/write_text_file", {"sessionId": session_id, "content": "x", **params}
                )
        with pytest.raises(ResourceNotFound):
            await client.handle_request(
                "fs/read_text_file", {"sessionId": session_id, "path": str(ws / "missing.txt")}
            )
        with pytest.raises(InvalidParams):
            await client.handle_request(
                "fs/read_text_file", {"sessionId": "sess_other", "path": str(outside)}
            )
        with pytest.raises(MethodNotFound):
            await client.handle_request("editor/open_file", {"sessionId": session_id})
    assert outside.read_text() == "not yours\n"


@pytest.mark.anyio
async def test_terminals_truncate_from_the_start_kill_and_release(tmp_path: Path) -> None:
    async with bridge_in_process(tmp_path / "state") as client:
        session_id, _ = await _session(client, tmp_path)
        base = {"sessionId": session_id}
        created = await client.handle_request(
            "terminal/create",
            {**base, "command": "printf", "args": ["aaaa\u00e9\u00e9bbbb"], "outputByteLimit": 7},
        )
        assert isinstance(created, dict)
        term = {**base, "terminalId": created["terminalId"]}
        assert await client.handle_request("terminal/wait_for_exit", term) == {
            "exitCode": 0,
            "signal": None,
        }
        output = await client.handle_request("terminal/output", term)
        # 7 bytes from the end is mid-"é": the cut moves to the next character boundary.
        assert output == {
            "output": "\u00e9bbbb",
            "truncated": True,
            "exitStatus": {"exitCode": 0, "signal": None},
        }

        sleeper = await client.handle_request(
            "terminal/create", {**base, "command": "sleep", "args": ["30"]}
        )
        assert isinstance(sleeper, dict)
        sleeping = {**base, "terminalId": sleeper["terminalId"]}
        assert await client.handle_request("terminal/kill", sleeping) == {}
        status = await client.handle_request("terminal/wait_for_exit", sleeping)
        assert status == {"exitCode": None, "signal": "SIGKILL"}
        assert await client.handle_request("terminal/release", sleeping) == {}
        with pytest.raises(InvalidParams):
            await client.handle_request("terminal/output", sleeping)

        with pytest.raises(InvalidParams):
            await client.handle_request(
                "terminal/create", {**base, "command": "pwd", "cwd": str(tmp_path)}
            )


def test_permission_asked_reads_the_request() -> None:
    asked = PermissionAsked(
        {
            "toolCall": {"toolCallId": "t9", "title": "Run ls"},
            "options": [{"optionId": "a", "kind": "allow_once"}],
        },
        "a",
    )
    assert (asked.tool_call_id, asked.title, asked.chosen_kind, asked.option_kinds) == (
        "t9",
        "Run ls",
        "allow_once",
        ("allow_once",),
    )
