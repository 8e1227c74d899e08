"""Launching acp-bridge exactly as an editor does: a subprocess speaking ACP on its stdio.

`spawn_bridge(args)` runs `[sys.executable, "-m", "acp_bridge", *args]` with stdin and
stdout as pipes (the protocol) and stderr captured (the bridge's log) or passed through,
connects an `AcpClient` to it, and on exit closes stdin, waits for the bridge to exit on its
own, and kills it only if it does not.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream, Process

from acp_bridge.client._client import AcpClient, connect
from acp_bridge.client._permission import PermissionPolicy, allow_once

__all__ = ["BridgeProcess", "ProcessTransport", "bridge_command", "spawn_bridge"]


def bridge_command(args: Sequence[str] = ()) -> tuple[str, ...]:
    """The command line editors use to launch acp-bridge from this Python."""
    return (sys.executable, "-m", "acp_bridge", *args)


class ProcessTransport:
    """A `wire.Transport` over a child's stdout (receive) and stdin (send)."""

    def __init__(self, process: Process) -> None:
        if process.stdin is None or process.stdout is None:
            raise ValueError("the process needs piped stdin and stdout")
        self._stdin = process.stdin
        self._stdout = process.stdout

    async def receive(self) -> bytes:
        try:
            return await self._stdout.receive()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise anyio.EndOfStream from None

    async def send(self, data: bytes) -> None:
        await self._stdin.send(data)

    async def aclose(self) -> None:
        """Closes stdin only: the bridge sees end of input and finishes on its own."""
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await self._stdin.aclose()


@dataclass(slots=True)
class BridgeProcess:
    """A running acp-bridge child and the client connected to it."""

    argv: tuple[str, ...]
    pid: int
    client: AcpClient
    stderr: list[str] = field(default_factory=list)
    returncode: int | None = None

    @property
    def stderr_text(self) -> str:
        return "".join(self.stderr)


async def _drain(stream: ByteReceiveStream, sink: list[str]) -> None:
    # Always read stderr: a child blocked on a full stderr pipe would stop answering.
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
        async for chunk in stream:
            sink.append(chunk.decode("utf-8", errors="replace"))


@contextlib.asynccontextmanager
async def spawn_bridge(
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
    policy: PermissionPolicy = allow_once,
    capture_stderr: bool = True,
    exit_timeout: float = 10.0,
) -> AsyncIterator[BridgeProcess]:
    """Starts acp-bridge with `args` and yields it with a connected `AcpClient`.

    `env` replaces the child's environment when given. With `capture_stderr` the bridge's
    log is kept in `BridgeProcess.stderr`; otherwise it goes to this process's stderr.
    """
    argv = bridge_command(args)
    process = await anyio.open_process(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if capture_stderr else None,
        env=dict(env) if env is not None else None,
        cwd=cwd,
    )
    try:
        async with anyio.create_task_group() as tg:
            if process.stderr is not None:
                bridge_stderr: list[str] = []
                tg.start_soon(_drain, process.stderr, bridge_stderr)
            else:
                bridge_stderr = []
            async with connect(
                ProcessTransport(process), policy=policy, close_timeout=exit_timeout
            ) as client:
                bridge = BridgeProcess(argv, process.pid, client, bridge_stderr)
                yield bridge
            with anyio.move_on_after(exit_timeout):
                bridge.returncode = await process.wait()
            if bridge.returncode is None:
                process.kill()
                bridge.returncode = await process.wait()
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
            await process.aclose()
