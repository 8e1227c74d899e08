"""What a turn tells the editor, in the turn engine's own words.

The engine emits these through a `TurnSink`; the agent layer turns each into exactly one
ACP `session/update` (or a `session/request_permission` request). Keeping this vocabulary
here keeps the engine sans-IO and free of wire models.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeAlias

from acp_bridge._json import JsonValue
from acp_bridge.providers import Usage
from acp_bridge.tools._base import Location, PlanEntry, ToolContent, ToolKind

__all__ = [
    "AgentText",
    "AgentThought",
    "AttemptUsage",
    "CompactionChunk",
    "CompactionShown",
    "PermissionDecision",
    "PermissionOption",
    "PermissionOptionKind",
    "PlanEntry",
    "PlanShown",
    "ResetMarker",
    "ToolCallChanged",
    "ToolCallShown",
    "ToolStatus",
    "TurnSink",
    "TurnUpdate",
    "UsageReport",
    "UserNotice",
]


@dataclass(frozen=True, slots=True)
class ResetMarker:
    """The reset flag (spec/reset-extension.md, RESET-001..): rides on the first chunk of a
    retried attempt whose predecessor had shown chunks. Serialised into `update._meta`."""

    attempt: int
    reason: str
    fault: str | None = None  # RESET-010: the give-up marker's last retry reason
    give_up: str | None = None  # RESET-010: why the bridge stopped retrying

    def to_meta(self) -> dict[str, JsonValue]:
        meta: dict[str, JsonValue] = {"reset": True, "attempt": self.attempt, "reason": self.reason}
        if self.fault is not None:
            meta["fault"] = self.fault
        if self.give_up is not None:
            meta["giveUp"] = self.give_up
        return meta


@dataclass(frozen=True, slots=True)
class AgentText:
    """An `agent_message_chunk`. `message_id` is unique per attempt."""

    text: str
    message_id: str
    reset: ResetMarker | None = None


@dataclass(frozen=True, slots=True)
class AgentThought:
    """An `agent_thought_chunk`."""

    text: str
    message_id: str


class ToolStatus(enum.StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class ToolCallShown:
    """A `tool_call` update: a call of a completed attempt, announced to the editor.

    `tool_call_id` is the bridge's own id (unique in the session), never a provider id.
    """

    tool_call_id: str
    title: str
    kind: ToolKind
    status: ToolStatus = ToolStatus.PENDING
    content: tuple[ToolContent, ...] = ()
    locations: tuple[Location, ...] = ()
    raw_input: JsonValue = None


@dataclass(frozen=True, slots=True)
class ToolCallChanged:
    """A `tool_call_update`: only the fields that changed (None means unchanged)."""

    tool_call_id: str
    status: ToolStatus | None = None
    content: tuple[ToolContent, ...] | None = None
    locations: tuple[Location, ...] | None = None
    raw_output: JsonValue = None
    title: str | None = None


@dataclass(frozen=True, slots=True)
class AttemptUsage:
    """What one attempt of a model call was billed (None: the provider reported nothing).
    `reason`: why an abandoned attempt was abandoned (None when it is not known)."""

    attempt: int
    state: str
    usage: Usage | None
    billed: bool
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class UsageReport:
    """A `usage_update`, sent after every model call (spec/usage-and-compaction.md).

    `kept` is the usage of the completed attempt (None when the call failed): its input
    plus output tokens are the context now in use. `attempts` lists every attempt with what
    it was billed, abandoned ones included (they cost too, and are never counted as context).
    After a compaction (`compaction_id`), `attempts` are the summary call's (billed, never
    context) and `context` the context now in use, estimated until the next model call's
    usage says (None: unchanged, the compaction failed). `ends_turn`: the turn's last model
    call, after which only the turn's end and its response are written (a sink may send it
    with the response, still before it: issue 15.2).
    """

    model_call: int
    kept: Usage | None
    attempts: tuple[AttemptUsage, ...]
    context: int | None = None
    compaction_id: str | None = None
    ends_turn: bool = False


@dataclass(frozen=True, slots=True)
class UserNotice:
    """Words for the user outside the conversation: a retry, a stalled stream, what was
    loaded. Sent as a `notice` to clients that advertised `session.notices`, else dropped
    (the same facts are in the log and in `_meta`)."""

    severity: str  # info, warning or error
    title: str
    description: str | None = None
    kind: str = "info"  # machine-readable: retry, stalled, instructions, compaction, loop


@dataclass(frozen=True, slots=True)
class PlanShown:
    """A `plan` update: the whole plan, replacing the previous one."""

    entries: tuple[PlanEntry, ...]


@dataclass(frozen=True, slots=True)
class CompactionShown:
    """A `compaction_update` (spec/daily-use.md#compact-004): `status` in_progress, completed,
    failed or cancelled. `summary`: the whole summary once completed, "" to clear the partial
    summary of a broken attempt, None to leave it; `trigger` and `kept` go in `_meta`."""

    compaction_id: str
    status: str
    summary: str | None = None
    error: str | None = None
    trigger: str = ""
    summarised: int = 0  # messages summarised
    kept: int = 0  # messages kept whole


@dataclass(frozen=True, slots=True)
class CompactionChunk:
    """A `compaction_summary_chunk`: summary text as the model streams it. The first chunk of
    a retried attempt carries the reset marker, like a message chunk (RESET-001)."""

    compaction_id: str
    text: str
    reset: ResetMarker | None = None


TurnUpdate: TypeAlias = (
    AgentText
    | AgentThought
    | ToolCallShown
    | ToolCallChanged
    | UsageReport
    | UserNotice
    | PlanShown
    | CompactionShown
    | CompactionChunk
)


class PermissionOptionKind(enum.StrEnum):
    ALLOW_ONCE = "allow_once"
    ALLOW_ALWAYS = "allow_always"
    REJECT_ONCE = "reject_once"
    REJECT_ALWAYS = "reject_always"


@dataclass(frozen=True, slots=True)
class PermissionOption:
    option_id: str
    name: str
    kind: PermissionOptionKind


@dataclass(frozen=True, slots=True)
class PermissionDecision:
    """The editor's answer: the chosen option's id, or cancelled (`option_id` None).

    `unavailable` says why the editor could not ask at all (it answered the request with an
    error, or with something that is not an answer): not allowed, never cancelled (TURN-PERM-001).
    """

    option_id: str | None
    unavailable: str | None = None

    @property
    def cancelled(self) -> bool:
        return self.option_id is None and self.unavailable is None


class TurnSink(Protocol):
    """Where a turn's output goes (implemented by the agent layer over JSON-RPC).

    Contract: `send_update` returns once the update is queued for the wire in order (a tool
    call update: once it is written); when it raises or is cancelled, the update was not
    written;
    `request_permission` sends `session/request_permission` and waits for the answer; when
    the turn is cancelled while it waits, the implementation sends `$/cancel_request` for it
    and lets the cancellation propagate; when the editor answers with an error, it returns a
    decision that is `unavailable` (never raises for it).
    """

    async def send_update(self, update: TurnUpdate) -> None: ...

    async def request_permission(
        self, call: ToolCallShown, options: Sequence[PermissionOption]
    ) -> PermissionDecision: ...
