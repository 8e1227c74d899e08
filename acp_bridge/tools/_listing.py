"""`list_directory {path}`: the entries of one directory of the workspace.

ACP has no editor method for listing, so this always reads the local disk, confined like
every path. Entries are sorted by name; directories end with ``/`` and symbolic links with
``@`` (their target is not followed). The directory is opened beneath its root with no link
followed and read by descriptor (`_local`, WS-RACE-001). At most `ToolLimits.list_max_entries`
are shown.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import anyio
import anyio.to_thread

from acp_bridge._json import JsonObject
from acp_bridge.tools._args import required_str
from acp_bridge.tools._base import (
    Location,
    TextContent,
    ToolContext,
    ToolKind,
    ToolOutcome,
    ToolPreview,
)
from acp_bridge.tools._local import list_local
from acp_bridge.tools._paths import resolve_path
from acp_bridge.tools._text import ToolLimits, fenced

__all__ = ["ListDirectory"]

_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": 'Directory path, relative to the working directory ("." for the '
            "working directory itself) or absolute inside the workspace.",
        },
    },
    "required": ["path"],
}


@dataclass(frozen=True, slots=True)
class ListDirectory:
    """List one directory (not recursive)."""

    limits: ToolLimits = field(default_factory=ToolLimits)

    name = "list_directory"
    ignores_unknown_arguments = True  # EFFECT-CANON-001: other keys cannot matter
    kind = ToolKind.READ
    side_effect = False
    description = (
        "List the entries of a directory of the workspace (not recursive). Directories end "
        "with '/', symbolic links with '@'."
    )

    @property
    def parameters(self) -> JsonObject:
        return copy.deepcopy(_PARAMETERS)

    async def preview(self, arguments: JsonObject, ctx: ToolContext) -> ToolPreview:
        where = resolve_path(required_str(arguments, "path", allow_empty=True), ctx)
        return ToolPreview(
            title=f"List {where.display}",
            kind=self.kind,
            locations=(Location(str(where.path)),),
            permission_scope=self.name,
            scope_label="listing directories",
        )

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolOutcome:
        where = resolve_path(required_str(arguments, "path", allow_empty=True), ctx)
        names = await anyio.to_thread.run_sync(list_local, where)
        limit = self.limits.list_max_entries
        shown = names[:limit]
        text = "\n".join(shown) if shown else "(empty directory)"
        if len(names) > limit:
            text += f"\n[... {len(names) - limit} more entries not shown ...]"
        return ToolOutcome(
            ok=True,
            for_model=text,
            content=(TextContent(fenced(text)),),
            raw_output={"path": str(where.path), "entries": len(names)},
        )
