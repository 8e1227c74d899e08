"""Tools the model may call: files, edits, search and shell commands, through the editor or not.

Contract (see `_base` for the seam): a tool previews what it will do before the permission
gate asks (title, kind, locations, and for edits the diff), and runs only when allowed.
File access goes through the editor's `fs/*` when the client advertised it, and command
execution through its `terminal/*`; otherwise the local disk and local processes are used.
Every path, for the editor too, is confined to the session's roots.
"""

from typing import TYPE_CHECKING

from acp_bridge._exports import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from acp_bridge.tools._base import (
        DiffContent,
        EditorCapabilities,
        EditorClient,
        ExitStatus,
        Location,
        MediaContent,
        PlanEntry,
        TerminalContent,
        TerminalOutput,
        TextContent,
        Tool,
        ToolContent,
        ToolContext,
        ToolKind,
        ToolOutcome,
        ToolPreview,
    )
    from acp_bridge.tools._canonical import canonical_arguments
    from acp_bridge.tools._command import RunCommand, command_prefix, shell_argv
    from acp_bridge.tools._edit import EditFile, EditPlan, plan_edit
    from acp_bridge.tools._files import ReadFile, WriteFile
    from acp_bridge.tools._listing import ListDirectory
    from acp_bridge.tools._media import media_from_json, media_parts, media_to_json
    from acp_bridge.tools._mentions import MentionedFile, read_mentioned_file
    from acp_bridge.tools._paths import WorkspacePath, resolve_path
    from acp_bridge.tools._plan import UpdatePlan, plan_entries, stored_plan
    from acp_bridge.tools._registry import ToolRegistry, default_tools
    from acp_bridge.tools._search import SearchFiles
    from acp_bridge.tools._stored import diff_from_stored, diff_to_stored
    from acp_bridge.tools._text import ToolLimits

__all__ = [
    "DiffContent",
    "EditFile",
    "EditPlan",
    "EditorCapabilities",
    "EditorClient",
    "ExitStatus",
    "ListDirectory",
    "Location",
    "MediaContent",
    "MentionedFile",
    "PlanEntry",
    "ReadFile",
    "RunCommand",
    "SearchFiles",
    "TerminalContent",
    "TerminalOutput",
    "TextContent",
    "Tool",
    "ToolContent",
    "ToolContext",
    "ToolKind",
    "ToolLimits",
    "ToolOutcome",
    "ToolPreview",
    "ToolRegistry",
    "UpdatePlan",
    "WorkspacePath",
    "WriteFile",
    "canonical_arguments",
    "command_prefix",
    "default_tools",
    "diff_from_stored",
    "diff_to_stored",
    "media_from_json",
    "media_parts",
    "media_to_json",
    "plan_edit",
    "plan_entries",
    "read_mentioned_file",
    "resolve_path",
    "shell_argv",
    "stored_plan",
]

__getattr__, __dir__ = _lazy_exports(__name__)
