"""The entries an editor shows: messages, thoughts, tool calls, the plan, retry notices.

Mutable where the reducer updates them in place (message text grows chunk by chunk, in
linear time; a tool call takes each `tool_call_update`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = [
    "Entry",
    "MessageEntry",
    "MessageRole",
    "PlanEntry",
    "RetryNotice",
    "ToolCallEntry",
]

MessageRole = Literal["user", "agent", "thought"]


@dataclass(slots=True)
class MessageEntry:
    """A user message, an agent message or a thought, as shown (chunks joined)."""

    role: MessageRole
    message_id: str | None
    parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.parts)


@dataclass(slots=True)
class ToolCallEntry:
    """A tool call with its latest fields (a `tool_call_update` overwrites what it carries)."""

    tool_call_id: str
    title: str = ""
    kind: str = "other"
    status: str = "pending"
    content: list[Mapping[str, Any]] = field(default_factory=list)
    locations: list[Mapping[str, Any]] = field(default_factory=list)
    raw_input: Any = None
    raw_output: Any = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class PlanEntry:
    """The agent's plan; each `plan` update replaces it whole (ACP agent-plan)."""

    items: list[Mapping[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class RetryNotice:
    """A reset marker seen: the editor says that the model call was retried (RESET-009)."""

    attempt: int | None
    reason: str | None


Entry: TypeAlias = MessageEntry | ToolCallEntry | PlanEntry | RetryNotice
