"""Checking the state directory before anything is stored in it (spec/configuration.md).

`check_state_dir` creates the folder when missing and proves it usable: a folder (not a
file), writable (a probe file is written and removed), with free space left. Each
failure is the one shared `StateDirUnusable` (errors.py), whose message names the setting
and the fix; the startup check prints it on stderr, and the connection answers the methods
that need the state with it while everything else keeps working (CONF-STATE-001).
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from acp_bridge.errors import StateDirUnusable

__all__ = ["MIN_FREE_BYTES", "check_state_dir", "state_error_from"]

MIN_FREE_BYTES = 1024 * 1024
"""Less free space than this (1 MiB) counts as a full disk: SQLite needs room for its WAL."""

_PROBE = ".acp-bridge-write-probe"
_FULL = (errno.ENOSPC, errno.EDQUOT)
_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


def state_error_from(error: OSError, what: str = "it") -> StateDirUnusable:
    """The `StateDirUnusable` for an OS error met while using the state directory."""
    reason = os.strerror(error.errno) if error.errno else str(error)
    if error.errno in _FULL:
        return StateDirUnusable("full", f"the disk holding it is full ({reason})")
    if error.errno in _READ_ONLY:
        return StateDirUnusable("read_only", f"{what} is not writable ({reason})")
    if error.errno in (errno.ENOTDIR, errno.EEXIST):
        return StateDirUnusable("not_a_directory", f"{what} is a file, not a folder")
    return StateDirUnusable("unusable", f"{what} cannot be used ({reason})")


def check_state_dir(path: Path) -> StateDirUnusable | None:
    """None when `path` can hold the ledger and sessions; else the precise problem."""
    if path.exists() and not path.is_dir():
        return StateDirUnusable("not_a_directory", "it is a file, not a folder")
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        problem = state_error_from(error, "it")
        if problem.problem == "unusable":
            reason = os.strerror(error.errno) if error.errno else str(error)
            return StateDirUnusable("cannot_create", f"it cannot be created ({reason})")
        return problem
    probe = path / _PROBE
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            # No fsync: this runs before `initialize` is answered (cold start); a full disk
            # already fails the write, and the free-space check below catches a nearly full one.
            os.write(fd, b"\0" * 4096)
        finally:
            os.close(fd)
    except OSError as error:
        return state_error_from(error, "it")
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()
    try:
        stats = os.statvfs(path)
    except OSError:
        return None
    free = stats.f_bavail * stats.f_frsize
    if free < MIN_FREE_BYTES:
        return StateDirUnusable("full", f"the disk holding it is full ({free // 1024} KiB free)")
    return None
