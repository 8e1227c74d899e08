"""run_command: local processes and editor terminals, timeouts, output limits, cancellation."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from acp_bridge.errors import PeerError
from acp_bridge.tools import (
    ExitStatus,
    RunCommand,
    TerminalContent,
    TextContent,
    ToolKind,
    ToolLimits,
    command_prefix,
)

pytestmark = pytest.mark.anyio

BOUND = 10.0  # every run here is bounded; none should come close


async def _gone(pid: int) -> None:
    """Wait (bounded) until process `pid` has exited; a zombie counts as exited."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        with anyio.fail_after(5):
            await anyio.wait_readable(handle)
    finally:
        os.close(handle)


# --- local processes --------------------------------------------------------------------


@pytest.mark.requirement("TOOLS-015")
async def test_exit_code_and_output_reach_the_model(make_ctx) -> None:
    with anyio.fail_after(BOUND):
        outcome = await RunCommand().run({"command": "echo out; echo err >&2; exit 3"}, make_ctx())
    assert outcome.ok  # a non-zero exit is information, not a tool failure
    assert outcome.for_model == "out\nerr\n[exit code 3]"
    assert outcome.raw_output == {
        "exit_code": 3,
        "signal": None,
        "timed_out": False,
        "terminal_id": None,
    }
    assert outcome.content == (TextContent("```\nout\nerr\n```\n[exit code 3]"),)


@pytest.mark.requirement("TOOLS-016")
async def test_local_command_runs_in_the_session_cwd(workspace: Path, make_ctx) -> None:
    with anyio.fail_after(BOUND):
        outcome = await RunCommand().run({"command": "pwd; ls"}, make_ctx())
    lines = outcome.for_model.splitlines()
    assert await anyio.Path(lines[0]).samefile(workspace)
    assert lines[1:] == ["notes.txt", "src", "[exit code 0]"]


async def test_no_output_and_death_by_signal_are_said(make_ctx) -> None:
    with anyio.fail_after(BOUND):
        quiet = await RunCommand().run({"command": "true"}, make_ctx())
        killed = await RunCommand().run({"command": "kill -9 $$"}, make_ctx())
    assert quiet.for_model == "(no output)\n[exit code 0]"
    assert killed.for_model == "(no output)\n[killed by SIGKILL]"
    assert killed.ok


@pytest.mark.requirement("TOOLS-010")
async def test_timeout_kills_the_command(make_ctx) -> None:
    with anyio.fail_after(BOUND):
        outcome = await RunCommand().run(
            {"command": "echo started; sleep 30", "timeout_seconds": 0.5}, make_ctx()
        )
    assert not outcome.ok
    assert outcome.for_model == "started\n[timed out after 0.5 s; the command was killed]"
    assert outcome.raw_output == {
        "exit_code": None,
        "signal": "SIGKILL",
        "timed_out": True,
        "terminal_id": None,
    }


@pytest.mark.requirement("TOOLS-010")
async def test_timeout_kills_the_whole_process_group(make_ctx) -> None:
    with anyio.fail_after(BOUND):
        outcome = await RunCommand().run(
            {"command": "sleep 30 & echo $!; wait", "timeout_seconds": 0.5}, make_ctx()
        )
        assert not outcome.ok
        await _gone(int(outcome.for_model.splitlines()[0]))  # the background child too


@pytest.mark.requirement("TOOLS-010")
async def test_cancellation_kills_the_local_command(make_ctx, tmp_path: Path) -> None:
    fifo = tmp_path / "pid.fifo"
    os.mkfifo(fifo)
    command = f"echo $$ > {fifo}; exec sleep 30"
    with anyio.fail_after(BOUND):
        async with anyio.create_task_group() as group:
            group.start_soon(RunCommand().run, {"command": command}, make_ctx())
            pid = int(await anyio.to_thread.run_sync(fifo.read_text, abandon_on_cancel=True))
            group.cancel_scope.cancel()
        await _gone(pid)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # and reaped


@pytest.mark.requirement("TOOLS-010")
@pytest.mark.requirement("TOOLS-011")
async def test_long_output_is_cut_for_the_model_and_kept_for_the_editor(make_ctx) -> None:
    tool = RunCommand(ToolLimits(model_output_bytes=200))
    with anyio.fail_after(BOUND):
        outcome = await tool.run({"command": "seq 1 5000"}, make_ctx())
    whole = "".join(f"{n}\n" for n in range(1, 5001))
    body, ending = outcome.for_model.rsplit("\n", 1)
    assert ending == "[exit code 0]"
    assert body.startswith("1\n2\n3\n")
    assert body.endswith("4999\n5000")
    assert "more bytes truncated ...]" in body
    assert len(body.encode()) < 300
    assert outcome.content == (TextContent(f"```\n{whole}```\n[exit code 0]"),)


@pytest.mark.requirement("TOOLS-010")
async def test_captured_output_is_bounded_too(make_ctx) -> None:
    tool = RunCommand(ToolLimits(command_capture_bytes=1_000, model_output_bytes=10_000))
    with anyio.fail_after(BOUND):
        outcome = await tool.run({"command": "seq 1 100000"}, make_ctx())
    assert outcome.for_model.startswith("1\n2\n")
    assert outcome.for_model.endswith("99999\n100000\n[exit code 0]")
    assert "more bytes truncated ...]" in outcome.for_model
    assert len(outcome.for_model.encode()) < 1_200


# --- editor terminals -------------------------------------------------------------------


def _recording_report(editor):
    async def report(content) -> None:
        (terminal,) = content
        assert isinstance(terminal, TerminalContent)
        editor.calls.append(("report", terminal.terminal_id))

    return report


@pytest.mark.requirement("TOOLS-003")
@pytest.mark.requirement("TOOLS-004")
async def test_terminal_is_created_embedded_awaited_read_and_released(
    workspace: Path, make_ctx, make_editor
) -> None:
    editor = make_editor(script=lambda command, args: ("hello\n", ExitStatus(exit_code=0)))
    ctx = make_ctx(editor, report=_recording_report(editor))
    with anyio.fail_after(BOUND):
        outcome = await RunCommand().run({"command": "echo hello > made.txt"}, ctx)
    assert editor.calls == [
        ("terminal/create", editor.terminals["term-1"].command),
        ("report", "term-1"),
        ("terminal/wait_for_exit", "term-1"),
        ("terminal/output", "term-1"),
        ("terminal/release", "term-1"),
    ]
    terminal = editor.terminals["term-1"]
    assert Path(terminal.command).name in {"bash", "sh"}
    assert terminal.args == ["-c", "echo hello > made.txt"]
    assert terminal.cwd == str(workspace)
    assert terminal.output_byte_limit == ToolLimits().command_capture_bytes
    assert not (workspace / "made.txt").exists()  # it ran in the editor, not here
    assert outcome.ok
    assert outcome.for_model == "hello\n[exit code 0]"
    assert outcome.content == (TerminalContent("term-1"),)


@pytest.mark.requirement("TOOLS-004")
@pytest.mark.requirement("TOOLS-010")
async def test_terminal_timeout_kills_then_releases(make_ctx, make_editor) -> None:
    editor = make_editor(script=lambda command, args: ("partial\n", None))  # never ends
    tool = RunCommand(ToolLimits(max_timeout_seconds=0.2))
    with anyio.fail_after(BOUND):
        outcome = await tool.run({"command": "sleep 30", "timeout_seconds": 100}, make_ctx(editor))
    assert editor.methods() == [
        "terminal/create",
        "terminal/wait_for_exit",
        "terminal/kill",
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
    ]
    assert not outcome.ok
    assert outcome.for_model == "partial\n[timed out after 0.2 s; the command was killed]"


@pytest.mark.requirement("TOOLS-004")
async def test_cancellation_releases_the_terminal(make_ctx, make_editor) -> None:
    editor = make_editor(script=lambda command, args: ("", None))
    waiting = anyio.Event()

    async def report(content) -> None:
        waiting.set()

    with anyio.fail_after(BOUND):
        async with anyio.create_task_group() as group:
            group.start_soon(
                RunCommand().run, {"command": "sleep 30"}, make_ctx(editor, report=report)
            )
            await waiting.wait()
            group.cancel_scope.cancel()
    terminal = editor.terminals["term-1"]
    assert terminal.released
    assert terminal.killed
    assert editor.methods()[-1] == "terminal/release"


@pytest.mark.requirement("TOOLS-004")
async def test_cancellation_during_terminal_create_still_releases(make_ctx, make_editor) -> None:
    editor = make_editor(script=lambda command, args: ("", None))
    editor.create_gate = anyio.Event()
    with anyio.fail_after(BOUND):
        async with anyio.create_task_group() as group:
            group.start_soon(RunCommand().run, {"command": "sleep 30"}, make_ctx(editor))
            await editor.create_started.wait()
            group.cancel_scope.cancel()
            editor.create_gate.set()  # the editor answers after the cancel
    assert editor.methods() == ["terminal/create", "terminal/release"]
    assert editor.terminals["term-1"].released


@pytest.mark.requirement("TOOLS-004")
async def test_editor_error_is_a_tool_error_and_the_terminal_is_released(
    make_ctx, make_editor
) -> None:
    from acp_bridge.errors import ToolError

    editor = make_editor(fail={"terminal/output": PeerError(-32603, "pty closed")})
    with anyio.fail_after(BOUND), pytest.raises(ToolError, match="terminal failed: pty closed"):
        await RunCommand().run({"command": "true"}, make_ctx(editor))
    assert editor.methods()[-1] == "terminal/release"


@pytest.mark.requirement("TOOLS-001")
async def test_editor_without_terminal_runs_locally(workspace: Path, make_ctx, make_editor) -> None:
    editor = make_editor(terminal=False)
    with anyio.fail_after(BOUND):
        outcome = await RunCommand().run({"command": "echo hi > made.txt"}, make_ctx(editor))
    assert outcome.ok
    assert (workspace / "made.txt").read_text() == "hi\n"
    assert editor.calls == []


async def test_editor_truncated_output_is_said(make_ctx, make_editor) -> None:
    editor = make_editor(script=lambda command, args: ("tail end\n", ExitStatus(exit_code=1)))
    original = editor.terminal_output

    async def truncated(terminal_id: str):
        output = await original(terminal_id)
        return type(output)(output.output, True, output.exit_status)

    editor.terminal_output = truncated
    with anyio.fail_after(BOUND):
        outcome = await RunCommand().run({"command": "make"}, make_ctx(editor))
    assert outcome.for_model == "[... earlier output truncated ...]\ntail end\n[exit code 1]"


# --- preview and permission scope -------------------------------------------------------


@pytest.mark.requirement("TOOLS-014")
@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        ("git status --short", "git status"),
        ("git status", "git status"),
        ("  cargo build --release ", "cargo build"),
        ("npm run test -- --watch", "npm run test"),
        ("uv run pytest -q tests", "uv run pytest"),
        ("python -m pytest", "python"),
        ("ls", "ls"),
        ("cat /etc/hosts", "cat"),
        ('git "status"', "git status"),
        ("git status && rm -rf ~", "git status && rm -rf ~"),
        ("git log | head", "git log | head"),
        ("echo $(id)", "echo $(id)"),
        ("echo `id`", "echo `id`"),
        ("make > out.txt", "make > out.txt"),
        ("FOO=1 make", "FOO=1 make"),
        ("echo 'unbalanced", "echo 'unbalanced"),
    ],
)
def test_command_prefix(command: str, prefix: str) -> None:
    assert command_prefix(command) == prefix


@pytest.mark.requirement("TOOLS-014")
async def test_preview_names_the_command_and_its_permission_scope(make_ctx) -> None:
    preview = await RunCommand().preview({"command": "git status --short"}, make_ctx())
    assert preview.title == "Run `git status --short`"
    assert preview.kind is ToolKind.EXECUTE
    assert preview.permission_scope == "run_command:git status"
    assert preview.scope_label == "git status"
    assert preview.content == ()
    assert preview.inside_workspace is False
    script = "set -e\n" + "echo step\n" * 3
    long = await RunCommand().preview({"command": script}, make_ctx())
    assert long.title == "Run `set -e…`"
    assert long.content == (TextContent(f"```\n{script}```"),)  # the user sees all of it


async def test_bad_arguments_are_refused(make_ctx) -> None:
    from acp_bridge.errors import ToolError

    for arguments, message in [
        ({}, "`command` is required"),
        ({"command": "   "}, "must not be blank"),
        ({"command": "ls", "timeout_seconds": "soon"}, "must be a number"),
        ({"command": "ls", "timeout_seconds": 0}, "greater than 0"),
    ]:
        with pytest.raises(ToolError, match=message):
            await RunCommand().preview(arguments, make_ctx())
