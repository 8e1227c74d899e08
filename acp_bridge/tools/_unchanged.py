"""Whether a file still holds the text a preview read, without reading a second copy of it.

An edit's run must apply to what the file holds then, not to what its preview saw. For a
10 MB file, reading it whole again (its bytes, then its text) next to the preview's old and
new text made the run the peak of the turn (issue 15 item 5). On the local disk the file is
compared with the previewed text a slice at a time instead; through the editor, which only
answers `fs/read_text_file` whole, its answer is compared and dropped.
"""

from __future__ import annotations

import os

import anyio.to_thread

from acp_bridge.tools._base import ToolContext
from acp_bridge.tools._fs import editor_for_read, read_existing
from acp_bridge.tools._local import open_regular
from acp_bridge.tools._paths import WorkspacePath

__all__ = ["local_holds", "still_holds"]

_SLICE = 256 * 1024  # characters compared at a time: slice, its bytes, the bytes read


def _read_exactly(fd: int, count: int) -> bytes:
    parts = [os.read(fd, count)]
    got = len(parts[0])
    while parts[-1] and got < count:  # a short read
        parts.append(os.read(fd, count - got))
        got += len(parts[-1])
    return parts[0] if len(parts) == 1 else b"".join(parts)


def local_holds(where: WorkspacePath, text: str, max_bytes: int) -> bool:
    """Whether the file on the local disk is exactly `text` in UTF-8 (False when missing or
    unreadable: a fresh read then says why). Blocks: run it in a worker thread."""
    opened = open_regular(where, max_bytes)
    if opened is None:
        return False
    fd, _ = opened
    try:
        for start in range(0, len(text), _SLICE):
            expected = text[start : start + _SLICE].encode("utf-8", "surrogatepass")
            if _read_exactly(fd, len(expected)) != expected:
                return False
        return not os.read(fd, 1)
    except OSError:
        return False
    finally:
        os.close(fd)


async def still_holds(ctx: ToolContext, where: WorkspacePath, text: str, *, max_bytes: int) -> bool:
    """Whether the file, as the tools read it (the editor's buffer when it can read), is
    exactly `text`."""
    if editor_for_read(ctx) is None:
        return await anyio.to_thread.run_sync(local_holds, where, text, max_bytes)
    return await read_existing(ctx, where, max_bytes=max_bytes) == text
