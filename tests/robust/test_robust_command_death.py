"""A running local command dies with the bridge, kill -9 included (issue 11.8).

A real `python -m acp_bridge` runs a scripted `run_command` itself (the editor offers no
terminal). The command tells the test its shell's pid through a FIFO, then sleeps before its
effect. The bridge is killed with SIGKILL; the test waits (bounded, through a pidfd) until the
command's shell has exited, then checks that the effect never happened.
"""

from __future__ import annotations

import os
import select
from pathlib import Path

import pytest
from sessions.stdio_kit import StdioEditor, is_update, write_script

pytestmark = pytest.mark.subprocess

BOUND = 30.0


def _read_fifo(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        data = b""
        while not data.endswith(b"\n"):
            ready, _, _ = select.select([fd], [], [], BOUND)
            assert ready, "the command did not report its pid in time"
            chunk = os.read(fd, 64)
            if not chunk and data:
                break
            data += chunk
        return data.decode()
    finally:
        os.close(fd)


def _wait_exit(pid: int) -> None:
    """Bounded wait until `pid` has exited (a zombie counts as exited)."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        ready, _, _ = select.select([handle], [], [], BOUND)
        assert ready, f"process {pid} is still running {BOUND} s after the bridge died"
    finally:
        os.close(handle)


@pytest.mark.requirement("ROBUST-PROC-001")
def test_kill_9_of_the_bridge_kills_the_running_command_before_its_effect(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    fifo = work / "pid.fifo"
    os.mkfifo(fifo)
    command = "echo $$ > pid.fifo; sleep 3; echo effect > effect.txt"
    script = write_script(
        tmp_path / "slow-command.json",
        "slow-command",
        [
            {
                "attempts": [
                    [
                        {"tool_call": "run_command", "arguments": {"command": command}},
                        {"finish": "auto"},
                    ]
                ]
            },
            {"attempts": [[{"text": "Done."}, {"finish": "stop"}]]},
        ],
    )
    with StdioEditor(tmp_path / "state", tmp_path / "home", "--script", str(script)) as editor:
        editor.initialize()
        session = editor.new_session(work)
        editor.request(
            "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}
        )
        # (answering the permission prompt on the way)
        editor.read_until(is_update("tool_call_update", status="in_progress"))
        shell = int(_read_fifo(fifo))  # the command runs now, its effect 3 s away
        import subprocess as _sp

        print(_sp.run(["ps", "-ef", "--forest"], capture_output=True, text=True).stdout[-3000:])
        print(editor.process.stderr_text()[-2000:])
        editor.kill()  # SIGKILL, reaped
    _wait_exit(shell)
    assert not (work / "effect.txt").exists(), "the command outlived the bridge"
