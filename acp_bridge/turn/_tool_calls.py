"""Running the tool calls of a completed attempt: show, gate, key, ledger, run, report.

Called only after the attempt's `Finish` (TURN-002). For each call, in the model's order:
preview → `tool_call` (pending, the bridge's own id) → read-only refusal / effect-ledger
lookup / permission → `tool_call_update`s → one `ToolResult` with the model's call id and name.
Nothing here crashes on a bad call: unknown tools, invalid arguments and tool failures become
a failed tool call and an error result the model can read.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from acp_bridge.errors import ToolError
from acp_bridge.providers import ToolCall, ToolResult, clean_json, has_non_json
from acp_bridge.tools._base import (
    TerminalContent,
    TextContent,
    Tool,
    ToolContent,
    ToolContext,
    ToolKind,
    ToolOutcome,
)
from acp_bridge.tools._canonical import canonical_arguments
from acp_bridge.tools._media import media_parts
from acp_bridge.turn._clean import NOT_JSON
from acp_bridge.turn._crosscheck import JournalKnows, checked_lookup
from acp_bridge.turn._effects import EffectKey, EffectSteps
from acp_bridge.turn._ledger import EffectLedger, EffectState, LedgerUnavailable
from acp_bridge.turn._permission import GateDecision, PermissionGate, PermissionVerdict
from acp_bridge.turn._updates import (
    PlanShown,
    ToolCallChanged,
    ToolCallShown,
    ToolStatus,
    TurnSink,
)

__all__ = ["ToolRun"]

logger = logging.getLogger(__name__)

# TURN-UNKNOWN-001: what a call cut off while `Tool.run` ran is, for the model and the editor.
OUTCOME_UNKNOWN = (
    "Outcome unknown: the turn was cancelled while this tool call was running, so whether it "
    "changed anything is unknown. Check before doing it again."
)
NOT_FINISHED = "Not finished: the turn was cancelled while this tool call was running."


def _result(call: ToolCall, outcome: ToolOutcome) -> ToolResult:
    """The model's result of a call: its text, then the media it returned (MCP-MEDIA-002)."""
    media = media_parts(outcome.content)
    return ToolResult(call.call_id, call.name, outcome.for_model, not outcome.ok, media)


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


class ToolCallBatch:
    """Handles the calls of completed attempts of one turn; tracks what is still open."""

    def __init__(
        self,
        *,
        turn_id: str,
        id_prefix: str,
        session_id: str,
        tools: Mapping[str, Tool],
        make_context: Callable[[], ToolContext],
        sink: TurnSink,
        ledger: EffectLedger,
        gate: PermissionGate,
        before_run: Callable[[str, str | None], None] | None = None,
        journal_knows: JournalKnows | None = None,
    ) -> None:
        """`before_run(tool_call_id, effect_key)` is the turn journal's hook: called just
        before a call runs, ahead of its ledger `started` record (see `TurnJournal`);
        `journal_knows(effect_key)`, whether the journal recorded the key in an earlier run of
        the turn: a key it knows and the ledger does not is outcome unknown (EFFECT-LOST-001)."""
        self.turn_id = turn_id
        self.id_prefix = id_prefix
        self.session_id = session_id
        self.tools = tools
        self.make_context = make_context
        self.sink = sink
        self.ledger = ledger
        self.gate = gate
        self.before_run = before_run
        self.journal_knows = journal_knows
        self.steps = EffectSteps()
        self.runs: list[ToolRun] = []
        self.open: list[str] = []  # shown, not yet completed/failed (cancellation cleanup)
        self.results: list[ToolResult] = []  # of the batch being handled
        self.running: dict[str, _Running] = {}  # Tool.run called and not returned yet
        self._count = 0

    async def handle(self, calls: Sequence[ToolCall]) -> bool:
        """Handle every call in order; results land in `self.results`.

        Returns False when a permission prompt was answered `cancelled` (the turn ends with
        stop reason cancelled; the remaining calls are neither shown nor run).
        """
        self.results = []
        for call in calls:
            if not await self._handle_one(call):
                return False
        return True

    def new_tool_call_id(self) -> str:
        self._count += 1
        return f"{self.id_prefix}-t{self._count}"

    async def _handle_one(self, call: ToolCall) -> bool:
        tool_call_id = self.new_tool_call_id()
        tool = self.tools.get(call.name)
        if has_non_json(call.arguments):  # TURN-JSON-001: shown clean, never run
            await self._show_fallback(tool_call_id, call, call.name)
            await self._fail(tool_call_id, call, f"Invalid arguments for {call.name}: {NOT_JSON}.")
            return True
        # EFFECT-CANON-001: the arguments as the tool reads them, so every spelling of one
        # action (a default spelled out, 120.0, an ignored key) keys the same effect.
        canonical = call.arguments
        if tool is not None:
            ignored = getattr(tool, "ignores_unknown_arguments", False) is True
            canonical = canonical_arguments(call.arguments, tool.parameters, ignore_unknown=ignored)
        try:
            step = self.steps.next_step(call.name, canonical)  # every completed call counts
        except ValueError as error:  # no canonical form (NaN, colliding keys): unusable input
            await self._show_fallback(tool_call_id, call, call.name)
            await self._fail(tool_call_id, call, f"Invalid arguments for {call.name}: {error}")
            return True
        if tool is None:
            known = ", ".join(sorted(self.tools)) or "none"
            await self._show_fallback(tool_call_id, call, f"Unknown tool: {call.name}")
            await self._fail(tool_call_id, call, f"Unknown tool {call.name!r}. Available: {known}.")
            return True
        context = self.make_context()
        try:
            preview = await tool.preview(call.arguments, context)
        except ToolError as error:
            await self._show_fallback(tool_call_id, call, call.name, tool.kind)
            await self._fail(tool_call_id, call, f"Invalid arguments for {call.name}: {error}")
            return True
        except Exception:
            logger.exception("preview of %s failed", call.name)
            await self._show_fallback(tool_call_id, call, call.name, tool.kind)
            await self._fail(tool_call_id, call, f"{call.name} failed while checking its input.")
            return True
        shown = ToolCallShown(
            tool_call_id=tool_call_id,
            title=preview.title,
            kind=preview.kind,
            status=ToolStatus.PENDING,
            content=preview.content,
            locations=preview.locations,
            raw_input=call.arguments,
        )
        await self._send_shown(shown)
        if not self.gate.offers(tool):  # TURN-005: read-only refuses side effects
            await self._fail(
                tool_call_id,
                call,
                f"Refused: the session is in read-only mode, so {call.name} may not run. "
                "Do not call it again in this mode.",
            )
            return True
        if not tool.side_effect:
            return await self._run(
                tool, call, shown, context, None, GateDecision(PermissionVerdict.ALLOWED)
            )
        key = EffectKey.derive(self.turn_id, call.name, canonical, step)
        try:
            record = checked_lookup(self.ledger, key, self.session_id, self.journal_knows)
        except LedgerUnavailable as error:
            await self._fail(tool_call_id, call, f"Not run: {error}. Try again later.")
            return True
        if record is not None and record.state is EffectState.DONE:
            if record.outcome is not None and record.outcome.final:
                await self._reuse(call, shown, key, record.outcome)
                return True
            record = None  # EFFECT-FINAL-001: it changed nothing, so it is decided like a new call
        if record is not None:
            decision = await self.gate.confirm_rerun(shown)
        else:
            decision = await self.gate.decide(shown, tool, preview)
        if decision.verdict is PermissionVerdict.CANCELLED:
            self._record(call, shown, ToolStatus.FAILED, key, asked=True)
            await self._close(tool_call_id, ToolStatus.FAILED, "Cancelled by the user.")
            return False
        if decision.verdict is PermissionVerdict.REJECTED:
            await self._reject(call, shown, key, decision)
            return True
        return await self._run(tool, call, shown, context, key, decision)

    async def _run(
        self,
        tool: Tool,
        call: ToolCall,
        shown: ToolCallShown,
        context: ToolContext,
        key: EffectKey | None,
        decision: GateDecision,
    ) -> bool:
        tool_call_id = shown.tool_call_id

        async def report(content: tuple[ToolContent, ...]) -> None:
            await self.sink.send_update(ToolCallChanged(tool_call_id, content=content))

        context = dataclasses.replace(
            context, effect_key=None if key is None else str(key), report=report
        )
        if self.before_run is not None:
            self.before_run(tool_call_id, context.effect_key)  # journaled before it can run
        if key is not None:
            try:  # durable before the effect can happen (EFFECT-007)
                self.ledger.record_started(
                    key, session_id=self.session_id, mode=self.gate.mode.value
                )
            except LedgerUnavailable as error:
                await self._fail(tool_call_id, call, f"Not run: {error}. Try again later.")
                return True
        await self.sink.send_update(ToolCallChanged(tool_call_id, status=ToolStatus.IN_PROGRESS))
        # From here its effect may begin (TURN-UNKNOWN-001).
        self.running[tool_call_id] = _Running(call, tool.side_effect, context.effect_key)
        try:
            outcome = await tool.run(call.arguments, context)
        except ToolError as error:
            outcome = ToolOutcome(
                ok=False,
                for_model=str(error),
                content=(TextContent(str(error)),),
                final=error.may_have_changed,  # EFFECT-FINAL-001: nothing changed, nothing final
            )
        except Exception:
            # The effect may or may not have happened: the key stays `started` (unknown).
            logger.exception("tool %s crashed", call.name)
            message = f"{call.name} failed unexpectedly; whether it changed anything is unknown."
            self.results.append(ToolResult(call.call_id, call.name, message, is_error=True))
            del self.running[tool_call_id]
            self._record(call, shown, ToolStatus.FAILED, key, ran=True, asked=decision.asked)
            await self._close(tool_call_id, ToolStatus.FAILED, message)
            return True
        del self.running[tool_call_id]
        if key is not None:
            try:
                self.ledger.record_done(key, outcome)
            except LedgerUnavailable:
                # The effect happened; its key stays `started`, so a replay asks (EFFECT-009).
                logger.exception("could not record effect %s as done", key)
        status = ToolStatus.COMPLETED if outcome.ok else ToolStatus.FAILED
        # The result is kept before the update is sent: a cancel now cannot lose it.
        self.results.append(_result(call, outcome))
        self._record(call, shown, status, key, ran=True, asked=decision.asked)
        # Updates merge: content equal to what the call showed is not sent again (a 10 MB
        # edit's diff goes out once, PERF-BIG-001).
        content = None if outcome.content == shown.content else outcome.content
        await self.sink.send_update(
            ToolCallChanged(
                tool_call_id, status=status, content=content, raw_output=outcome.raw_output
            )
        )
        if outcome.plan is not None:  # PLAN-001: the planning tool's list, shown as a plan
            await self.sink.send_update(PlanShown(outcome.plan))
        self._forget(tool_call_id)
        return True

    async def _reuse(
        self, call: ToolCall, shown: ToolCallShown, key: EffectKey, outcome: ToolOutcome
    ) -> None:
        """EFFECT-008: a done key is not run again; the editor is told the result is reused."""
        note = TextContent(
            f"Not run again: this effect already ran in this turn (effect key {str(key)[:12]}); "
            "its recorded result is shown."
        )
        kept = tuple(c for c in outcome.content if not isinstance(c, TerminalContent))
        status = ToolStatus.COMPLETED if outcome.ok else ToolStatus.FAILED
        self.results.append(_result(call, outcome))
        self._record(call, shown, status, key, reused=True)
        await self.sink.send_update(
            ToolCallChanged(
                shown.tool_call_id,
                status=status,
                content=(*kept, note),
                raw_output=outcome.raw_output,
            )
        )
        self._forget(shown.tool_call_id)

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

    # -- helpers ---------------------------------------------------------------------------

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
