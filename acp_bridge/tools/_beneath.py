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
from pathlib import Path

__all__ = ["file_problem", "open_beneath", "open_child"]

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def open_child(dir_fd: int, name: str, *, directory: bool) -> int:
    """Open the entry `name` of the directory `dir_fd`; a symbolic link raises `OSError`."""
    return os.open(name, _DIRECTORY_FLAGS if directory else _FILE_FLAGS, dir_fd=dir_fd)


def open_beneath(root: Path | int, relative: str, *, directory: bool) -> int:
    """Open `root/relative` walking down from `root` with no link followed on the way.

    `root` is a workspace root (trusted, links already resolved) or a descriptor of a
    directory opened beneath one; `relative` is a POSIX path below it (``""`` or ``"."``
    for `root` itself). Raises `OSError` (``ELOOP`` or ``ENOTDIR`` when a component is a
    link) and leaks no descriptor. The last component is opened as a directory only when
    `directory` is set (a file open also opens a directory, for the caller to `fstat`).
    """
    parts = [part for part in relative.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise OSError(f"{relative}: '..' is not allowed here")
    if isinstance(root, int):
        fd = os.open(".", _DIRECTORY_FLAGS, dir_fd=root)
    else:
        fd = os.open(root, _DIRECTORY_FLAGS)
    try:
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            child = open_child(fd, part, directory=directory or not last)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


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
