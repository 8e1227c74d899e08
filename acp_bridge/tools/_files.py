"""`read_file` and `write_file`.

`read_file {path, line?, limit?}` returns the file's text (from the editor's buffer when the
client can read files), optionally from a 1-based `line` for `limit` lines; more than
`ToolLimits.read_bytes` is cut with a marker that says where to continue. Through the editor,
without a `limit`, only `ToolLimits.read_lines` lines are asked for (`fs/read_text_file`
takes `line`/`limit`, not bytes), so a huge file is never sent whole to be cut; the model is
told exactly which lines it got and where to continue (PERF-BIG-003).
`write_file {path, content}` replaces or creates the file, creating missing parent
directories; its preview carries the diff (old text None for a new file) the user approves.
Writing the same content twice leaves the same file: the tool is idempotent by nature.
The run writes only while the file is still what its preview read (WS-STALE-001: a stat on
the local disk, a re-read through the editor); a file changed, created or deleted while the
permission was asked is left as it is and the call fails, telling the model to read it again.
So the run reports the diff its preview read and showed (PERF-BIG-006), and reads the file
for its diff only when it runs without a preview of the same call.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field

from acp_bridge._json import JsonObject
from acp_bridge.tools._args import optional_int, required_str
from acp_bridge.tools._base import (
    DiffContent,
    Location,
    ToolContext,
    ToolKind,
    ToolOutcome,
    ToolPreview,
)
from acp_bridge.tools._fs import editor_for_read, read_stamped, read_text, write_text
from acp_bridge.tools._paths import WorkspacePath, resolve_path
from acp_bridge.tools._stale import ReadStamp, fresh_check
from acp_bridge.tools._text import ToolLimits, truncate_head, truncation_marker

__all__ = ["ReadFile", "WriteFile"]

logger = logging.getLogger(__name__)

_PATH: JsonObject = {
    "type": "string",
    "description": "File path, relative to the working directory or absolute inside the workspace.",
}

_READ_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "path": _PATH,
        "line": {
            "type": "integer",
            "description": "1-based line to start reading at (default: the first line).",
        },
        "limit": {
            "type": "integer",
            "description": "How many lines to read (default: to the end of the file).",
        },
    },
    "required": ["path"],
}

_WRITE_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "path": _PATH,
        "content": {"type": "string", "description": "The complete new content of the file."},
    },
    "required": ["path", "content"],
}


def _range_label(line: int | None, limit: int | None) -> str:
    if line is None and limit is None:
        return ""
    first = line or 1
    if limit is None:
        return f" (from line {first})"
    return f" (lines {first}-{first + limit - 1})"


def _line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


@dataclass(frozen=True, slots=True)
class ReadFile:
    """Read a text file, or a range of its lines."""

    limits: ToolLimits = field(default_factory=ToolLimits)

    name = "read_file"
    ignores_unknown_arguments = True  # EFFECT-CANON-001: other keys cannot matter
    kind = ToolKind.READ
    side_effect = False
    description = (
        "Read a UTF-8 text file of the workspace. Returns the exact text (no line numbers), "
        "so it can be quoted in edit_file. Use `line` and `limit` to read part of a long file."
    )

    @property
    def parameters(self) -> JsonObject:
        return copy.deepcopy(_READ_PARAMETERS)

    async def preview(self, arguments: JsonObject, ctx: ToolContext) -> ToolPreview:
        where = resolve_path(required_str(arguments, "path"), ctx)
        line = optional_int(arguments, "line", minimum=1)
        limit = optional_int(arguments, "limit", minimum=1)
        return ToolPreview(
            title=f"Read {where.display}{_range_label(line, limit)}",
            kind=self.kind,
            locations=(Location(str(where.path), line),),
            permission_scope=self.name,
            scope_label="reading files",
        )

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolOutcome:
        where = resolve_path(required_str(arguments, "path"), ctx)
        line = optional_int(arguments, "line", minimum=1)
        limit = optional_int(arguments, "limit", minimum=1)
        bounded = limit is None and editor_for_read(ctx) is not None
        if bounded:  # PERF-BIG-003: ask the editor for a page, one line more to see the rest
            limit = self.limits.read_lines + 1
        text = await read_text(
            ctx, where, max_bytes=self.limits.max_file_bytes, line=line, limit=limit
        )
        total: int | None = None  # the file's lines, when the whole file was read
        more = False
        if bounded:
            text, more = _first_lines(text, self.limits.read_lines)
        elif editor_for_read(ctx) is None and line is None and limit is None:
            total = _line_count(text)
        kept, omitted = truncate_head(text, self.limits.read_bytes)
        first = line or 1
        if omitted or more:
            shown = kept.count("\n")
            last = first + shown - (0 if kept.endswith("\n") or not kept else -1) - 1
            of = f" of {total}" if total is not None else ""
            goes_on = "" if total is not None else "; the file goes on"
            separator = "" if kept.endswith("\n") or not kept else "\n"
            marker = f"{truncation_marker(omitted)}\n" if omitted else ""
            for_model = (
                f"{kept}{separator}{marker}Lines {first}-{last}{of} shown{goes_on}. "
                f"Continue with read_file line={first + shown}."
            )
        elif not text:
            for_model = "(empty file)" if line is None else f"(no lines from line {line})"
        else:
            for_model = text
        return ToolOutcome(
            ok=True,
            for_model=for_model,
            raw_output={
                "path": str(where.path),
                "bytes": len(text.encode("utf-8")),
                "truncated": omitted > 0 or more,
            },
        )


def _first_lines(text: str, count: int) -> tuple[str, bool]:
    """The first `count` lines of `text`, and whether anything follows them."""
    end = -1
    for _ in range(count):
        end = text.find("\n", end + 1)
        if end == -1:
            return text, False
    return text[: end + 1], end + 1 < len(text)


@dataclass(frozen=True, slots=True)
class _PreviewedWrite:
    """What a write's preview read, left in `ToolContext.memo` for its run."""

    path: str
    content: str
    old_text: str | None
    stamp: ReadStamp


@dataclass(frozen=True, slots=True)
class WriteFile:
    """Create or replace a whole file."""

    limits: ToolLimits = field(default_factory=ToolLimits)

    name = "write_file"
    ignores_unknown_arguments = True  # EFFECT-CANON-001: other keys cannot matter
    kind = ToolKind.EDIT
    side_effect = True
    description = (
        "Create a file or replace its whole content. Missing parent directories are created. "
        "To change part of an existing file, prefer edit_file."
    )

    @property
    def parameters(self) -> JsonObject:
        return copy.deepcopy(_WRITE_PARAMETERS)

    async def preview(self, arguments: JsonObject, ctx: ToolContext) -> ToolPreview:
        where = resolve_path(required_str(arguments, "path"), ctx)
        content = required_str(arguments, "content", allow_empty=True)
        old_text, stamp = await read_stamped(ctx, where, max_bytes=self.limits.max_file_bytes)
        path = str(where.path)
        ctx.memo[self.name] = _PreviewedWrite(path, content, old_text, stamp)
        return ToolPreview(
            title=f"Write {where.display}",
            kind=self.kind,
            locations=(Location(path),),
            content=(DiffContent(path=path, new_text=content, old_text=old_text),),
            permission_scope=self.name,
            scope_label="writing files",
        )

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolOutcome:
        where = resolve_path(required_str(arguments, "path"), ctx)
        content = required_str(arguments, "content", allow_empty=True)
        old_text, stamp = await self._old_text(where, content, ctx)
        logger.debug("write_file %s (effect %s)", where.path, ctx.effect_key)
        limit = self.limits.max_file_bytes
        await write_text(ctx, where, content, unchanged=stamp, max_bytes=limit)
        size = len(content.encode("utf-8"))
        verb = "Created" if old_text is None else "Wrote"
        path = str(where.path)
        return ToolOutcome(
            ok=True,
            for_model=f"{verb} {where.display} ({size} bytes, {_line_count(content)} lines).",
            content=(DiffContent(path=path, new_text=content, old_text=old_text),),
            raw_output={"path": path, "bytes": size, "created": old_text is None},
        )

    async def _old_text(
        self, where: WorkspacePath, content: str, ctx: ToolContext
    ) -> tuple[str | None, ReadStamp | None]:
        """The text the file held and its stamp: what the preview of this very call read and
        showed (the diff the user approved), else (a run with no preview) what it holds now."""
        previewed = ctx.memo.pop(self.name, None)
        if (
            isinstance(previewed, _PreviewedWrite)
            and previewed.path == str(where.path)
            and (previewed.content is content or previewed.content == content)
        ):
            return previewed.old_text, previewed.stamp
        old_text, stamp = await read_stamped(ctx, where, max_bytes=self.limits.max_file_bytes)
        return old_text, fresh_check(stamp)
