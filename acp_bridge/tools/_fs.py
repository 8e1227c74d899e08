"""File access for the tools: through the editor when it advertised it, else the local disk.

Reads go through `fs/read_text_file` when the client advertised `fs.readTextFile` (the
editor's unsaved buffers win), writes through `fs/write_text_file` when it advertised
`fs.writeTextFile`; each capability is checked on its own, so a client that can read but not
write gets editor reads and local writes (TOOLS-001, TOOLS-002). Every path was checked by
`resolve_path` first, for the editor too. The local disk is used by directory handle with no
link followed (`_local`): the editor's `fs/*` take a path, so for them the check made when the
tool started is what holds (TOOLS-006), and a file with several hard links is refused before
the editor is asked (WS-LINK-001, WS-LINK-002).

Whether a file exists (new file: no old text in the diff) is asked of the local disk: the
agent runs on the editor's machine. Missing parent directories are created on the local disk
(beneath the root, no link followed) before a write, also when the editor writes, since
`fs/write_text_file` only promises to create the file itself.
"""

from __future__ import annotations

import logging

import anyio
import anyio.to_thread

from acp_bridge.errors import PeerError, PeerGone, ToolError
from acp_bridge.tools._base import EditorClient, ToolContext
from acp_bridge.tools._local import probe_local, read_local
from acp_bridge.tools._local_write import ensure_parents, stale_local, write_local
from acp_bridge.tools._paths import WorkspacePath
from acp_bridge.tools._stale import ReadStamp, local_stamp, stale_refusal, text_stamp

__all__ = [
    "check_unchanged",
    "editor_for_read",
    "editor_for_write",
    "read_existing",
    "read_stamped",
    "read_text",
    "slice_lines",
    "write_text",
]

logger = logging.getLogger(__name__)


def editor_for_read(ctx: ToolContext) -> EditorClient | None:
    """The editor, only when it advertised `fs.readTextFile` (TOOLS-001)."""
    editor = ctx.editor
    return editor if editor is not None and editor.capabilities.read_text_file else None


def editor_for_write(ctx: ToolContext) -> EditorClient | None:
    """The editor, only when it advertised `fs.writeTextFile` (TOOLS-001)."""
    editor = ctx.editor
    return editor if editor is not None and editor.capabilities.write_text_file else None


def _peer_error(action: str, where: WorkspacePath, error: PeerError) -> ToolError:
    return ToolError(f"the editor could not {action} {where.display}: {error.message}")


def _decode(data: bytes, where: WorkspacePath) -> str:
    if b"\x00" in data:
        raise ToolError(f"{where.display} looks like a binary file; only text files can be used")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{where.display} is not UTF-8 text") from None


def _read_decoded(
    where: WorkspacePath, max_bytes: int, stamped: bool
) -> list[tuple[str | None, ReadStamp | None]]:
    read = read_local(where, max_bytes)
    if read is None:
        return [(None, local_stamp(None, None))]
    data, status = read
    return [(_decode(data, where), local_stamp(data, status) if stamped else None)]


async def _read_local(
    where: WorkspacePath, max_bytes: int, *, stamped: bool = False
) -> tuple[str | None, ReadStamp | None]:
    # Decoded in the thread, and handed over in a box emptied here: a worker thread keeps its
    # last result until its next job, which held a big file's bytes (issue 15 item 5).
    box = await anyio.to_thread.run_sync(_read_decoded, where, max_bytes, stamped)
    return box.pop()


def slice_lines(text: str, line: int | None, limit: int | None) -> str:
    """Lines `line` (1-based) to `line + limit - 1` of `text`, line breaks kept."""
    if line is None and limit is None:
        return text
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    start = (line or 1) - 1
    end = None if limit is None else start + limit
    return "".join(lines[start:end])


async def read_text(
    ctx: ToolContext,
    where: WorkspacePath,
    *,
    max_bytes: int,
    line: int | None = None,
    limit: int | None = None,
) -> str:
    """The file's text (or the given line range), from the editor when it can read."""
    editor = editor_for_read(ctx)
    if editor is None:
        text, _ = await _read_local(where, max_bytes)
        if text is None:
            raise ToolError(f"{where.display}: no such file")
        return slice_lines(text, line, limit)
    await anyio.to_thread.run_sync(probe_local, where, "read")
    try:
        return await editor.read_text_file(str(where.path), line=line, limit=limit)
    except PeerGone:
        raise
    except PeerError as error:
        raise _peer_error("read", where, error) from None


async def read_existing(ctx: ToolContext, where: WorkspacePath, *, max_bytes: int) -> str | None:
    """The whole current text of the file, or None when there is no such file yet."""
    if editor_for_read(ctx) is None:
        text, _ = await _read_local(where, max_bytes)
        return text
    if not await anyio.to_thread.run_sync(probe_local, where, "read"):
        return None
    return await read_text(ctx, where, max_bytes=max_bytes)


async def read_stamped(
    ctx: ToolContext, where: WorkspacePath, *, max_bytes: int
) -> tuple[str | None, ReadStamp]:
    """`read_existing`, and the stamp a later write checks the file against (WS-STALE-001)."""
    if editor_for_read(ctx) is None:
        text, stamp = await _read_local(where, max_bytes, stamped=True)
        assert stamp is not None
        return text, stamp
    text = await read_existing(ctx, where, max_bytes=max_bytes)
    return text, text_stamp(text)


async def check_unchanged(
    ctx: ToolContext, where: WorkspacePath, stamp: ReadStamp, *, max_bytes: int
) -> None:
    """Raise the stale-write refusal unless the file is still what was read as `stamp`: a
    local stamp is checked on the disk, an editor's by reading the file again the same way
    (its answer hashed and dropped) (WS-STALE-001, WS-STALE-002)."""
    if stamp.local:
        reason = await anyio.to_thread.run_sync(stale_local, where, stamp)
    else:
        text = await read_existing(ctx, where, max_bytes=max_bytes)
        now = text_stamp(text).sha256
        del text
        reason = None if now == stamp.sha256 else _how(stamp.sha256, now)
    if reason is not None:
        raise stale_refusal(where, reason)


def _how(was: str | None, now: str | None) -> str:
    return "created" if was is None else "deleted" if now is None else "changed"


async def write_text(
    ctx: ToolContext,
    where: WorkspacePath,
    content: str,
    *,
    unchanged: ReadStamp | None = None,
    max_bytes: int = 0,
) -> None:
    """Write `content` (creating missing parent directories), through the editor when it can.

    With `unchanged`, only while the file is still what was read as that stamp: else the
    stale-write refusal, and nothing is written (WS-STALE-001). A local stamp with a local
    write is checked right before the rename that replaces the file.
    """
    editor = editor_for_write(ctx)
    if unchanged is not None and not (editor is None and unchanged.local):
        await check_unchanged(ctx, where, unchanged, max_bytes=max_bytes)
        unchanged = None
    if editor is None:
        await anyio.to_thread.run_sync(write_local, where, content, unchanged)
        return
    await anyio.to_thread.run_sync(ensure_parents, where)
    await anyio.to_thread.run_sync(probe_local, where, "written")
    try:
        await editor.write_text_file(str(where.path), content)
    except PeerGone:
        raise
    except PeerError as error:
        raise _peer_error("write", where, error) from None
    logger.debug("wrote %s through the editor", where.path)
