"""The directories a session is opened with, checked before anything stores them.

A path must be absolute and must not hold a NUL character (no file system accepts one, and a
store would keep it as given; ROBUST-TEXT-002). The offending value is quoted once, bounded
(RPC-ERR-003).
"""

from __future__ import annotations

from pathlib import Path

from acp_bridge.errors import InvalidParams

__all__ = ["absolute_path"]


def absolute_path(path: str, field: str) -> Path:
    """`path` as a `Path`, or -32602 naming `field`."""
    if "\x00" in path:
        raise InvalidParams.at(field, f"{field} contains a NUL character; send a real path")
    if not Path(path).is_absolute():
        raise InvalidParams.at(field, f"{field} must be an absolute path", got=path)
    return Path(path)
