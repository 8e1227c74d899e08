"""acpx, the headless ACP client from npm, drives `python -m acp_bridge` as an editor would.

acpx (tests/npm, installed by `npm ci` there) prints the raw JSON-RPC transcript of both
directions with `--format json --json-strict`. Every message the bridge sent in it is validated
against the official ACP v1 schema, and the tests check what acpx did with it: the answer, the
file edits and commands that went through acpx's own `fs/*` and `terminal/*` methods, and the
reset marker of a retried stream. Each test has its own HOME (acpx keeps state in ~/.acpx).
"""

from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from acp_schema import AgentWireValidator, agent_sent_defs, client_sent_defs
from subprocess_util import (
    WireMessage,
    acpx_executable,
    bridge_argv,
    console_script,
    isolated_env,
    run_bounded,
    split_transcript,
)

pytestmark = [pytest.mark.npm, pytest.mark.subprocess]

REPO = Path(__file__).resolve().parents[2]
ACPX_TIMEOUT = 180.0


def _methods(defs: Any) -> frozenset[str]:
    return frozenset(defs.requests) | frozenset(defs.notifications)


@dataclass
class AcpxRun:
    """One acpx invocation: its process result and the transcript, split by sender."""

    result: subprocess.CompletedProcess[bytes]
    wire: list[WireMessage]
    validated: int

    def sent_by(self, sender: str) -> list[dict[str, Any]]:
        return [m.message for m in self.wire if m.sender == sender]

    def agent_requests(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.sent_by("agent") if m.get("method") == method and "id" in m]

    def client_answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """acpx's response to the agent's `request`."""
        seen = False
        for entry in self.wire:
            if entry.message is request:
                seen = True
            elif (
                seen
                and entry.sender == "client"
                and "method" not in entry.message
                and entry.message.get("id") == request["id"]
            ):
                return entry.message
        raise AssertionError(f"acpx never answered {request}")

    def updates(self) -> list[dict[str, Any]]:
        return [
            m["params"]["update"]
            for m in self.sent_by("agent")
            if m.get("method") == "session/update"
        ]

    def chunks(self) -> list[dict[str, Any]]:
        return [u for u in self.updates() if u["sessionUpdate"] == "agent_message_chunk"]

    def prompt_result(self) -> dict[str, Any]:
        prompt_ids = [
            m["id"] for m in self.sent_by("client") if m.get("method") == "session/prompt"
        ]
        assert len(prompt_ids) == 1, prompt_ids
        answers = [
            m
            for m in self.sent_by("agent")
            if "method" not in m and m.get("id") == prompt_ids[0] and "result" in m
        ]
        assert len(answers) == 1, f"session/prompt answered {len(answers)} times"
        result: dict[str, Any] = answers[0]["result"]
        return result


def run_acpx(
    tmp_path: Path, prompt: str, *bridge_args: str, approve: str = "--approve-all"
) -> AcpxRun:
    """`acpx --agent "python -m acp_bridge ..." exec PROMPT` in tmp_path/workspace."""
    acpx = acpx_executable()
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    agent = shlex.join(bridge_argv("--state-dir", str(tmp_path / "state"), *bridge_args))
    argv = [
        str(acpx),
        "--agent",
        agent,
        "--cwd",
        str(workspace),
        approve,
        "--format",
        "json",
        "--json-strict",
        "--timeout",
        str(int(ACPX_TIMEOUT) - 30),
        "exec",
        prompt,
    ]
    result = run_bounded(
        argv, timeout=ACPX_TIMEOUT, env=isolated_env(tmp_path / "home"), cwd=workspace
    )
    assert result.returncode == 0, (
        f"acpx exited {result.returncode}\nstdout: {result.stdout[-3000:]!r}\n"
        f"stderr: {result.stderr[-3000:]!r}"
    )
    lines = result.stdout.splitlines()
    wire = split_transcript(lines, _methods(agent_sent_defs()), _methods(client_sent_defs()))
    validator = AgentWireValidator(strict_roots=True)
    for entry in wire:
        if entry.sender == "client":
            validator.note_client_message(entry.message)
        else:
            validator.check(entry.message)
    return AcpxRun(result, wire, validator.checked)


def text_of(chunks: list[dict[str, Any]]) -> str:
    return "".join(c["content"]["text"] for c in chunks)


def reset_markers(run: AcpxRun) -> list[int]:
    """Positions (among the message chunks) of chunks carrying the reset flag."""
    return [
        index
        for index, chunk in enumerate(run.chunks())
        if (chunk.get("_meta") or {}).get("reset") is True
    ]


@pytest.mark.requirement("EXT-001")
@pytest.mark.requirement("EXT-002")
def test_acpx_exec_one_shot_against_the_bridge(tmp_path: Path) -> None:
    run = run_acpx(tmp_path, "hello from acpx")
    client_methods = [m.get("method") for m in run.sent_by("client") if "method" in m]
    assert client_methods[:3] == ["initialize", "session/new", "session/prompt"]
    assert run.prompt_result()["stopReason"] == "end_turn"
    assert text_of(run.chunks()).startswith("Hello! You said: “hello from acpx”. ")
    # Every message the bridge sent was checked: 3 responses and the session updates.
    assert run.validated == len(run.sent_by("agent")) >= 3 + len(run.updates())
    assert reset_markers(run) == []


# A user's own script (spec/scripted-stream.md), played as the default: an edit of an existing
# file, a new file, and a command that reads the new file back and leaves a marker file.
EDIT_WRITE_RUN_SCRIPT: dict[str, Any] = {
    "name": "acpx-edit-write-run",
    "description": "Edits settings.ini, writes notes/acpx.txt, then runs a command over them",
    "calls": [
        {
            "attempts": [
                [
                    {"text": "Changing the colour, writing a note, then checking. "},
                    {
                        "tool_call": "edit_file",
                        "arguments": {
                            "path": "settings.ini",
                            "old_text": "colour = red",
                            "new_text": "colour = blue",
                        },
                    },
                    {
                        "tool_call": "write_file",
                        "arguments": {"path": "notes/acpx.txt", "content": "written via acpx\n"},
                    },
                    {
                        "tool_call": "run_command",
                        "arguments": {"command": "cat notes/acpx.txt settings.ini > ran.txt"},
                    },
                    {"finish": "auto"},
                ]
            ]
        },
        {"attempts": [[{"text": "All three steps are done."}, {"finish": "stop"}]]},
    ],
}


@pytest.mark.requirement("EXT-007")
def test_acpx_with_fs_and_terminal_lands_the_edit(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "settings.ini").write_text("[look]\ncolour = red\nsize = 3\n")
    script = tmp_path / "edit-write-run.json"
    script.write_text(json.dumps(EDIT_WRITE_RUN_SCRIPT))

    run = run_acpx(tmp_path, "please do the three steps", "--script", str(script))

    assert run.prompt_result()["stopReason"] == "end_turn"
    assert (workspace / "settings.ini").read_text() == "[look]\ncolour = blue\nsize = 3\n"
    assert (workspace / "notes" / "acpx.txt").read_text() == "written via acpx\n"
    assert (workspace / "ran.txt").read_text() == (
        "written via acpx\n[look]\ncolour = blue\nsize = 3\n"
    )
    # The files were written by acpx, on the bridge's fs/write_text_file requests ...
    writes = run.agent_requests("fs/write_text_file")
    assert sorted(Path(w["params"]["path"]).name for w in writes) == ["acpx.txt", "settings.ini"]
    for write in writes:
        assert Path(write["params"]["path"]).is_absolute()
        assert "error" not in run.client_answer(write)
    # ... and the command ran in an acpx terminal, which the bridge released.
    (create,) = run.agent_requests("terminal/create")
    assert create["params"]["args"][-1] == "cat notes/acpx.txt settings.ini > ran.txt"
    assert create["params"]["cwd"] == str(workspace)
    terminal_id = run.client_answer(create)["result"]["terminalId"]
    released = run.agent_requests("terminal/release")
    assert [r["params"]["terminalId"] for r in released] == [terminal_id]
    # Each of the three tool calls was asked about once (--approve-all allows once) and
    # completed; the edit was shown as a diff before approval.
    assert len(run.agent_requests("session/request_permission")) == 3
    statuses = [
        u["status"]
        for u in run.updates()
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") in ("completed", "failed")
    ]
    assert statuses == ["completed"] * 3
    edit_call = next(u for u in run.updates() if u["sessionUpdate"] == "tool_call")
    assert edit_call["kind"] == "edit"
    assert edit_call["content"][0]["type"] == "diff"
    assert "colour = blue" in edit_call["content"][0]["newText"]


@pytest.mark.requirement("EXT-008")
def test_acpx_sees_one_reset_marker_when_a_stream_breaks_mid_word(tmp_path: Path) -> None:
    run = run_acpx(tmp_path, "/broken-mid-word")
    assert run.prompt_result()["stopReason"] == "end_turn"
    chunks = run.chunks()
    (marker,) = reset_markers(run)
    # The marker is the first chunk of attempt 2: what came before is attempt 1's partial
    # text, what comes from it on is attempt 2's whole answer.
    assert chunks[marker]["_meta"]["attempt"] == 2
    assert chunks[marker]["_meta"]["reason"] == "stream_interrupted"
    assert text_of(chunks[:marker]) == "The stream broke in the middle of a wo"
    assert text_of(chunks[marker:]) == (
        "The stream broke in the middle of a word and the bridge retried it. "
        "You should read this sentence exactly once."
    )
    before = {c.get("messageId") for c in chunks[:marker]}
    after = {c.get("messageId") for c in chunks[marker:]}
    assert before.isdisjoint(after)


@pytest.mark.requirement("EXT-008")
def test_acpx_tool_call_broken_before_finish_writes_once(tmp_path: Path) -> None:
    run = run_acpx(tmp_path, "/tool-call-broken-before-finish")
    assert run.prompt_result()["stopReason"] == "end_turn"
    chunks = run.chunks()
    (marker,) = reset_markers(run)
    assert chunks[marker]["_meta"]["attempt"] == 2
    # Attempt 1 completed its write_file call before the break: it was neither shown, asked
    # about nor run. Attempt 2's call was, once, through acpx.
    assert text_of(chunks[:marker]) == "I will save a note in your workspace. The note is ready."
    assert len(run.agent_requests("session/request_permission")) == 1
    (write,) = run.agent_requests("fs/write_text_file")
    assert write["params"]["content"] == "Written once by acp-bridge's scripted model.\n"
    note = tmp_path / "workspace" / "scripted-note.txt"
    assert note.read_text() == "Written once by acp-bridge's scripted model.\n"
    tool_calls = [u for u in run.updates() if u["sessionUpdate"] == "tool_call"]
    assert len(tool_calls) == 1


@pytest.mark.requirement("EXT-009")
def test_the_acpx_editor_sample_runs(tmp_path: Path) -> None:
    """editor_samples/acpx/acp-bridge.sh, exactly as shipped, with the local acpx."""
    sample = REPO / "editor_samples" / "acpx" / "acp-bridge.sh"
    assert console_script().exists(), (
        f"the acp-bridge-agent console script is not installed beside {console_script()}"
    )
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = isolated_env(tmp_path / "home", {"ACPX": str(acpx_executable())})
    result = run_bounded(
        ["sh", str(sample), "/hello from the acpx sample"],
        timeout=ACPX_TIMEOUT,
        env=env,
        cwd=workspace,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    output = result.stdout.decode("utf-8")
    assert "Hello! You said: “from the acpx sample”." in output
    assert "end_turn" in output
