"""The local disk beneath the workspace: files read, written and listed by directory handle.

`resolve_path` checks a path when the tool starts; the disk can change before it is used (a
directory swapped for a symbolic link, a hard link to a file outside put in its place: issue
11 item 5). So the local disk is never asked for a path. Every component below the session
root is opened relative to its parent's descriptor with ``O_NOFOLLOW`` (`_beneath`), and what
was opened is checked, not the path it was reached by (WS-RACE-001):

- a component that is a symbolic link now (it was not when the path was checked) refuses the
  call: nothing is read, written, created or listed through it;
- a read opens the file no-follow and reads it only when the opened file is a regular file
  with one link: a file with several hard links is refused, since nothing tells a link to a
  file outside from one inside (WS-LINK-002; search_files hides their matches alike);
- a write (`_local_write`) creates missing parents no-follow and replaces the file by a
  rename in its parent's descriptor, never writing through a link (WS-LINK-001, WS-WRITE-001);
- a listing opens the directory no-follow and scans it by descriptor.

Errors are `ToolError`s naming the path as the model sees it and the reason. These functions
block: the tools run them in a worker thread. `_local_write` writes on the walk and the
refusals defined here.
"""

from __future__ import annotations

import errno
import os
import stat

from acp_bridge.errors import ToolError
from acp_bridge.tools._beneath import components, open_child, walk_beneath
from acp_bridge.tools._paths import WorkspacePath

__all__ = [
    "list_local",
    "open_regular",
    "probe_local",
    "read_local",
    "refused",
    "too_many_links",
    "walk",
]

_CHANGED = "it changed after the path was checked; nothing was {}"


def _shown(where: WorkspacePath, parts: list[str], count: int) -> str:
    """The first `count` components of the path, as the model sees paths."""
    if count >= len(parts):
        return where.display
    below = "/".join(parts[:count])
    return below if not os.path.isabs(where.display) else str(where.root / below)


def _why(parent: int, name: str, error: OSError) -> str:
    """Why opening `name` in `parent` failed, from what the entry is now (not followed)."""
    try:
        status = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except OSError:
        return "no such file or directory" if error.errno == errno.ENOENT else str(error.strerror)
    if stat.S_ISLNK(status.st_mode):
        return "is a symbolic link now"
    if error.errno == errno.ENOTDIR and not stat.S_ISDIR(status.st_mode):
        return "is not a directory"
    return str(error.strerror or error)


def refused(shown: str, reason: str, action: str) -> ToolError:
    """`action` is what did not happen: "read", "written", "listed"."""
    if reason == "is a symbolic link now":
        return ToolError(f"{shown} {reason} ({_CHANGED.format(action)})")
    if reason == "is not a directory":
        return ToolError(f"{shown} is not a directory, so nothing below it can be {action}")
    return ToolError(f"{shown}: {reason}; nothing was {action}")


def _open_entry(
    parent: int, name: str, shown: str, action: str, *, directory: bool = True, missing: bool
) -> int:
    """The entry `name` of `parent`, opened no-follow; `ToolError` when it is a link (or not
    a directory, for a `directory`); `FileNotFoundError` passes through when `missing`."""
    try:
        return open_child(parent, name, directory=directory)
    except OSError as error:
        if missing and isinstance(error, FileNotFoundError):
            raise
        raise refused(shown, _why(parent, name, error), action) from None


def _make_directory(parent: int, name: str, shown: str) -> None:
    try:
        os.mkdir(name, dir_fd=parent)
    except FileExistsError:
        pass  # made meanwhile: opened no-follow like any other
    except OSError as error:
        reason = error.strerror or str(error)
        raise ToolError(f"cannot create the directory {shown}: {reason}") from None


def walk(where: WorkspacePath, count: int, *, action: str, create: bool = False) -> int:
    """A descriptor of the directory made of the root and the first `count` components.

    Raises `FileNotFoundError` when a component is missing and `create` is not set (else it
    is made), `ToolError` when one is a link or not a directory.
    """
    parts = components(where.relative)

    def step(parent: int, index: int, name: str) -> int:
        shown = _shown(where, parts, index + 1)
        try:
            return _open_entry(parent, name, shown, action, missing=True)
        except FileNotFoundError:
            if not create:
                raise
        _make_directory(parent, name, shown)
        return _open_entry(parent, name, shown, action, missing=False)

    return walk_beneath(where.root, parts[:count], step)


def _open_file(where: WorkspacePath) -> int | None:
    """The file, opened no-follow beneath its root; None when it (or a parent) is missing."""
    parts = components(where.relative)
    if not parts:
        raise ToolError(f"{where.display} is a directory; use list_directory")
    try:
        parent = walk(where, len(parts) - 1, action="read")
    except FileNotFoundError:
        return None
    try:
        return _open_entry(parent, parts[-1], where.display, "read", directory=False, missing=True)
    except FileNotFoundError:
        return None
    finally:
        os.close(parent)


def too_many_links(where: WorkspacePath, count: int, action: str) -> ToolError:
    return ToolError(
        f"{where.display} has {count} hard links, and one may be a file outside the workspace: "
        f"it is not {action} (a file with one link is); ask the user to copy it if it is needed"
    )


def open_regular(where: WorkspacePath, max_bytes: int) -> tuple[int, os.stat_result] | None:
    """The file opened for reading and its status, or None when there is no such file; refused
    unless it is a regular file with one link of at most `max_bytes` (WS-LINK-002)."""
    fd = _open_file(where)
    if fd is None:
        return None
    problem: ToolError | None = None
    try:
        status = os.fstat(fd)
    except OSError as error:
        problem = ToolError(f"cannot read {where.display}: {error.strerror or error}")
    else:
        if stat.S_ISDIR(status.st_mode):
            problem = ToolError(f"{where.display} is a directory; use list_directory")
        elif not stat.S_ISREG(status.st_mode):
            problem = ToolError(
                f"{where.display} is not a regular file; only text files can be used"
            )
        elif status.st_nlink > 1:
            problem = too_many_links(where, status.st_nlink, "read")
        elif status.st_size > max_bytes:
            problem = _too_big(where, status.st_size, max_bytes)
    if problem is not None:
        os.close(fd)
        raise problem
    return fd, status


def read_local(where: WorkspacePath, max_bytes: int) -> tuple[bytes, os.stat_result] | None:
    """The file's bytes and the status of the file read (for its `ReadStamp`), or None when
    there is no such file (WS-LINK-002, WS-RACE-001)."""
    opened = open_regular(where, max_bytes)
    if opened is None:
        return None
    fd, status = opened
    size = status.st_size
    try:
        chunks = [os.read(fd, size + 1)]
        size = len(chunks[0])
        while chunks[-1] and size <= max_bytes:  # the file grew, or a short read
            chunks.append(os.read(fd, min(max_bytes + 1 - size, 1 << 20)))
            size += len(chunks[-1])
        if size > max_bytes:
            raise _too_big(where, size, max_bytes)
        data = chunks[0] if len(chunks) <= 2 and not chunks[-1] else b"".join(chunks)
        return data, status
    except OSError as error:
        raise ToolError(f"cannot read {where.display}: {error.strerror or error}") from None
    finally:
        os.close(fd)


def _too_big(where: WorkspacePath, size: int, max_bytes: int) -> ToolError:
    return ToolError(
        f"{where.display} is {size} bytes, more than the {max_bytes} bytes a tool may load; "
        "use read_file with line and limit, or search_files to find the part you need"
    )


def probe_local(where: WorkspacePath, action: str) -> bool:
    """Whether the path names an entry now, asked beneath the root with no link followed.

    For the editor's `fs/*`, which follow whatever the path names: a file with several hard
    links is refused (`action`: "read" or "written") before the editor is asked.
    """
    fd = _open_file(where)
    if fd is None:
        return False
    try:
        status = os.fstat(fd)
    finally:
        os.close(fd)
    if stat.S_ISREG(status.st_mode) and status.st_nlink > 1:
        raise too_many_links(where, status.st_nlink, action)
    return True


def list_local(where: WorkspacePath) -> list[str]:
    """The directory's entries, sorted: directories end with ``/``, links with ``@``."""
    parts = components(where.relative)
    try:
        parent = walk(where, max(len(parts) - 1, 0), action="listed")
    except FileNotFoundError:
        raise ToolError(f"{where.display}: no such directory") from None
    try:
        fd = parent
        if parts:
            try:
                fd = open_child(parent, parts[-1], directory=True)
            except FileNotFoundError:
                raise ToolError(f"{where.display}: no such directory") from None
            except OSError as error:
                reason = _why(parent, parts[-1], error)
                if reason == "is not a directory":
                    raise ToolError(
                        f"{where.display} is a file, not a directory; use read_file"
                    ) from None
                raise refused(where.display, reason, "listed") from None
        try:
            names: list[str] = []
            with os.scandir(fd) as scan:
                for entry in scan:
                    if entry.is_symlink():
                        names.append(entry.name + "@")
                    elif entry.is_dir(follow_symlinks=False):
                        names.append(entry.name + "/")
                    else:
                        names.append(entry.name)
        except OSError as error:
            raise ToolError(f"cannot list {where.display}: {error.strerror or error}") from None
        finally:
            if fd != parent:
                os.close(fd)
    finally:
        os.close(parent)
    return sorted(names)
