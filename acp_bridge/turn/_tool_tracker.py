"""The editor's side of a turn's tool calls: shown, open, running, and how each one ends.

`ToolCallTracker` keeps what the turn's report and its cleanup need: every `ToolRun`, the
results of the batch being handled, the calls shown and not yet closed (TURN-SHOWN-001) and
the calls whose `Tool.run` has not returned (TURN-UNKNOWN-001). Deciding and running a call
is `_tool_calls`'; closing one (failed, rejected, cut off, cancelled) is here.
"""

from __future__ import annotations

from dataclasses import dataclass

from acp_bridge.providers import ToolCall, ToolResult, clean_json
from acp_bridge.tools._base import TextContent, ToolKind
from acp_bridge.turn._effects import EffectKey
from acp_bridge.turn._permission import GateDecision
from acp_bridge.turn._updates import ToolCallChanged, ToolCallShown, ToolStatus, TurnSink

__all__ = ["NOT_FINISHED", "OUTCOME_UNKNOWN", "ToolCallTracker", "ToolRun"]

# TURN-UNKNOWN-001: what a call cut off while `Tool.run` ran is, for the model and the editor.
OUTCOME_UNKNOWN = (
    "Outcome unknown: the turn was cancelled while this tool call was running, so whether it "
    "changed anything is unknown. Check before doing it again."
)
NOT_FINISHED = "Not finished: the turn was cancelled while this tool call was running."


@dataclass(frozen=True, slots=True)
class ToolRun:
    """What became of one tool call of a completed attempt (for the turn's report)."""

    tool_call_id: str  # the bridge's id shown to the editor
    call_id: str  # the model's id
    name: str
    status: ToolStatus
    effect_key: str | None = None
    ran: bool = False  # Tool.run was called
    reused: bool = False  # a recorded outcome was reused instead of running (EFFECT-008)
    asked: bool = False  # a permission prompt was sent


@dataclass(frozen=True, slots=True)
class _Running:
    call: ToolCall
    side_effect: bool
    key: str | None

    @property
    def told(self) -> str:
        return OUTCOME_UNKNOWN if self.side_effect else NOT_FINISHED


class ToolCallTracker:
    """The tool calls of one turn as the editor and the model see them."""

    def __init__(self, sink: TurnSink) -> None:
        self.sink = sink
        self.runs: list[ToolRun] = []
        self.open: list[str] = []  # shown, not yet completed/failed (cancellation cleanup)
        self.results: list[ToolResult] = []  # of the batch being handled
        self.running: dict[str, _Running] = {}  # Tool.run called and not returned yet

    def _start(self, tool_call_id: str, call: ToolCall, side_effect: bool, key: str | None) -> None:
        """From here the call's effect may begin (TURN-UNKNOWN-001)."""
        self.running[tool_call_id] = _Running(call, side_effect, key)

    async def _reject(
        self,
        call: ToolCall,
        shown: ToolCallShown,
        key: EffectKey | None,
        decision: GateDecision,
    ) -> None:
        closing = "Rejected."
        if decision.unavailable is not None:
            why = (
                "The editor could not ask the user for permission "
                f"({decision.unavailable}), so this call was not run."
            )
            closing = "Not run: the editor could not ask for permission."
        elif decision.remembered:
            why = "The user has chosen to always reject this kind of call, so it was not run."
        else:
            why = "The user rejected this tool call, so it was not run."
        self.results.append(
            ToolResult(
                call.call_id,
                call.name,
                f"{why} Do not retry it unless the user asks.",
                is_error=True,
            )
        )
        self._record(call, shown, ToolStatus.FAILED, key, asked=decision.asked)
        await self._close(shown.tool_call_id, ToolStatus.FAILED, closing)

    async def _send_shown(self, shown: ToolCallShown) -> None:
        # Open only once written: a call whose tool_call never reached the editor (cancelled
        # while queued behind chunks) never gets a tool_call_update (TURN-SHOWN-001).
        await self.sink.send_update(shown)
        self.open.append(shown.tool_call_id)

    async def _show_fallback(
        self, tool_call_id: str, call: ToolCall, title: str, kind: ToolKind = ToolKind.OTHER
    ) -> None:
        await self._send_shown(
            ToolCallShown(
                tool_call_id=tool_call_id,
                title=title,
                kind=kind,
                raw_input=clean_json(call.arguments),  # TURN-JSON-001: never Infinity on the wire
            )
        )

    async def _fail(self, tool_call_id: str, call: ToolCall, message: str) -> None:
        self.results.append(ToolResult(call.call_id, call.name, message, is_error=True))
        self.runs.append(ToolRun(tool_call_id, call.call_id, call.name, ToolStatus.FAILED))
        await self._close(tool_call_id, ToolStatus.FAILED, message)

    async def _close(self, tool_call_id: str, status: ToolStatus, message: str) -> None:
        await self.sink.send_update(
            ToolCallChanged(tool_call_id, status=status, content=(TextContent(message),))
        )
        self._forget(tool_call_id)  # after sending: a cancelled send is retried by fail_open

    def _forget(self, tool_call_id: str) -> None:
        if tool_call_id in self.open:
            self.open.remove(tool_call_id)

    def _record(
        self,
        call: ToolCall,
        shown: ToolCallShown,
        status: ToolStatus,
        key: EffectKey | None,
        *,
        ran: bool = False,
        reused: bool = False,
        asked: bool = False,
    ) -> None:
        self.runs.append(
            ToolRun(
                shown.tool_call_id,
                call.call_id,
                call.name,
                status,
                None if key is None else str(key),
                ran=ran,
                reused=reused,
                asked=asked,
            )
        )

    def cut_off(self, call: ToolCall) -> ToolResult | None:
        """The result of a call whose `Tool.run` was cut off by the turn's end (None when it
        never ran): its outcome is unknown, exactly as after a crash (TURN-UNKNOWN-001)."""
        for running in self.running.values():
            if running.call.call_id == call.call_id:
                return ToolResult(call.call_id, call.name, running.told, is_error=True)
        return None

    async def fail_open(self, message: str) -> None:
        """Mark every shown-but-unfinished call failed (cancellation cleanup, TURN-014); a
        call cut off while running says its outcome is unknown (TURN-UNKNOWN-001)."""
        for tool_call_id in list(self.open):
            running = self.running.pop(tool_call_id, None)
            if running is None:
                await self._close(tool_call_id, ToolStatus.FAILED, message)
                continue
            call = running.call
            self.runs.append(
                ToolRun(tool_call_id, call.call_id, call.name, ToolStatus.FAILED, running.key, True)
            )
            await self._close(tool_call_id, ToolStatus.FAILED, running.told)
