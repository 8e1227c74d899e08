"""The prompt-turn runner: the tool loop over retried model calls, held tool calls, and cleanup.

The only async module of the engine. It streams each attempt, forwards its chunks, retries per
`RetryPolicy` (a reset chunk first, then the back-off: RESET-001), runs tool calls only after the
attempt's finish (TURN-002), and keeps the history to completed material (TURN-006).

Cancellation is the caller's: run the turn inside a `CancelScope` and answer `cancelled` when
the scope caught it. On the way out the runner marks every shown-but-unfinished tool call
failed (shielded, bounded) and pairs the history, so nothing is left half-done (TURN-014).
Everything reaches the editor through `TurnSink`, awaited, in order.
"""

from __future__ import annotations

import enum
import itertools
import logging
import random as _random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import anyio
import anyio.lowlevel

from acp_bridge.providers import (
    AssistantTurn,
    FaultKind,
    FinishReason,
    Message,
    ModelProvider,
    ModelRequest,
    ModelStreamError,
    StreamStart,
    TextDelta,
    ThoughtDelta,
    ToolCall,
    ToolResult,
    ToolResults,
    ToolSpec,
    Usage,
    UserTurn,
)
from acp_bridge.tools._base import Tool, ToolContext
from acp_bridge.turn._attempt import Attempt, AttemptState, ModelCall
from acp_bridge.turn._clean import clean_assistant_turn, clean_results, repaired_chunk
from acp_bridge.turn._history import repair_history
from acp_bridge.turn._ledger import EffectLedger
from acp_bridge.turn._loop_guard import LoopGuard, screen
from acp_bridge.turn._permission import PermissionGate, PermissionMemory, SessionMode
from acp_bridge.turn._reset import ChunkPresenter
from acp_bridge.turn._retry import GiveUp, RetryPolicy, TurnFailed
from acp_bridge.turn._tool_calls import ToolCallBatch, ToolRun
from acp_bridge.turn._updates import AgentText, TurnSink
from acp_bridge.turn._usage import usage_report
from acp_bridge.turn._watch import ProgressWatch, retry_notice, wait_exceeded

__all__ = [
    "AttemptReport",
    "StopReason",
    "Turn",
    "TurnJournal",
    "TurnRequest",
    "TurnResult",
    "run_turn",
    "turn_id_for",
]

logger = logging.getLogger(__name__)

_FILTERED = frozenset({FinishReason.CONTENT_FILTER, FinishReason.REFUSAL})
_CHUNK_EVENTS = (TextDelta, ThoughtDelta)  # a tuple: isinstance checks it faster than a union
_NO_PROGRESS = (StreamStart, Usage)  # a server that only opens streams makes no progress
_NOT_RUN = "Not run: the turn was cancelled before this tool call ran."


class StopReason(enum.StrEnum):
    """ACP `StopReason` values a turn can end with."""

    END_TURN = "end_turn"
    MAX_TOKENS = "max_tokens"
    MAX_TURN_REQUESTS = "max_turn_requests"
    REFUSAL = "refusal"
    CANCELLED = "cancelled"


def turn_id_for(session_id: str, ordinal: int) -> str:
    """The stable turn id: the session id and the 1-based ordinal of the prompt in it.

    Stable across a restart (the same turn replayed gets the same id, so the same effect
    keys: EFFECT-004); the agent layer derives the ordinal from the persisted history.
    """
    return f"{session_id}-turn{ordinal}"


class TurnJournal(Protocol):
    """The durable record of a turn as it progresses (the session store implements it).

    Each method is called synchronously when the engine commits to that step and must be
    durable when it returns; an exception propagates and ends the turn before the next step,
    so a tool never runs unless its start was journaled. The prompt is the caller's to record
    before `Turn.run` (the engine appends it to history first thing). The default journal
    records nothing.

    - `model_call_kept(model_call, attempt, message)`: a completed attempt's `AssistantTurn`
      entered history, before any of its tool calls is shown (abandoned attempts never do).
    - `tool_results_kept(message)`: a round's `ToolResults` entered history (also on the way
      out of a cancelled or failed turn, paired with every call of the round).
    - `tool_call_starting(tool_call_id, effect_key)`: a shown call is about to run: before its
      effect key (None for a tool without side effects) is recorded `started` in the ledger
      and before its `in_progress` update.
    """

    def model_call_kept(self, model_call: int, attempt: int, message: AssistantTurn) -> None: ...

    def tool_results_kept(self, message: ToolResults) -> None: ...

    def tool_call_starting(self, tool_call_id: str, effect_key: str | None) -> None: ...


class _NoJournal:
    def model_call_kept(self, model_call: int, attempt: int, message: AssistantTurn) -> None:
        pass

    def tool_results_kept(self, message: ToolResults) -> None:
        pass

    def tool_call_starting(self, tool_call_id: str, effect_key: str | None) -> None:
        pass


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """Everything one prompt turn needs.

    `history` is the session's list, mutated in place with completed material only: the
    prompt (appended first; it stays when the turn fails or is cancelled), each kept
    attempt's `AssistantTurn`, and `ToolResults` paired with its calls. `tools` is every
    tool of the session; the engine itself offers only those the `mode` allows (TURN-005)
    and refuses calls to the others; `current_mode`, when given, is read instead of `mode` for
    every model call and every tool call, so a `session/set_mode` during the turn applies to
    what is decided after it (TURN-MODE-001). `id_prefix` (default `turn_id`) prefixes message and
    tool call ids: pass a fresh one when the same turn id is run again after a restart, so
    editor-side ids never collide with the interrupted run's. `journal` (default: none)
    records the turn durably as it progresses (`TurnJournal`). `reasoning` is passed to every
    model call (`ModelRequest.reasoning`).
    """

    turn_id: str
    session_id: str
    history: list[Message]
    prompt: UserTurn
    provider: ModelProvider
    model: str
    tools: Mapping[str, Tool]
    make_context: Callable[[], ToolContext]
    sink: TurnSink
    ledger: EffectLedger
    permissions: PermissionMemory
    mode: SessionMode = SessionMode.ASK
    current_mode: Callable[[], SessionMode] | None = None
    system: str | None = None
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    max_model_calls: int = 32
    id_prefix: str | None = None
    journal: TurnJournal | None = None
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep
    random: Callable[[], float] = _random.random
    cleanup_timeout: float = 5.0
    reasoning: str | None = None


@dataclass(frozen=True, slots=True)
class AttemptReport:
    """One attempt, for cost accounting and the debug log. `billed`: the provider started
    answering (any stream event arrived), so assume its tokens are billed."""

    model_call: int
    attempt: int
    state: AttemptState
    reason: str | None
    usage: Usage | None
    billed: bool
    shown_chunks: bool


@dataclass(frozen=True, slots=True)
class TurnResult:
    stop_reason: StopReason
    model_calls: int
    retries: int
    attempts: tuple[AttemptReport, ...]
    tool_runs: tuple[ToolRun, ...]

    @property
    def billed_attempts(self) -> int:
        return sum(1 for a in self.attempts if a.billed)

    @property
    def usage(self) -> Usage:
        """Usage summed over every attempt, abandoned ones included (they cost too)."""
        reports = [a.usage for a in self.attempts if a.usage is not None]
        return Usage(
            input_tokens=sum(u.input_tokens for u in reports),
            output_tokens=sum(u.output_tokens for u in reports),
            cached_input_tokens=sum(u.cached_input_tokens for u in reports),
            reasoning_tokens=sum(u.reasoning_tokens for u in reports),
        )


class Turn:
    """One prompt turn. `await run()`; after a cancellation, `result(StopReason.CANCELLED)`."""

    def __init__(self, request: TurnRequest) -> None:
        self.request = request
        self.id_prefix = request.id_prefix or request.turn_id
        self.model_calls: list[ModelCall] = []
        self.retries = 0
        self._seq = itertools.count(1)
        self.journal: TurnJournal = request.journal or _NoJournal()
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
        )
        self._awaiting: Sequence[ToolCall] | None = None
        self.guard = LoopGuard()

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
        return TurnResult(
            stop_reason=stop_reason,
            model_calls=len(self.model_calls),
            retries=self.retries,
            attempts=tuple(
                AttemptReport(
                    a.model_call,
                    a.number,
                    a.state,
                    a.abandon_reason,
                    a.usage,
                    a.received_events,
                    a.shown_chunks,
                )
                for call in self.model_calls
                for a in call.attempts
            ),
            tool_runs=tuple(self.batch.runs),
        )

    # -- the tool loop -------------------------------------------------------------------

    async def _loop(self) -> StopReason:
        while True:
            if len(self.model_calls) >= self.request.max_model_calls:
                return StopReason.MAX_TURN_REQUESTS
            attempt = await self._model_call()
            await self._report_usage(self.model_calls[-1])  # USAGE-001: after every call
            assert attempt.finish is not None
            reason = attempt.finish.reason
            if reason in _FILTERED:
                self._keep(attempt, attempt.to_assistant_turn(with_tool_calls=False))
                return StopReason.REFUSAL
            if reason is FinishReason.LENGTH:
                self._keep(attempt, attempt.to_assistant_turn(with_tool_calls=False))
                return StopReason.MAX_TOKENS
            calls = attempt.tool_calls
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

    async def _model_call(self) -> Attempt:
        """Attempts until one completes; raises `TurnFailed` when retrying cannot help."""
        request, policy = self.request, self.request.policy
        call = ModelCall(len(self.model_calls) + 1, seq=self._seq)
        self.model_calls.append(call)
        presenter = ChunkPresenter(self.id_prefix, call.number)
        attempt = call.start_attempt()
        filtered = 0
        watch = ProgressWatch(stall_after=policy.stall_notice_after, max_wait=policy.max_wait)
        while True:
            failure: ModelStreamError | None = None
            try:
                await self._watched_stream(call, attempt, presenter, watch)
            except ModelStreamError as error:
                failure = error
            else:
                assert attempt.finish is not None
                if not (
                    attempt.finish.reason in _FILTERED
                    and filtered < policy.content_filter_retries
                    and self.retries < policy.max_retries_per_turn
                ):
                    return attempt
                filtered += 1
            await anyio.lowlevel.checkpoint_if_cancelled()  # TURN-015: never retry after cancel
            reason = FaultKind.CONTENT_FILTERED.value if failure is None else failure.kind.value
            attempt.abandon(reason)
            delay = 0.0
            if failure is not None:
                decision = policy.decide(
                    failure,
                    attempt=attempt.number,
                    retries_in_turn=self.retries,
                    random=request.random,
                )
                give_up = decision.give_up
                if watch.exceeded:
                    give_up = GiveUp.MAX_WAIT_EXCEEDED
                elif decision.retry and watch.would_exceed(decision.delay):
                    give_up = GiveUp.MAX_WAIT_EXCEEDED  # WAIT-003: no back-off past the cap
                    failure = wait_exceeded(failure, request.provider.name, watch, decision.delay)
                if give_up is not None:
                    await self._report_usage(call)  # USAGE-002: failed calls were billed too
                    final = presenter.give_up_for(attempt, reason, give_up.value)
                    if final is not None:
                        await request.sink.send_update(final)  # RESET-010: before the error
                    raise TurnFailed.from_error(
                        failure,
                        give_up,
                        attempts=attempt.number,
                        model_call=call.number,
                        policy=policy,
                    )
                delay = decision.delay
            self.retries += 1
            new = call.start_attempt()
            reset = presenter.reset_for(attempt, new, reason)
            await request.sink.send_update(  # WAIT-001: a retry in words
                retry_notice(failure, new.number, policy.max_attempts, delay)
            )
            if reset is not None:
                await request.sink.send_update(reset)  # RESET-001: before the back-off
            logger.info(
                "retrying model call %d as attempt %d in %.2f s (%s)",
                call.number,
                new.number,
                delay,
                reason,
            )
            await request.sleep(delay)
            attempt = new

    async def _watched_stream(
        self, call: ModelCall, attempt: Attempt, presenter: ChunkPresenter, watch: ProgressWatch
    ) -> None:
        """`_stream` beside the watch's task (WAIT-002, WAIT-003); the stream's own exception
        leaves unwrapped."""
        failure: Exception | None = None
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(watch.watch, scope, self.request.sink.send_update)
                try:
                    await self._stream(call, attempt, presenter, watch)
                except Exception as exc:
                    failure = exc
                tg.cancel_scope.cancel()
        if failure is not None:
            raise failure
        if watch.exceeded:
            raise wait_exceeded(None, self.request.provider.name, watch, 0.0)

    async def _report_usage(self, call: ModelCall) -> None:
        report = usage_report(call)
        if report is not None:
            await self.request.sink.send_update(report)

    async def _stream(
        self, call: ModelCall, attempt: Attempt, presenter: ChunkPresenter, watch: ProgressWatch
    ) -> None:
        request = self.request
        repaired, _ = repair_history(request.history)  # TURN-007: before every request
        if repaired != request.history:
            request.history[:] = repaired
        model_request = ModelRequest(
            model=request.model,
            messages=tuple(request.history),
            tools=self.specs(),
            system=request.system,
            attempt=attempt.number,
            reasoning=request.reasoning,
        )
        stream = request.provider.stream(model_request)
        send_update = request.sink.send_update
        try:
            while True:
                # Inline rather than a helper coroutine: one `anext` per event is the hot
                # path. Only the adapter's own failures are caught here; the sink's
                # exceptions (below, outside this `try`) propagate as they are.
                try:
                    event = await anext(stream)
                except StopAsyncIteration:
                    break
                except (ModelStreamError, anyio.get_cancelled_exc_class()):
                    raise
                except Exception as exc:
                    raise _outside_contract(exc, request.provider.name) from exc
                if isinstance(event, _CHUNK_EVENTS) and not event.text.isascii():
                    event = repaired_chunk(event)  # TURN-TEXT-001: the last line of defence
                call.feed(event)
                if not isinstance(event, _NO_PROGRESS):
                    watch.seen += 1
                if isinstance(event, _CHUNK_EVENTS):
                    update = presenter.chunk_for(attempt, event)
                    if update is not None:
                        await send_update(update)
                if attempt.state is AttemptState.COMPLETED:
                    break
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                # Shielded and bounded, so the adapter can close its connection even when
                # the turn is being cancelled.
                with anyio.move_on_after(self.request.cleanup_timeout, shield=True):
                    await aclose()
        if attempt.state is AttemptState.OPEN:
            raise ModelStreamError(FaultKind.INCOMPLETE_STREAM, "the stream ended without a finish")

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


def _outside_contract(exc: Exception, provider: str) -> ModelStreamError:
    """A raw exception from the adapter becomes a clear, final `ModelStreamError`.

    Called while the exception is being handled (the log records its traceback).
    """
    logger.exception("provider %s raised outside its contract", provider)
    return ModelStreamError(
        FaultKind.PROVIDER_ERROR,
        f"the provider failed unexpectedly ({type(exc).__name__})",
        retryable=False,
    )


async def run_turn(request: TurnRequest) -> TurnResult:
    """Run one prompt turn; see `Turn`. Raises `TurnFailed`; cancelled through the caller's
    scope (then answer ``cancelled``)."""
    return await Turn(request).run()
