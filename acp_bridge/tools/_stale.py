"""Stale-write protection: a write lands only on the file its diff was computed against.

`write_file` and `edit_file` read the file in their preview, show the diff, and write once
the user allowed it. The user (or a formatter, or `git checkout`) may change the file while
the permission prompt is open; writing then would lose that change (WS-STALE-001). So what a
tool read is stamped (`ReadStamp`): the SHA-256 of its UTF-8 text, or that there was no file,
and, read from the local disk, the file's identity (device, inode, size, mtime and ctime in
nanoseconds). Before writing, the file is checked to be still that:

- on the local disk a stat first: the same identity means the same file, unless it was
  modified so recently when it was read that a change within the same clock tick would keep
  its times (`racy`, as git's index calls it); otherwise its bytes are hashed a slice at a
  time, never held whole (WS-STALE-002);
- through the editor (`fs/read_text_file`: its buffer may hold unsaved edits) the file is
  read again with the request the preview made, hashed and dropped.

A file that changed, was created or was deleted meanwhile refuses the write with a
`ToolError` (nothing was written, so the outcome is not final: EFFECT-FINAL-001) telling the
model to read the file again and redo the change. The local check runs after the new text is
in its temporary file and right before the rename (`_local_write`), so the window left is
the rename itself. These functions block unless they are `async`.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from dataclasses import dataclass

from acp_bridge.errors import ToolError
from acp_bridge.tools._paths import WorkspacePath

__all__ = [
    "RACY_NS",
    "ReadStamp",
    "fresh_check",
    "local_stamp",
    "stale_reason",
    "stale_refusal",
    "text_stamp",
]

RACY_NS = 2_000_000_000  # a file modified this recently when read is hashed, not stat'ed
_SLICE = 256 * 1024  # characters encoded at a time to hash a text
_CHUNK = 256 * 1024  # bytes read at a time to hash a file

_now = time.time_ns  # the clock a read is judged racy by

_Identity = tuple[int, int, int, int, int]  # device, inode, size, mtime_ns, ctime_ns


def _identity(status: os.stat_result) -> _Identity:
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


@dataclass(frozen=True, slots=True)
class ReadStamp:
    """What a tool read a file as.

    Attributes:
        sha256: hex SHA-256 of the file's UTF-8 text; None when there was no such file.
        identity: the local file's stat identity; None through the editor or with no file.
        racy: the local file was modified within `RACY_NS` of the read, so its identity
            alone cannot tell a change made in the same clock tick: it is hashed.
        local: read from the local disk (else through the editor's `fs/read_text_file`).
    """

    sha256: str | None
    identity: _Identity | None = None
    racy: bool = False
    local: bool = False


def local_stamp(data: bytes | None, status: os.stat_result | None) -> ReadStamp:
    """The stamp of a local read: the bytes read and the `fstat` of the descriptor read."""
    if data is None or status is None:
        return ReadStamp(None, local=True)
    newest = max(status.st_mtime_ns, status.st_ctime_ns)
    racy = newest >= _now() - RACY_NS
    return ReadStamp(hashlib.sha256(data).hexdigest(), _identity(status), racy, local=True)


def text_stamp(text: str | None) -> ReadStamp:
    """The stamp of a text read through the editor (hashed a slice at a time)."""
    if text is None:
        return ReadStamp(None)
    digest = hashlib.sha256()
    for start in range(0, len(text), _SLICE):
        digest.update(text[start : start + _SLICE].encode("utf-8", "surrogatepass"))
    return ReadStamp(digest.hexdigest())


def fresh_check(stamp: ReadStamp | None) -> ReadStamp | None:
    """What a run that read the file itself (no preview of the same call) checks before it
    writes: a local stamp (a stat, right before the rename); through the editor nothing, since
    the read it just made is as fresh as a second one would be."""
    return stamp if stamp is not None and stamp.local else None


def _hash_entry(parent: int, name: str) -> str | None:
    """The SHA-256 of the regular file `name` in `parent`, read a chunk at a time; None when
    it is not a regular file any more (a link or a directory put in its place)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    fd = os.open(name, flags, dir_fd=parent)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        digest = hashlib.sha256()
        buffer = bytearray(_CHUNK)  # one buffer read into again and again: no chunk objects
        view = memoryview(buffer)
        while count := os.readv(fd, [buffer]):
            digest.update(view[:count])
        return digest.hexdigest()
    finally:
        os.close(fd)


def stale_reason(parent: int, name: str, stamp: ReadStamp) -> str | None:
    """How the entry `name` of the directory `parent` differs from what was read as `stamp`
    ("changed", "created", "deleted"), or None when it is still that (WS-STALE-002)."""
    try:
        status = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None if stamp.sha256 is None else "deleted"
    if stamp.sha256 is None:
        return "created"
    if not stamp.racy and _identity(status) == stamp.identity:
        return None
    try:
        now = _hash_entry(parent, name)
    except FileNotFoundError:
        return "deleted"
    return None if now == stamp.sha256 else "changed"


_WHAT = {
    "changed": "changed after it was read for this call's diff (edited by the user or another "
    "program while the permission was asked)",
    "created": "did not exist when this call was previewed and exists now (it was created "
    "meanwhile)",
    "deleted": "was deleted after it was read for this call's diff",
}


def stale_refusal(where: WorkspacePath, reason: str) -> ToolError:
    """The refusal of a stale write (WS-STALE-001): what happened, and what to do."""
    return ToolError(
        f"{where.display} {_WHAT[reason]}; nothing was written. Read {where.display} again "
        "and redo the change against what it holds now."
    )
