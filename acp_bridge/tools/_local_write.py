"""Writing the local disk beneath the workspace: parents made and files replaced atomically.

The rules are `_local`'s (WS-RACE-001): every component is opened relative to its parent's
descriptor with ``O_NOFOLLOW``. A write creates missing parents with ``mkdirat``, each opened
no-follow; refuses an existing file with several hard links (WS-LINK-001); writes the new text
to a fresh temporary file made ``O_CREAT | O_EXCL | O_NOFOLLOW`` in the parent's descriptor,
with the old file's permission bits, and renames it over the name in that same descriptor, so
a link put there at the last moment is replaced, never written through; a failed write leaves
the file as it was (WS-WRITE-001). Given the stamp of what the tool read, the file is checked
to be still that after the new text is in the temporary file and right before the rename; a
file changed, created or deleted meanwhile is left as it is, the temporary file removed
(WS-STALE-001, `_stale`). These functions block: the tools run them in a worker thread.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat

from acp_bridge.errors import ToolError
from acp_bridge.tools._beneath import components
from acp_bridge.tools._local import refused, too_many_links, walk
from acp_bridge.tools._paths import WorkspacePath
from acp_bridge.tools._stale import ReadStamp, stale_reason, stale_refusal

__all__ = ["ensure_parents", "stale_local", "write_local"]

_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_SLICE = 256 * 1024  # characters encoded at a time when writing (about 3 slices alive)


def _existing_mode(where: WorkspacePath, parent: int, name: str) -> int | None:
    """The permission bits of the file being replaced, None for a new file; refuses links."""
    try:
        status = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(status.st_mode):
        raise refused(where.display, "is a symbolic link now", "written")
    if stat.S_ISDIR(status.st_mode):
        raise ToolError(f"{where.display} is a directory; it cannot be written as a file")
    if not stat.S_ISREG(status.st_mode):
        raise ToolError(f"{where.display} is not a regular file; it is not written")
    if status.st_nlink > 1:
        raise too_many_links(where, status.st_nlink, "written")
    return stat.S_IMODE(status.st_mode)


def ensure_parents(where: WorkspacePath) -> None:
    """Create the missing parent directories beneath the root, no link followed."""
    parts = components(where.relative)
    os.close(walk(where, max(len(parts) - 1, 0), action="written", create=True))


def _write_new(parent: int, temp: str, text: str, mode: int | None) -> None:
    fd = os.open(temp, _TEMP_FLAGS, 0o666 if mode is None else mode, dir_fd=parent)
    try:
        if mode is not None:
            os.fchmod(fd, mode)  # exactly the old bits, whatever the umask
        for start in range(0, len(text), _SLICE):  # encoded a slice at a time: no second copy
            view = memoryview(text[start : start + _SLICE].encode("utf-8"))
            while view:
                view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def stale_local(where: WorkspacePath, stamp: ReadStamp) -> str | None:
    """How the file on the local disk differs from what was read as `stamp`, or None."""
    parts = components(where.relative)
    if not parts:
        raise ToolError(f"{where.display} is a directory; it cannot be written as a file")
    try:
        parent = walk(where, len(parts) - 1, action="written")
    except FileNotFoundError:  # a parent is missing, so the file is too
        return None if stamp.sha256 is None else "deleted"
    try:
        return stale_reason(parent, parts[-1], stamp)
    except OSError as error:
        reason = error.strerror or str(error)
        raise ToolError(f"cannot check {where.display}: {reason}; nothing was written") from None
    finally:
        os.close(parent)


def write_local(where: WorkspacePath, text: str, unchanged: ReadStamp | None = None) -> None:
    """Replace (or create) the file with `text` atomically (WS-WRITE-001, WS-LINK-001), with
    `unchanged` only while it is still what was read as that stamp (WS-STALE-001)."""
    parts = components(where.relative)
    if not parts:
        raise ToolError(f"{where.display} is a directory; it cannot be written as a file")
    try:  # a file that was read is replaced in place: its parents are not made again
        existed = unchanged is not None and unchanged.sha256 is not None
        parent = walk(where, len(parts) - 1, action="written", create=not existed)
    except FileNotFoundError:
        raise stale_refusal(where, "deleted") from None
    name = parts[-1]
    temp = f".{name[:200]}.{secrets.token_hex(6)}.tmp"
    renamed = False
    try:
        _write_new(parent, temp, text, _existing_mode(where, parent, name))
        stale = None if unchanged is None else stale_reason(parent, name, unchanged)
        if stale is not None:
            raise stale_refusal(where, stale)
        os.rename(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
        renamed = True
    except OSError as error:
        reason = error.strerror or str(error)
        raise ToolError(f"cannot write {where.display}: {reason}; the file is unchanged") from None
    finally:
        if not renamed:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=parent)
        os.close(parent)
