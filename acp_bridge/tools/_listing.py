"""`list_directory {path}`: the entries of one directory of the workspace.

ACP has no editor method for listing, so this always reads the local disk, confined like
every path. Entries are sorted by name; directories end with ``/`` and symbolic links with
``@`` (their target is not followed). At most `ToolLimits.list_max_entries` are shown.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field

import anyio
import anyio.to_thread

from acp_bridge._json import JsonObject
from acp_bridge.errors import ToolError
from acp_bridge.tools._args import required_str
from acp_bridge.tools._base import (
    Location,
    TextContent,
    ToolContext,
    ToolKind,
    ToolOutcome,
    ToolPreview,
)
from acp_bridge.tools._paths import WorkspacePath, resolve_path
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


def _entries(where: WorkspacePath) -> list[str]:
    names: list[str] = []
    try:
        with os.scandir(where.real) as scan:
            for entry in scan:
                if entry.is_symlink():
                    names.append(entry.name + "@")
                elif entry.is_dir():
                    names.append(entry.name + "/")
                else:
                    names.append(entry.name)
    except FileNotFoundError:
        raise ToolError(f"{where.display}: no such directory") from None
    except NotADirectoryError:
        raise ToolError(f"{where.display} is a file, not a directory; use read_file") from None
    except OSError as error:
        raise ToolError(f"cannot list {where.display}: {error.strerror or error}") from None
    return sorted(names)


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
        names = await anyio.to_thread.run_sync(_entries, where)
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
