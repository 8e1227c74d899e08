"""Running a command locally, for a client without terminals.

The command runs in its own process group (a new session) with stdin closed and stderr merged
into stdout, as an editor terminal shows it. On timeout or cancellation the whole group gets
SIGKILL (TOOLS-010), so `sh -c "a | b"` and background children go too; the process is always
reaped before this returns. Output beyond `capture_bytes` keeps its head and tail with a
marker between. After the command exits, output still held open by a background child is
read for `DRAIN_GRACE_SECONDS` at most.

The group also dies with the bridge, however the bridge ends, kill -9 included
(ROBUST-PROC-001): beside each command runs a guard, a tiny `sh` in a session of its own whose
stdin is a pipe only the bridge holds open. It learns the command's group from the first line,
then blocks reading; when the bridge is gone the kernel closes the pipe, the read ends and the
guard kills the group. No signal handler or `prctl` is involved. When the command ends while
the bridge lives, the guard is stopped and reaped (background children keep running, as
before).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream, Process

from acp_bridge.errors import ToolError
from acp_bridge.tools._text import truncation_marker

__all__ = ["DRAIN_GRACE_SECONDS", "CommandResult", "run_local"]

DRAIN_GRACE_SECONDS = 2.0

# Line 1: the group to guard. Then end-of-file (the bridge is gone) kills it.
_GUARD = 'read -r group || exit 0; read -r _; kill -KILL "-$group" 2>/dev/null'
# The command starts only once its guard knows its group: "go" on stdin, then exec (same pid,
# so exit status and signals are the command's own). No "go" (the bridge died): never runs.
_GATE = 'read -r go && [ "$go" = go ] && exec "$@" </dev/null; exit 125'


@dataclass(frozen=True, slots=True)
class CommandResult:
    """How a command ended. `output` may carry a truncation marker; `signal` is e.g. "SIGKILL"."""

    output: str
    exit_code: int | None
    signal: str | None = None
    timed_out: bool = False
    output_truncated: bool = False


class _Capture:
    """Keeps the first and the last `limit / 2` bytes of a stream, and counts the rest."""

    def __init__(self, limit: int) -> None:
        self._half = max(limit // 2, 1)
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0

    def add(self, chunk: bytes) -> None:
        self._total += len(chunk)
        room = self._half - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self._tail += chunk
            del self._tail[: max(len(self._tail) - self._half, 0)]

    @property
    def dropped(self) -> int:
        return self._total - len(self._head) - len(self._tail)

    def text(self) -> str:
        head = self._head.decode("utf-8", errors="replace")
        tail = self._tail.decode("utf-8", errors="replace")
        if not self.dropped:
            return (self._head + self._tail).decode("utf-8", errors="replace")
        return f"{head}\n{truncation_marker(self.dropped)}\n{tail}"


async def _drain(stream: ByteReceiveStream, capture: _Capture, done: anyio.Event) -> None:
    try:
        async for chunk in stream:
            capture.add(chunk)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        done.set()


def _kill_group(process: Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone
        os.killpg(process.pid, signal.SIGKILL)


def _signal_name(returncode: int | None) -> str | None:
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


async def run_local(
    argv: list[str], *, cwd: Path, time_limit: float, capture_bytes: int
) -> CommandResult:
    """Run `argv` in `cwd`; kill its process group after `time_limit` seconds or on cancel.

    `time_limit` is not a cancel scope: when it passes the result says `timed_out`.
    """
    capture = _Capture(capture_bytes)
    async with _guard() as lifeline:
        return await _run_guarded(argv, cwd, time_limit, capture, lifeline)


@contextlib.asynccontextmanager
async def _guard() -> AsyncIterator[int]:
    """Starts a guard; yields the write end of its lifeline (never inherited by children)."""
    read_end, lifeline = os.pipe()
    try:
        guard = await anyio.open_process(
            ["/bin/sh", "-c", _GUARD],
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as error:
        os.close(lifeline)
        raise ToolError(f"the command could not be started: {error.strerror or error}") from None
    finally:
        os.close(read_end)
    try:
        yield lifeline
    finally:
        os.close(lifeline)
        with contextlib.suppress(ProcessLookupError):
            guard.kill()
        with anyio.CancelScope(shield=True):
            await guard.aclose()


async def _run_guarded(
    argv: list[str], cwd: Path, time_limit: float, capture: _Capture, lifeline: int
) -> CommandResult:
    gate_read, gate = os.pipe()
    try:
        process = await anyio.open_process(
            ["/bin/sh", "-c", _GATE, "acp-bridge-command", *argv],
            cwd=cwd,
            stdin=gate_read,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as error:
        os.close(gate)
        raise ToolError(f"the command could not be started: {error.strerror or error}") from None
    finally:
        os.close(gate_read)
    try:
        os.write(lifeline, f"{process.pid}\n".encode())  # its group: it leads a new session
        os.write(gate, b"go\n")
    except OSError:
        _kill_group(process)
        await process.aclose()
        raise ToolError("the command could not be guarded (its guard process is gone)") from None
    finally:
        os.close(gate)
    timed_out = False
    async with process:
        try:
            assert process.stdout is not None
            async with anyio.create_task_group() as readers:
                drained = anyio.Event()
                readers.start_soon(_drain, process.stdout, capture, drained)
                with anyio.move_on_after(time_limit) as waiting:
                    await process.wait()
                if waiting.cancelled_caught:
                    timed_out = True
                    _kill_group(process)
                    await process.wait()
                with anyio.move_on_after(DRAIN_GRACE_SECONDS):
                    await drained.wait()
                readers.cancel_scope.cancel()
        finally:
            if process.returncode is None:
                # Cancelled (or failed) while the command runs: end all of it, then the
                # process is reaped by `aclose` on the way out.
                _kill_group(process)
    returncode = process.returncode
    return CommandResult(
        output=capture.text(),
        exit_code=returncode if returncode is not None and returncode >= 0 else None,
        signal=_signal_name(returncode),
        timed_out=timed_out,
        output_truncated=capture.dropped > 0,
    )
