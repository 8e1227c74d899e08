"""The prompt-turn runner: the tool loop over retried model calls, held tool calls, and cleanup.

Each model call's attempts and retries are `_model_call`'s; this module runs tool calls only
after the attempt's finish (TURN-002) and keeps the history to completed material (TURN-006).
What a turn is given and gives back is in `_request`.

Cancellation is the caller's: run the turn inside a `CancelScope` and answer `cancelled` when
the scope caught it. On the way out the runner marks every shown-but-unfinished tool call
failed (shielded, bounded) and pairs the history, so nothing is left half-done (TURN-014).
Everything reaches the editor through `TurnSink`, awaited, in order.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import anyio

from acp_bridge.providers import (
    AssistantTurn,
    FinishReason,
    ToolCall,
    ToolResult,
    ToolResults,
    ToolSpec,
)
from acp_bridge.turn._attempt import Attempt, AttemptState, ModelCall
from acp_bridge.turn._clean import clean_assistant_turn, clean_results
from acp_bridge.turn._loop_guard import LoopGuard, screen
from acp_bridge.turn._model_call import FILTERED, ModelCaller
from acp_bridge.turn._permission import PermissionGate
from acp_bridge.turn._request import (
    AttemptReport,
    NoJournal,
    StopReason,
    TurnJournal,
    TurnRequest,
    TurnResult,
)
from acp_bridge.turn._tool_calls import ToolCallBatch
from acp_bridge.turn._updates import AgentText

__all__ = ["Turn", "run_turn"]

logger = logging.getLogger(__name__)

_NOT_RUN = "Not run: the turn was cancelled before this tool call ran."


class Turn:
    """One prompt turn. `await run()`; after a cancellation, `result(StopReason.CANCELLED)`."""

    def __init__(self, request: TurnRequest) -> None:
        self.request = request
        self.id_prefix = request.id_prefix or request.turn_id
        self.journal: TurnJournal = request.journal or NoJournal()
        self.gate = PermissionGate(
            request.sink, request.permissions, request.current_mode or request.mode
        )
        self.batch = ToolCallBatch(
            turn_id=request.turn_id,
            id_prefix=self.id_prefix,
            session_id=request.session_id,
            tools=request.tools,
            make_context=request.make_context,
            sink=request.sink,
            ledger=request.ledger,
            gate=self.gate,
            before_run=self.journal.tool_call_starting,
            journal_knows=self.journal.recorded_effect,
        )
        self._awaiting: Sequence[ToolCall] | None = None
        self.guard = LoopGuard()
        self.caller = ModelCaller(request, self.id_prefix, self.specs)

    @property
    def model_calls(self) -> list[ModelCall]:
        return self.caller.calls

    @property
    def retries(self) -> int:
        return self.caller.retries

    def specs(self) -> tuple[ToolSpec, ...]:
        """The tools offered to the next model call, in the mode in force now."""
        return tuple(
            ToolSpec(t.name, t.description, t.parameters)
            for t in self.request.tools.values()
            if self.gate.offers(t)  # TURN-005: read-only offers no side effects
        )

    async def run(self) -> TurnResult:
        self.request.history.append(self.request.prompt)
        try:
            stop = await self._loop()
        except BaseException as exc:
            await self._clean_up(exc)
            raise
        return self.result(stop)

    def result(self, stop_reason: StopReason) -> TurnResult:
        caller = self.caller
        calls = caller.calls
        # Positional, one list: this runs in every turn's tail (issue 15.2).
        attempts = [
            AttemptReport(
                a.model_call,
                a.number,
                a.state,
                a.abandon_reason,
                a.usage,
                a.received_events,
                a.shown_chunks,
            )
            for call in calls
            for a in call.attempts
        ]
        return TurnResult(
            stop_reason,
            len(calls),
            caller.retries,
            tuple(attempts),
            tuple(self.batch.runs),
            tuple(caller.compaction.summaries),
        )

    # -- the tool loop -------------------------------------------------------------------

    async def _loop(self) -> StopReason:
        while True:
            if len(self.model_calls) >= self.request.max_model_calls:
                return StopReason.MAX_TURN_REQUESTS
            await self.caller.compaction.before_call(len(self.model_calls) + 1)  # COMPACT-002
            attempt = await self.caller.call()
            assert attempt.finish is not None
            reason = attempt.finish.reason
            calls = attempt.tool_calls  # built once: this runs in every turn's tail
            ends = reason in FILTERED or reason is FinishReason.LENGTH or not calls
            # USAGE-001: after every call; the last one's may ride with the response.
            await self.caller.report_usage(self.model_calls[-1], ends_turn=ends)
            if reason in FILTERED:
                self._keep(attempt, attempt.to_assistant_turn(with_tool_calls=False))
                return StopReason.REFUSAL
            if reason is FinishReason.LENGTH:
                self._keep(attempt, attempt.to_assistant_turn(with_tool_calls=False))
                return StopReason.MAX_TOKENS
            self._keep(attempt, attempt.to_assistant_turn())
            if not calls:
                return StopReason.END_TURN
            self._awaiting = calls
            screened = screen(self.guard, calls)  # LOOP-001: identical calls in a row
            proceed = await self.batch.handle(screened.run)  # TURN-002: after the finish only
            self.batch.results.extend(screened.refused)
            results = self._paired(calls)
            self._awaiting = None  # before journaling: a failing journal must not pair twice
            self._keep_results(results)
            if not proceed:
                return StopReason.CANCELLED
            if screened.stop is not None:  # LOOP-002: it went on; the user is told why
                await self.request.sink.send_update(
                    AgentText(screened.stop, f"{self.id_prefix}-loop")
                )
                return StopReason.MAX_TURN_REQUESTS

    def _keep(self, attempt: Attempt, message: AssistantTurn) -> None:
        """A completed attempt's record enters history, and the journal (TURN-006), as JSON
        that every later request and the journal can carry (TURN-JSON-001)."""
        message = clean_assistant_turn(message)
        self.request.history.append(message)
        self.journal.model_call_kept(attempt.model_call, attempt.number, message)

    def _keep_results(self, message: ToolResults) -> None:
        message = clean_results(message)
        self.request.history.append(message)
        self.journal.tool_results_kept(message)

    # -- endings ---------------------------------------------------------------------------

    def _paired(self, calls: Sequence[ToolCall]) -> ToolResults:
        got = {r.call_id: r for r in self.batch.results}
        return ToolResults(
            tuple(
                got.get(c.call_id)
                or self.batch.cut_off(c)  # TURN-UNKNOWN-001: ran, cut off: outcome unknown
                or ToolResult(c.call_id, c.name, _NOT_RUN, is_error=True)
                for c in calls
            )
        )

    async def _clean_up(self, exc: BaseException) -> None:
        """TURN-014: leave no attempt open, no call unanswered in history, no call pending."""
        for call in self.model_calls:
            for attempt in call.attempts:
                if attempt.state is AttemptState.OPEN:
                    attempt.abandon("cancelled")
        if self._awaiting is not None:
            results = clean_results(self._paired(self._awaiting))
            self._awaiting = None
            self.request.history.append(results)
            try:
                self.journal.tool_results_kept(results)
            except Exception:  # never mask why the turn is ending
                logger.exception("could not journal the results of the interrupted round")
        cancelled = isinstance(exc, anyio.get_cancelled_exc_class())
        message = "Cancelled." if cancelled else "The turn ended before this tool call finished."
        with anyio.move_on_after(self.request.cleanup_timeout, shield=True):
            try:
                await self.batch.fail_open(message)
            except Exception:
                logger.exception("could not mark the open tool calls failed")


async def run_turn(request: TurnRequest) -> TurnResult:
    """Run one prompt turn; see `Turn`. Raises `TurnFailed`; cancelled through the caller's
    scope (then answer ``cancelled``)."""
    return await Turn(request).run()
