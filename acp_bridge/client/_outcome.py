"""What the reference client records: each message as it crossed the wire, and each prompt turn
as the editor lived it (its events, its result or error, and the bridge's own report)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from acp_bridge._json import JsonObject
from acp_bridge.client._events import EditorEvent, PermissionAsked, PromptSent
from acp_bridge.client._view import EditorView, ReduceMode, reduce

__all__ = ["PromptOutcome", "WireMessage"]


@dataclass(frozen=True, slots=True)
class WireMessage:
    """One JSON-RPC message as it crossed the wire. `sent` is client -> agent."""

    direction: Literal["sent", "received"]
    message: JsonObject
    at: float = field(default_factory=time.monotonic, compare=False)


@dataclass(frozen=True, slots=True)
class PromptOutcome:
    """One prompt turn as the editor lived it.

    `events` starts with the `PromptSent` and holds, in wire order, every `session/update`
    and permission prompt of the session until the response. Exactly one of `result` (the
    `session/prompt` result) and `error` (its JSON-RPC error object) is set.
    """

    session_id: str
    prompt: str
    events: tuple[EditorEvent, ...]
    result: JsonObject | None
    error: JsonObject | None
    seconds: float

    @property
    def stop_reason(self) -> str | None:
        reason = (self.result or {}).get("stopReason")
        return reason if isinstance(reason, str) else None

    @property
    def bridge_report(self) -> Mapping[str, Any]:
        """acp-bridge's own report on the turn: the response's `_meta.acpBridge` ({} if none)."""
        meta = (self.result or {}).get("_meta")
        report = meta.get("acpBridge") if isinstance(meta, dict) else None
        return report if isinstance(report, dict) else {}

    @property
    def attempts(self) -> tuple[Mapping[str, Any], ...]:
        """Each model call attempt the bridge made: modelCall, attempt, state, reason, billed."""
        attempts = self.bridge_report.get("attempts")
        return tuple(a for a in attempts if isinstance(a, dict)) if attempts else ()

    @property
    def billed_attempts(self) -> int:
        return sum(1 for a in self.attempts if a.get("billed"))

    @property
    def permission_prompts(self) -> tuple[PermissionAsked, ...]:
        return tuple(e for e in self.events if isinstance(e, PermissionAsked))

    @property
    def updates(self) -> tuple[Mapping[str, Any], ...]:
        """The `session/update` params of the turn, in order."""
        return tuple(e for e in self.events if not isinstance(e, PromptSent | PermissionAsked))

    def view(self, mode: ReduceMode | str = ReduceMode.RESET_AWARE) -> EditorView:
        """What an editor of kind `mode` shows for this turn."""
        return reduce(self.events, mode)
