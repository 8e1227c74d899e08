"""Files the user mentioned in a prompt (`resource_link`s), read for the model (CONTENT-006).

Confined to the session's roots like `read_file` (`resolve_path`), read through the editor's
`fs/read_text_file` when it advertised it (its unsaved buffers win), else from the local disk,
and bounded: the head of the file up to `limit` bytes, then a truncation marker.
"""

from __future__ import annotations

from dataclasses import dataclass

from acp_bridge.tools._base import ToolContext
from acp_bridge.tools._fs import read_text
from acp_bridge.tools._paths import resolve_path
from acp_bridge.tools._text import truncate_head, truncation_marker

__all__ = ["MENTION_LIMIT", "MentionedFile", "read_mentioned_file"]

MENTION_LIMIT = 64 * 1024
"""The most of one mentioned file the model is given (bytes of UTF-8)."""

_MAX_LOAD = 16 * 1024 * 1024
"""A local file bigger than this is not loaded at all (the model is told to use the tools)."""


@dataclass(frozen=True, slots=True)
class MentionedFile:
    """A mentioned file's text for the model: its path, size and whether it was cut."""

    path: str
    display: str
    text: str
    size: int
    truncated: bool


async def read_mentioned_file(
    ctx: ToolContext, path: str, limit: int = MENTION_LIMIT
) -> MentionedFile:
    """Read `path` for the model; raise `ToolError` (outside the roots, missing, binary...)."""
    where = resolve_path(path, ctx)
    text = await read_text(ctx, where, max_bytes=_MAX_LOAD)
    kept, omitted = truncate_head(text, limit)
    if omitted:
        separator = "" if kept.endswith("\n") else "\n"
        kept = f"{kept}{separator}{truncation_marker(omitted)}\nUse read_file for the rest."
    return MentionedFile(
        path=str(where.path),
        display=where.display,
        text=kept,
        size=len(text.encode("utf-8")),
        truncated=omitted > 0,
    )
