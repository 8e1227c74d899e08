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

from acp_bridge.errors import ToolError
from acp_bridge.providers import ToolCall, ToolResult, has_non_json
from acp_bridge.tools._base import (
    TerminalContent,
    TextContent,
    Tool,
    ToolContent,
    ToolContext,
    ToolOutcome,
)
from acp_bridge.tools._canonical import canonical_arguments
from acp_bridge.tools._media import media_parts
from acp_bridge.turn._clean import NOT_JSON
from acp_bridge.turn._crosscheck import JournalKnows, checked_lookup
from acp_bridge.turn._effects import EffectKey, EffectSteps
from acp_bridge.turn._ledger import EffectLedger, EffectState, LedgerUnavailable
from acp_bridge.turn._permission import GateDecision, PermissionGate, PermissionVerdict
from acp_bridge.turn._tool_tracker import ToolCallTracker
from acp_bridge.turn._updates import (
    PlanShown,
    ToolCallChanged,
    ToolCallShown,
    ToolStatus,
    TurnSink,
)

__all__ = ["ToolCallBatch"]

logger = logging.getLogger(__name__)


def _result(call: ToolCall, outcome: ToolOutcome) -> ToolResult:
    """The model's result of a call: its text, then the media it returned (MCP-MEDIA-002)."""
    media = media_parts(outcome.content)
    return ToolResult(call.call_id, call.name, outcome.for_model, not outcome.ok, media)


class ToolCallBatch(ToolCallTracker):
    """Handles the calls of completed attempts of one turn (what is still open: the tracker)."""

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
        super().__init__(sink)
        self.turn_id = turn_id
        self.id_prefix = id_prefix
        self.session_id = session_id
        self.tools = tools
        self.make_context = make_context
        self.ledger = ledger
        self.gate = gate
        self.before_run = before_run
        self.journal_knows = journal_knows
        self.steps = EffectSteps()
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
        self._start(tool_call_id, call, tool.side_effect, context.effect_key)
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
