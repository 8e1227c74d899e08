"""Opening files beneath a workspace root without following links (issue 11 item 5).

A path checked with `resolve_path` can be changed before it is used: a directory swapped for a
symbolic link, or a hard link to a file outside. These helpers open by directory handle, one
component at a time with ``O_NOFOLLOW``, so a link swapped in anywhere on the way makes the
open fail instead of leading out; and `regular_file` checks the opened file itself (a regular
file with one link), never the path it was reached by.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["Step", "components", "file_problem", "open_beneath", "open_child", "walk_beneath"]

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK

Step = Callable[[int, int, str], int]
"""`step(dir_fd, index, name)`: a descriptor of the entry `name` (component `index`) of
`dir_fd`, opened no-follow; it raises to stop the walk (`dir_fd` stays the walk's to close)."""


def open_child(dir_fd: int, name: str, *, directory: bool) -> int:
    """Open the entry `name` of the directory `dir_fd`; a symbolic link raises `OSError`."""
    return os.open(name, _DIRECTORY_FLAGS if directory else _FILE_FLAGS, dir_fd=dir_fd)


def components(relative: str) -> list[str]:
    """The components of a POSIX path below a root (``""`` and ``"."`` dropped)."""
    return [part for part in relative.split("/") if part not in ("", ".")]


def walk_beneath(root: Path | int, parts: Sequence[str], step: Step) -> int:
    """Open `root`, then each of `parts` in turn through `step`, closing each parent.

    `root` is a workspace root (trusted, links already resolved) or a descriptor of a
    directory opened beneath one. Returns the last descriptor opened (a new one of `root`
    when `parts` is empty); whatever raises, no descriptor is leaked.
    """
    if isinstance(root, int):
        fd = os.open(".", _DIRECTORY_FLAGS, dir_fd=root)
    else:
        fd = os.open(root, _DIRECTORY_FLAGS)
    try:
        for index, part in enumerate(parts):
            child = step(fd, index, part)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_beneath(root: Path | int, relative: str, *, directory: bool) -> int:
    """Open `root/relative` walking down from `root` with no link followed on the way.

    `relative` is a POSIX path below `root` (``""`` or ``"."`` for `root` itself). Raises
    `OSError` (``ELOOP`` or ``ENOTDIR`` when a component is a link) and leaks no descriptor.
    The last component is opened as a directory only when `directory` is set (a file open
    also opens a directory, for the caller to `fstat`).
    """
    parts = components(relative)
    if ".." in parts:
        raise OSError(f"{relative}: '..' is not allowed here")
    last = len(parts) - 1

    def step(fd: int, index: int, name: str) -> int:
        return open_child(fd, name, directory=directory or index < last)

    return walk_beneath(root, parts, step)


def file_problem(fd: int) -> str | None:
    """Why the opened file must not be read through, or None for a regular file with one link.

    A file with several hard links may be a link to a file outside the workspace: it is not
    read through (TOOLS-005 covers the path; this covers the file itself).
    """
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode):
        return "not a regular file"
    if status.st_nlink != 1:
        return f"{status.st_nlink} hard links (one may lead outside the workspace)"
    return None
