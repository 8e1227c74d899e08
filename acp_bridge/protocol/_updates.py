"""`session/update`: everything the agent shows the editor about a session.

`SessionNotification` carries one `SessionUpdate`, a union tagged by `sessionUpdate`. The
v1 union is closed: these are all its stable kinds. Message chunks with the same
`messageId` belong to one message (ids are created by the agent); a changed id starts a
new message. `plan`, `available_commands_update` and `config_option_update` replace the
whole list each time; `session_info_update` is partial and `null` clears a field.
"""

from __future__ import annotations

import enum
from typing import Annotated, Literal, TypeAlias

from pydantic import Field, TypeAdapter

from acp_bridge.protocol._base import (
    UNION_CONFIG,
    AcpModel,
    DefaultOnError,
    EmptyOnError,
    SkipInvalidItems,
    UInt64,
)
from acp_bridge.protocol._config import SessionConfigOption
from acp_bridge.protocol._content import ContentBlock
from acp_bridge.protocol._tool_call import ToolCall, ToolCallProgress

__all__ = [
    "SESSION_UPDATE",
    "AgentMessageChunk",
    "AgentThoughtChunk",
    "AvailableCommand",
    "AvailableCommandsUpdate",
    "CompactionSummaryChunk",
    "CompactionUpdate",
    "ConfigOptionUpdate",
    "ContentChunk",
    "Cost",
    "CurrentModeUpdate",
    "Notice",
    "Plan",
    "PlanEntry",
    "PlanEntryPriority",
    "PlanEntryStatus",
    "SessionInfoUpdate",
    "SessionNotification",
    "SessionUpdate",
    "UnstructuredCommandInput",
    "UsageUpdate",
    "UserMessageChunk",
]


class ContentChunk(AcpModel):
    """One streamed piece of a message (schema `ContentChunk`); sent as one of the three
    tagged chunk kinds below."""

    content: ContentBlock
    message_id: Annotated[str | None, DefaultOnError] = None


class UserMessageChunk(ContentChunk):
    """Session update `user_message_chunk` (history replay on `session/load`)."""

    session_update: Literal["user_message_chunk"] = "user_message_chunk"


class AgentMessageChunk(ContentChunk):
    session_update: Literal["agent_message_chunk"] = "agent_message_chunk"


class AgentThoughtChunk(ContentChunk):
    session_update: Literal["agent_thought_chunk"] = "agent_thought_chunk"


class PlanEntryPriority(enum.StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class PlanEntryStatus(enum.StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


class PlanEntry(AcpModel):
    content: str
    priority: PlanEntryPriority
    status: PlanEntryStatus


class Plan(AcpModel):
    """Session update `plan`: the complete plan, replacing the previous one."""

    session_update: Literal["plan"] = "plan"
    entries: Annotated[list[PlanEntry], SkipInvalidItems, EmptyOnError]


class UnstructuredCommandInput(AcpModel):
    """A command that takes free text after its name; `hint` is shown as a placeholder."""

    hint: str


class AvailableCommand(AcpModel):
    """A slash command the user can run (`/name`)."""

    name: str
    description: str
    input: Annotated[UnstructuredCommandInput | None, DefaultOnError] = None


class AvailableCommandsUpdate(AcpModel):
    session_update: Literal["available_commands_update"] = "available_commands_update"
    available_commands: Annotated[list[AvailableCommand], SkipInvalidItems, EmptyOnError]


class CurrentModeUpdate(AcpModel):
    session_update: Literal["current_mode_update"] = "current_mode_update"
    current_mode_id: str


class ConfigOptionUpdate(AcpModel):
    """Session update `config_option_update`: the complete set of config options."""

    session_update: Literal["config_option_update"] = "config_option_update"
    config_options: Annotated[list[SessionConfigOption], SkipInvalidItems, EmptyOnError]


class SessionInfoUpdate(AcpModel):
    """Session update `session_info_update`: only the fields set are sent; `None` set
    explicitly is sent as `null` and clears the field."""

    session_update: Literal["session_info_update"] = "session_info_update"
    title: Annotated[str | None, DefaultOnError] = None
    updated_at: Annotated[str | None, DefaultOnError] = None


class Cost(AcpModel):
    amount: float
    currency: str


class UsageUpdate(AcpModel):
    """Session update `usage_update`: context tokens in use (`used`) of the window (`size`)."""

    session_update: Literal["usage_update"] = "usage_update"
    used: UInt64
    size: UInt64
    cost: Annotated[Cost | None, DefaultOnError] = None


class Notice(AcpModel):
    """Session update `notice`: a message for the user outside the conversation. `severity`
    is info, warning, error or an extension value (only sent when the client advertised
    `session.notices`)."""

    session_update: Literal["notice"] = "notice"
    severity: str
    title: Annotated[str, Field(min_length=1)]
    description: Annotated[str | None, DefaultOnError] = None


class CompactionUpdate(AcpModel):
    """Session update `compaction_update`. `status`: in_progress, completed, failed,
    cancelled or an extension value (only sent when the client advertised
    `session.compaction`)."""

    session_update: Literal["compaction_update"] = "compaction_update"
    compaction_id: str
    status: str
    summary: Annotated[list[ContentBlock] | None, SkipInvalidItems, DefaultOnError] = None
    error: Annotated[str | None, DefaultOnError] = None


class CompactionSummaryChunk(AcpModel):
    session_update: Literal["compaction_summary_chunk"] = "compaction_summary_chunk"
    compaction_id: str
    content: ContentBlock


SessionUpdate: TypeAlias = Annotated[
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCall
    | ToolCallProgress
    | Plan
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
    | Notice
    | CompactionUpdate
    | CompactionSummaryChunk,
    Field(discriminator="session_update"),
]

SESSION_UPDATE: TypeAdapter[SessionUpdate] = TypeAdapter(SessionUpdate, config=UNION_CONFIG)


class SessionNotification(AcpModel):
    """The params of `session/update`."""

    session_id: str
    update: SessionUpdate
