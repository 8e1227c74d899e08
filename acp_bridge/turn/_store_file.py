"""Why a SQLite file of the state directory cannot be used, in words the wire may carry.

The effect ledger (`effects.sqlite3`) and the session store (`sessions.sqlite3`) name their
file, never its full path, in what reaches the editor (CONF-STATE-001, EFFECT-OPEN-001): the
full path and SQLite's own words go to the stderr log. `file_problem` classifies an error met
while opening or writing one of them into a `StoreFileProblem`: a machine-readable `problem`,
one `detail` sentence and the `fix`.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from dataclasses import dataclass

__all__ = ["StoreFileProblem", "file_problem", "newer_schema"]

_CORRUPT = ("not a database", "malformed", "corrupt")
_READ_ONLY = ("readonly", "read-only", "permission denied", "access permission")
_FULL = ("disk is full", "no space")
_STATE_DIR_FIX = (
    "Set --state-dir or ACP_BRIDGE_STATE_DIR to a writable folder with free space (default "
    "~/.local/state/acp-bridge)"
)


@dataclass(frozen=True, slots=True)
class StoreFileProblem:
    """`problem`: `corrupt`, `read_only`, `full`, `newer_schema`, `busy` or `unusable`."""

    problem: str
    detail: str
    fix: str


_STARTED_ANEW = {
    "its effect ledger": "every effect the session journal recorded then counts as outcome unknown",
    "its session store": "the sessions stored in it are then no longer listed or loadable",
}


def file_problem(error: sqlite3.Error | OSError, filename: str, what: str) -> StoreFileProblem:
    """The problem behind `error`, met using `filename` (a bare file name) that holds `what`
    ("its effect ledger", "its session store")."""
    if isinstance(error, OSError):
        reason = os.strerror(error.errno) if error.errno else str(error)
        text = reason.lower()
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            text = "disk is full"
        elif error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            text = "readonly"
    else:
        reason = str(error)
        text = reason.lower()
    name = f"{what} {filename}"
    if any(word in text for word in _CORRUPT):
        return StoreFileProblem(
            "corrupt",
            f"{name} is damaged ({reason})",
            f"Restore {filename} and its -wal and -shm files from a backup, or move them out of "
            "the state directory so that a new, empty one is started ("
            f"{_STARTED_ANEW.get(what, 'what it held is then not used')})",
        )
    if any(word in text for word in _READ_ONLY):
        return StoreFileProblem(
            "read_only",
            f"{name} is not writable ({reason})",
            f"Make {filename} and its -wal and -shm files writable, or s{_STATE_DIR_FIX[1:]}",
        )
    if any(word in text for word in _FULL):
        return StoreFileProblem(
            "full",
            f"the disk holding {name} is full ({reason})",
            f"Free space, or s{_STATE_DIR_FIX[1:]}",
        )
    if "locked" in text or "busy" in text:
        return StoreFileProblem(
            "busy",
            f"{name} is locked by another process ({reason})",
            "Try again; if it stays locked, end the other acp-bridge or SQLite process using it",
        )
    return StoreFileProblem("unusable", f"{name} cannot be used ({reason})", _STATE_DIR_FIX)


def newer_schema(filename: str, what: str, found: int, known: int) -> StoreFileProblem:
    """A file written by a newer acp-bridge: it is never written by this one."""
    return StoreFileProblem(
        "newer_schema",
        f"{what} {filename} has schema {found}, newer than the {known} this acp-bridge knows",
        "Upgrade acp-bridge, or set --state-dir or ACP_BRIDGE_STATE_DIR to another folder",
    )
