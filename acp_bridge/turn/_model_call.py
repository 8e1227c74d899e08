"""One model call of a turn: attempts until one completes, retried per `RetryPolicy`.

Each attempt is streamed and its chunks forwarded as they arrive; a retry that follows shown
output opens with a reset chunk, sent before the back-off (RESET-001); a retry is told in
words (WAIT-001) and the total waiting is capped (WAIT-003). Usage is reported after every
call, failed ones included (USAGE-001, USAGE-002).
"""

from __future__ import annotations

import functools
import itertools
import logging
from collections.abc import AsyncIterator, Callable

import anyio
import anyio.lowlevel

from acp_bridge.providers import (
    FaultKind,
    FinishReason,
    ModelRequest,
    ModelStreamError,
    StreamEvent,
    StreamStart,
    TextDelta,
    ThoughtDelta,
    ToolSpec,
    Usage,
    UserTurn,
)
from acp_bridge.turn._attempt import Attempt, AttemptState, ModelCall
from acp_bridge.turn._clean import repaired_chunk
from acp_bridge.turn._history import join_unanswered_prompts, repair_history
from acp_bridge.turn._request import TurnRequest
from acp_bridge.turn._reset import ChunkPresenter
from acp_bridge.turn._retry import GiveUp, TurnFailed
from acp_bridge.turn._turn_compaction import TurnCompaction
from acp_bridge.turn._usage import usage_report
from acp_bridge.turn._watch import (
    AfterStream,
    ProgressWatch,
    retry_notice,
    run_watched,
    wait_exceeded,
)

__all__ = ["FILTERED", "ModelCaller"]

logger = logging.getLogger(__name__)

FILTERED = frozenset({FinishReason.CONTENT_FILTER, FinishReason.REFUSAL})
_CHUNK_EVENTS = (TextDelta, ThoughtDelta)  # a tuple: isinstance checks it faster than a union
_NO_PROGRESS = (StreamStart, Usage)  # a server that only opens streams makes no progress
FORMAT_HINT = (
    "Your last reply could not be read as a function call. Call one function now, replying "
    'with only its JSON object {"name": ..., "arguments": {...}}: no code block, no other '
    "text. Or answer in plain text if no function is needed."
)
"""Sent once, after the user's words, when the server could not parse the model's output
(UNPARSED-002): the same request would get the same output; this one differs. With it the
request asks the server to hold the model to a call of the offered tools (UNPARSED-003:
llama.cpp then samples under a grammar built from the tools' schemas); the plain-text way
out stays for servers that accept the field and ignore it."""


class ModelCaller:
    """The model calls of one turn, in order (`calls`), and how many retries they took."""

    def __init__(
        self, request: TurnRequest, id_prefix: str, specs: Callable[[], tuple[ToolSpec, ...]]
    ) -> None:
        self.request = request
        self.id_prefix = id_prefix
        self.specs = specs  # the tools offered, read afresh for every request (TURN-MODE-001)
        self.calls: list[ModelCall] = []
        self.retries = 0
        self._seq = itertools.count(1)
        self.compaction = TurnCompaction(request, id_prefix)
        self._hint: str | None = None  # FORMAT_HINT for the attempts after an unparsed one
        self._required = False  # and a call required of the model (UNPARSED-003)

    async def call(self) -> Attempt:
        """Attempts until one completes; raises `TurnFailed` when retrying cannot help."""
        request, policy = self.request, self.request.policy
        call = ModelCall(len(self.calls) + 1, seq=self._seq)
        self.calls.append(call)
        presenter = ChunkPresenter(self.id_prefix, call.number)
        attempt = call.start_attempt()
        filtered = 0
        self._hint, self._required = None, False
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
                    attempt.finish.reason in FILTERED
                    and filtered < policy.content_filter_retries
                    and self.retries < policy.max_retries_per_turn
                ):
                    return attempt
                filtered += 1
            await anyio.lowlevel.checkpoint_if_cancelled()  # TURN-015: never retry after cancel
            reason = FaultKind.CONTENT_FILTERED.value if failure is None else failure.kind.value
            attempt.abandon(reason)
            delay = 0.0
            if (
                failure is not None
                and failure.kind is FaultKind.CONTEXT_LENGTH_EXCEEDED
                and await self.compaction.recover(failure, call.number, watch)
            ):
                failure = None  # COMPACT-002: compacted; the request goes again, smaller
            elif (
                failure is not None
                and failure.kind is FaultKind.UNPARSED_OUTPUT
                and self._hint is None
                and self.retries < policy.max_retries_per_turn
            ):
                self._hint = FORMAT_HINT  # UNPARSED-002: once, not as is: with the format
                self._required = bool(self.specs())  # UNPARSED-003: held to a call by the server
            elif (
                failure is not None
                and failure.kind is FaultKind.BAD_REQUEST
                and self._required
                and self.retries < policy.max_retries_per_turn
            ):
                self._required = False  # UNPARSED-003: a server refusing it: the hint alone
            elif failure is not None:
                decision = policy.decide(
                    failure,
                    attempt=attempt.number,
                    retries_in_turn=self.retries,
                    random=request.random,
                )
                give_up = decision.give_up
                if watch.exceeded:
                    give_up = GiveUp.MAX_WAIT_EXCEEDED
                    if failure.kind is FaultKind.CONTEXT_LENGTH_EXCEEDED:  # COMPACT-013
                        failure = wait_exceeded(None, request.provider.name, watch, 0.0)
                elif decision.retry and watch.would_exceed(decision.delay):
                    give_up = GiveUp.MAX_WAIT_EXCEEDED  # WAIT-003: no back-off past the cap
                    failure = wait_exceeded(failure, request.provider.name, watch, decision.delay)
                if give_up is not None:
                    await self.report_usage(call)  # USAGE-002: failed calls were billed too
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
            compacted = reason == FaultKind.CONTEXT_LENGTH_EXCEEDED.value
            if not compacted:  # a compaction is no retry of the same request
                self.retries += 1
            new = call.start_attempt()
            reset = presenter.reset_for(attempt, new, reason)
            if not compacted:
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
        request = self.request
        await run_watched(
            lambda: self._stream(call, attempt, presenter, watch),
            watch,
            request.sink.send_update,
            request.provider.name,
            request.background,
        )

    async def report_usage(self, call: ModelCall, *, ends_turn: bool = False) -> None:
        """USAGE-001; `ends_turn`: no tool call follows, the turn ends after this call."""
        self.compaction.observe(call)
        report = usage_report(call, ends_turn=ends_turn)
        if report is not None:
            await self.request.sink.send_update(report)

    async def _stream(
        self, call: ModelCall, attempt: Attempt, presenter: ChunkPresenter, watch: ProgressWatch
    ) -> AfterStream:
        """One attempt's stream, each chunk forwarded; returns the stream's closing when the
        attempt completed (else it is closed here, before the error leaves)."""
        request = self.request
        repaired, _ = repair_history(request.history)  # TURN-007: before every request
        repaired = join_unanswered_prompts(repaired)  # SESS-CANCEL-001
        if repaired != request.history:
            request.history[:] = repaired
        model_request = ModelRequest(
            model=request.model,
            messages=(*request.history, UserTurn((self._hint,)))
            if self._hint
            else tuple(request.history),
            tools=self.specs(),
            system=request.system,
            attempt=attempt.number,
            reasoning=request.reasoning,
            tool_required=self._required,
        )
        stream = request.provider.stream(model_request)
        send_update = request.sink.send_update
        completed = False
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
                call.accept(event)
                if not isinstance(event, _NO_PROGRESS):
                    watch.seen += 1
                if isinstance(event, _CHUNK_EVENTS):
                    update = presenter.chunk_for(attempt, event)
                    if update is not None:
                        await send_update(update)
                if attempt.state is AttemptState.COMPLETED:
                    completed = True
                    break
        finally:
            if not completed:
                await self._close(stream)
        if attempt.state is AttemptState.OPEN:
            raise ModelStreamError(FaultKind.INCOMPLETE_STREAM, "the stream ended without a finish")
        # TAIL4-STREAM-001: the answer is complete; closing the stream (the rest of the body
        # drained, the connection back to its pool) waits until the response no longer does.
        return functools.partial(self._close, stream)

    async def _close(self, stream: AsyncIterator[StreamEvent]) -> None:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            # Shielded and bounded, so the adapter can close its connection even when the
            # turn (or the connection's background group) is being cancelled.
            with anyio.move_on_after(self.request.cleanup_timeout, shield=True):
                await aclose()


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
