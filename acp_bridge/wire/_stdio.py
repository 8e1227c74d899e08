"""The stdio transport. It owns fd 1 so that nothing but protocol lines can reach stdout.

On entry it moves the protocol onto private duplicates of fd 0 and fd 1, points fd 1 at
stderr and fd 0 at /dev/null, and rebinds `sys.stdout`/`sys.stdin` accordingly: a stray
`print`, a C library writing to fd 1, or a child process inheriting stdout all land on
stderr (ACP transports: the agent MUST NOT write anything but ACP messages to stdout).
Pipes and ttys are driven non-blocking through the event loop; a regular file (stdout
redirected to a file) is written directly, since it never blocks for long.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import sys
from collections.abc import AsyncIterator

import anyio

__all__ = ["ClaimedStdio", "StdioTransport", "open_stdio"]

_READ_CHUNK = 256 * 1024


def _pollable(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


class StdioTransport:
    """Reads protocol bytes from one fd and writes them to another."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._read_pollable = _pollable(read_fd)
        self._write_pollable = _pollable(write_fd)
        self._saved_flags: list[tuple[int, bool]] = []
        for fd, pollable in ((read_fd, self._read_pollable), (write_fd, self._write_pollable)):
            if pollable:
                self._saved_flags.append((fd, os.get_blocking(fd)))
                os.set_blocking(fd, False)
        self._closed = False

    async def receive(self) -> bytes:
        while True:
            try:
                data = os.read(self._read_fd, _READ_CHUNK)
            except BlockingIOError:
                await anyio.wait_readable(self._read_fd)
                continue
            except OSError as exc:
                raise anyio.EndOfStream from exc
            if not data:
                raise anyio.EndOfStream
            return data

    async def send(self, data: bytes) -> None:
        # The common case: the whole line fits in the pipe at once, no await needed.
        written = self._write_some(data)
        if written == len(data):
            return
        view = memoryview(data)[written:]
        # Shielded: a cancelled writer must never leave half a line on the wire.
        with anyio.CancelScope(shield=True):
            while view:
                if self._write_pollable:  # a regular file cannot be polled; it never blocks long
                    await anyio.wait_writable(self._write_fd)
                view = view[self._write_some(view) :]

    def _write_some(self, data: bytes | memoryview) -> int:
        try:
            return os.write(self._write_fd, data)
        except BlockingIOError:
            return 0
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        for fd, blocking in self._saved_flags:
            with contextlib.suppress(OSError):
                os.set_blocking(fd, blocking)


class ClaimedStdio:
    """The protocol's private duplicates of fd 0 and fd 1, with fd 0/1 redirected away.

    Claim it as early as possible (before configuration is loaded), so that nothing the
    process does can reach the protocol's stdout; `release()` restores everything.
    """

    def __init__(self) -> None:
        sys.stdout.flush()
        self.read_fd = os.dup(0)
        self.write_fd = os.dup(1)
        self._saved = (sys.stdout, sys.stdin)
        os.dup2(2, 1)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        sys.stdout = io.TextIOWrapper(
            io.FileIO(1, "w", closefd=False),
            encoding="utf-8",
            errors="replace",
            line_buffering=True,
        )
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
        self._released = False

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        sys.stdout, sys.stdin = self._saved
        os.dup2(self.write_fd, 1)
        os.dup2(self.read_fd, 0)
        os.close(self.write_fd)
        os.close(self.read_fd)


@contextlib.asynccontextmanager
async def open_stdio(claimed: ClaimedStdio | None = None) -> AsyncIterator[StdioTransport]:
    """Serves the protocol on stdin/stdout for the duration of the block.

    Pass a `ClaimedStdio` taken earlier to keep it (it is released when the block ends).
    """
    claim = claimed or ClaimedStdio()
    transport = StdioTransport(claim.read_fd, claim.write_fd)
    try:
        yield transport
    finally:
        await transport.aclose()
        claim.release()
