"""Tool calls as the editor sees them: the `tool_call` and `tool_call_update` session updates,
their content (a content block, a diff, or a live terminal) and the places they touch.

`ToolCallUpdate` is the schema's bag of optional fields: it is what a permission request
shows. `ToolCallProgress` is the same bag sent as a `tool_call_update` session update; only
the fields that changed need to be set, and `content`/`locations` replace the old lists.
"""

from __future__ import annotations

import enum
from typing import Annotated, Literal, TypeAlias

from pydantic import Field, JsonValue, TypeAdapter

from acp_bridge.protocol._base import (
    UNION_CONFIG,
    AcpModel,
    DefaultOnError,
    SkipInvalidItems,
    UInt32,
)
from acp_bridge.protocol._content import ContentBlock

__all__ = [
    "TOOL_CALL_CONTENT",
    "ToolCall",
    "ToolCallContent",
    "ToolCallContentBlock",
    "ToolCallDiff",
    "ToolCallLocation",
    "ToolCallProgress",
    "ToolCallStatus",
    "ToolCallTerminal",
    "ToolCallUpdate",
    "ToolKind",
]


class ToolKind(enum.StrEnum):
    """What kind of tool runs; the editor picks an icon from it."""

    READ = "read"
    EDIT = "edit"
    DELETE = "delete"
    MOVE = "move"
    SEARCH = "search"
    EXECUTE = "execute"
    THINK = "think"
    FETCH = "fetch"
    SWITCH_MODE = "switch_mode"
    OTHER = "other"


class ToolCallStatus(enum.StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    FAILED = "failed"


class ToolCallContentBlock(AcpModel):
    """Tool call content `{"type": "content"}`: a plain content block."""

    type: Literal["content"] = "content"
    content: ContentBlock


class ToolCallDiff(AcpModel):
    """Tool call content `{"type": "diff"}`: a file change. `old_text` is None for a new file."""

    type: Literal["diff"] = "diff"
    path: str
    old_text: Annotated[str | None, DefaultOnError] = None
    new_text: str


class ToolCallTerminal(AcpModel):
    """Tool call content `{"type": "terminal"}`: an editor terminal shown live."""

    type: Literal["terminal"] = "terminal"
    terminal_id: str


ToolCallContent: TypeAlias = Annotated[
    ToolCallContentBlock | ToolCallDiff | ToolCallTerminal, Field(discriminator="type")
]

TOOL_CALL_CONTENT: TypeAdapter[ToolCallContent] = TypeAdapter(ToolCallContent, config=UNION_CONFIG)


class ToolCallLocation(AcpModel):
    """A file the tool touches (absolute path; 1-based line), so the editor can follow."""

    path: str
    line: Annotated[UInt32 | None, DefaultOnError] = None


class ToolCall(AcpModel):
    """Session update `tool_call`: a new tool call. `kind` and `status` default to `other` and
    `pending` on the editor's side when omitted."""

    session_update: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    title: str
    name: Annotated[str | None, DefaultOnError] = None
    kind: Annotated[ToolKind, DefaultOnError] = ToolKind.OTHER
    status: Annotated[ToolCallStatus, DefaultOnError] = ToolCallStatus.PENDING
    content: Annotated[list[ToolCallContent], SkipInvalidItems, DefaultOnError] = Field(
        default_factory=list
    )
    locations: Annotated[list[ToolCallLocation], SkipInvalidItems, DefaultOnError] = Field(
        default_factory=list
    )
    raw_input: Annotated[JsonValue, DefaultOnError] = None
    raw_output: Annotated[JsonValue, DefaultOnError] = None


class ToolCallUpdate(AcpModel):
    """A tool call's fields, all optional but the id (schema `ToolCallUpdate`). This is the
    `toolCall` of a permission request; as a session update use `ToolCallProgress`."""

    tool_call_id: str
    title: Annotated[str | None, DefaultOnError] = None
    name: Annotated[str | None, DefaultOnError] = None
    kind: Annotated[ToolKind | None, DefaultOnError] = None
    status: Annotated[ToolCallStatus | None, DefaultOnError] = None
    content: Annotated[list[ToolCallContent] | None, SkipInvalidItems, DefaultOnError] = None
    locations: Annotated[list[ToolCallLocation] | None, SkipInvalidItems, DefaultOnError] = None
    raw_input: Annotated[JsonValue, DefaultOnError] = None
    raw_output: Annotated[JsonValue, DefaultOnError] = None


class ToolCallProgress(ToolCallUpdate):
    """Session update `tool_call_update`: only the fields that changed."""

    session_update: Literal["tool_call_update"] = "tool_call_update"
