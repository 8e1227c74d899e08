"""Who owns a session: one bridge connection at a time, identified across processes.

An `Owner` is a connection: this process's pid, the process's start time (so a recycled pid
is not mistaken for the original process) and a random token (two connections inside one
process are different owners). A stored owner is stale when its process is gone: no such
pid, a zombie, or a pid now used by a process that started at another time (SESS-016).
No timers are involved: a live process keeps its sessions until it releases them or dies.
"""

from __future__ import annotations

import functools
import os
import secrets
import sys
from dataclasses import dataclass, field

__all__ = ["Owner", "owner_alive", "process_start"]


def process_start(pid: int) -> str | None:
    """The start time of process `pid` in clock ticks since boot (Linux `/proc`), else None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            raw = stat.read().decode("ascii", "replace")
    except OSError:
        return None
    # Fields after the command name, which is in parentheses and may itself hold spaces.
    fields = raw[raw.rfind(")") + 2 :].split()
    if len(fields) < 20:
        return None
    return fields[19]  # field 22 of proc(5): starttime


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            raw = stat.read().decode("ascii", "replace")
    except OSError:
        return None
    rest = raw[raw.rfind(")") + 2 :].split()
    return rest[0] if rest else None


@functools.cache
def _own_start() -> str | None:
    return process_start(os.getpid())


@dataclass(frozen=True, slots=True)
class Owner:
    """One connection's identity as a session owner."""

    pid: int = field(default_factory=os.getpid)
    started: str | None = field(default_factory=_own_start)
    token: str = field(default_factory=lambda: secrets.token_hex(8))


def _pid_exists(pid: int) -> bool:
    if sys.platform == "win32":
        import ctypes

        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        code = ctypes.c_ulong()
        try:
            kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        finally:
            kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)  # signal 0: only checks that the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by another user
    return True


def owner_alive(pid: int | None, started: str | None) -> bool:
    """Whether the process that recorded itself as owner (`pid`, `started`) still runs."""
    if pid is None:
        return False
    if pid == os.getpid():
        return started is None or started == _own_start()
    if not _pid_exists(pid):
        return False
    if _state(pid) == "Z":
        return False  # killed, not yet reaped by its parent: it runs nothing any more
    current = process_start(pid)
    return not (started is not None and current is not None and current != started)
