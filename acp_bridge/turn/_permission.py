"""The permission gate: which tool calls run, which ask the user, which are refused.

Only calls of a completed attempt ever reach the gate (TURN-003). Reads run; edits, commands
and unknown tools ask with allow_once / allow_always / reject_once / reject_always; an
"always" answer is remembered per session and per permission scope (`PermissionMemory`);
the session mode shifts the line (TURN-004, TURN-005). A call whose previous run's outcome is
unknown always asks, whatever was remembered (EFFECT-009).
"""

from __future__ import annotations

import dataclasses
import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass

from acp_bridge.tools._base import Tool, ToolKind, ToolPreview
from acp_bridge.turn._updates import (
    PermissionOption,
    PermissionOptionKind,
    ToolCallShown,
    TurnSink,
)

__all__ = [
    "GateDecision",
    "PermissionGate",
    "PermissionMemory",
    "PermissionVerdict",
    "SessionMode",
]

logger = logging.getLogger(__name__)


class SessionMode(enum.StrEnum):
    """The session modes; the value is the ACP mode id (`session/set_mode`)."""

    ASK = "ask"
    AUTO_EDIT = "auto-edit"
    READ_ONLY = "read-only"

    @property
    def label(self) -> str:
        return _MODE_TEXT[self][0]

    @property
    def description(self) -> str:
        return _MODE_TEXT[self][1]


_MODE_TEXT = {
    SessionMode.ASK: ("Ask", "Reads run; edits and commands ask first."),
    SessionMode.AUTO_EDIT: (
        "Auto-edit",
        "Edits inside the workspace run without asking; commands ask first.",
    ),
    SessionMode.READ_ONLY: ("Read-only", "No edits and no commands: only reading tools."),
}


class PermissionVerdict(enum.StrEnum):
    ALLOWED = "allowed"
    REJECTED = "rejected"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class GateDecision:
    verdict: PermissionVerdict
    asked: bool = False  # a session/request_permission was sent
    remembered: bool = False  # answered from PermissionMemory
    always: bool = False  # the user chose allow_always / reject_always
    unavailable: str | None = None  # the editor could not ask (TURN-PERM-001): not allowed


class PermissionMemory:
    """allow_always / reject_always answers of one session, per (tool, permission scope)."""

    def __init__(self) -> None:
        self._rules: dict[tuple[str, str], bool] = {}

    def recall(self, tool: str, scope: str) -> bool | None:
        return self._rules.get((tool, scope))

    def remember(self, tool: str, scope: str, *, allow: bool) -> None:
        self._rules[(tool, scope)] = allow

    def clear(self) -> None:
        self._rules.clear()

    def __len__(self) -> int:
        return len(self._rules)


ALLOW_ONCE = "allow-once"
ALLOW_ALWAYS = "allow-always"
REJECT_ONCE = "reject-once"
REJECT_ALWAYS = "reject-always"
ALLOW_ALWAYS_GROUP = "allow-always-group"
_GROUP = "*"  # PermissionMemory's tool name for group scopes (e.g. a whole MCP server)
_EDIT_KINDS = frozenset({ToolKind.EDIT})


def scope_of(tool: Tool, preview: ToolPreview) -> str:
    return preview.permission_scope or tool.name


def permission_options(tool: Tool, preview: ToolPreview) -> tuple[PermissionOption, ...]:
    """The four options; the "always" ones name what they remember."""
    label = (preview.scope_label or scope_of(tool, preview)).strip("`")
    if preview.kind is ToolKind.EXECUTE:
        allow_always, reject_always = f"Always allow `{label}`", f"Always reject `{label}`"
    else:
        allow_always, reject_always = f"Allow always for {label}", f"Reject always for {label}"
    group: tuple[PermissionOption, ...] = ()
    if preview.group_scope:
        name = f"Allow always for every tool of {preview.group_label or preview.group_scope}"
        group = (PermissionOption(ALLOW_ALWAYS_GROUP, name, PermissionOptionKind.ALLOW_ALWAYS),)
    return (
        PermissionOption(ALLOW_ONCE, "Allow once", PermissionOptionKind.ALLOW_ONCE),
        PermissionOption(ALLOW_ALWAYS, allow_always, PermissionOptionKind.ALLOW_ALWAYS),
        *group,
        PermissionOption(REJECT_ONCE, "Reject", PermissionOptionKind.REJECT_ONCE),
        PermissionOption(REJECT_ALWAYS, reject_always, PermissionOptionKind.REJECT_ALWAYS),
    )


class PermissionGate:
    """Decides each call of a completed attempt; asks through the sink when it must.

    `mode` is the session's mode, or a function returning the mode in force: the editor may
    switch modes while the agent works, and each call is decided with the mode in force when
    it is decided (TURN-MODE-001).
    """

    def __init__(
        self,
        sink: TurnSink,
        memory: PermissionMemory,
        mode: SessionMode | Callable[[], SessionMode],
    ) -> None:
        self.sink = sink
        self.memory = memory
        self._mode = mode

    @property
    def mode(self) -> SessionMode:
        return self._mode if isinstance(self._mode, SessionMode) else self._mode()

    def offers(self, tool: Tool) -> bool:
        """Whether the tool is offered to the model in this mode (TURN-005)."""
        return not (self.mode is SessionMode.READ_ONLY and tool.side_effect)

    def runs_without_asking(self, tool: Tool, preview: ToolPreview) -> bool:
        if not tool.side_effect:
            return True  # reads (TURN-004)
        return (
            self.mode is SessionMode.AUTO_EDIT
            and preview.kind in _EDIT_KINDS
            and preview.inside_workspace
        )

    async def decide(self, call: ToolCallShown, tool: Tool, preview: ToolPreview) -> GateDecision:
        if self.runs_without_asking(tool, preview):
            return GateDecision(PermissionVerdict.ALLOWED)
        remembered = self.memory.recall(tool.name, scope_of(tool, preview))
        if remembered is None and preview.group_scope:
            remembered = self.memory.recall(_GROUP, preview.group_scope)
        if remembered is not None:
            verdict = PermissionVerdict.ALLOWED if remembered else PermissionVerdict.REJECTED
            return GateDecision(verdict, remembered=True)
        options = permission_options(tool, preview)
        decision = await self.sink.request_permission(call, options)
        if decision.unavailable is not None:
            return _unavailable(decision.unavailable)
        if decision.cancelled:
            return GateDecision(PermissionVerdict.CANCELLED, asked=True)
        chosen = next((o for o in options if o.option_id == decision.option_id), None)
        if chosen is None:
            logger.warning("unknown permission option %r: treated as reject", decision.option_id)
            return GateDecision(PermissionVerdict.REJECTED, asked=True)
        allow = chosen.kind in (PermissionOptionKind.ALLOW_ONCE, PermissionOptionKind.ALLOW_ALWAYS)
        always = chosen.kind in (
            PermissionOptionKind.ALLOW_ALWAYS,
            PermissionOptionKind.REJECT_ALWAYS,
        )
        if chosen.option_id == ALLOW_ALWAYS_GROUP:
            self.memory.remember(_GROUP, preview.group_scope, allow=True)
        elif always:
            self.memory.remember(tool.name, scope_of(tool, preview), allow=allow)
        verdict = PermissionVerdict.ALLOWED if allow else PermissionVerdict.REJECTED
        return GateDecision(verdict, asked=True, always=always)

    async def confirm_rerun(self, call: ToolCallShown) -> GateDecision:
        """EFFECT-009: the previous run started and never finished; ask, never recall."""
        question = dataclasses.replace(
            call,
            title=f"{call.title} (the previous run's outcome is unknown: run it again?)",
        )
        options = (
            PermissionOption(ALLOW_ONCE, "Run it again", PermissionOptionKind.ALLOW_ONCE),
            PermissionOption(REJECT_ONCE, "Do not run it", PermissionOptionKind.REJECT_ONCE),
        )
        decision = await self.sink.request_permission(question, options)
        if decision.unavailable is not None:
            return _unavailable(decision.unavailable)
        if decision.cancelled:
            return GateDecision(PermissionVerdict.CANCELLED, asked=True)
        if decision.option_id == ALLOW_ONCE:
            return GateDecision(PermissionVerdict.ALLOWED, asked=True)
        return GateDecision(PermissionVerdict.REJECTED, asked=True)


def _unavailable(reason: str) -> GateDecision:
    """TURN-PERM-001: an editor that cannot ask is an editor that did not allow."""
    return GateDecision(PermissionVerdict.REJECTED, asked=True, unavailable=reason)
