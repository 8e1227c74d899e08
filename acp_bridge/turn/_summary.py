"""The summarisation call of a compaction: the model writes the summary, under the retry contract.

`summarise` sends the older messages as a plain transcript in one user turn, with a
summarisation system prompt and no tools, and streams the summary to the editor as
`CompactionChunk`s. It keeps the retry contract (COMPACT-006): a broken stream is retried per
`RetryPolicy`; when the abandoned attempt had shown summary text, the partial summary is
cleared (`summary: ""`) and the new attempt's first chunk carries the reset marker. A summary
request that itself exceeds the window is sent again with half the transcript.

Every attempt's usage is collected (`billed`): it was billed, but it is never the context in
use (COMPACT-012). The call's waiting is watched like a model call's (WAIT-002, WAIT-003,
COMPACT-013): a provider that makes no progress for `max_wait` ends it, and so does a
back-off that would pass the cap.
"""

from __future__ import annotations

import logging
import random as _random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import anyio

from acp_bridge.providers import (
    FaultKind,
    Finish,
    Message,
    ModelProvider,
    ModelRequest,
    ModelStreamError,
    StreamStart,
    TextDelta,
    Usage,
    UserTurn,
)
from acp_bridge.turn._budget import ContextBudget
from acp_bridge.turn._compaction import transcript_text
from acp_bridge.turn._retry import GiveUp, RetryPolicy
from acp_bridge.turn._updates import (
    AttemptUsage,
    CompactionChunk,
    CompactionShown,
    ResetMarker,
    TurnSink,
)
from acp_bridge.turn._watch import ProgressWatch, run_watched, wait_exceeded

__all__ = ["SUMMARY_SYSTEM", "CompactionFailed", "SummaryCall", "summarise"]

logger = logging.getLogger(__name__)

SUMMARY_SYSTEM = (
    "You write the summary that replaces the earlier part of a coding session between a user "
    "and an AI coding agent, because the conversation no longer fits the model's context "
    "window. The agent will continue the work from your summary and the most recent "
    "messages alone, so keep everything it needs: the user's goals and requests in their own "
    "terms, decisions and constraints, the files read, created or changed (with paths) and "
    "what was changed, commands run and their outcomes, errors met and how they were solved, "
    "and what remains to do. Leave out pleasantries and anything superseded. Write plain "
    "text, no preamble."
)
_SHRINKS = 3  # times a summary request that overflowed is sent again with half the transcript
_NO_PROGRESS = (StreamStart, Usage)  # as for a model call: opening a stream is no progress


@dataclass(frozen=True, slots=True)
class SummaryCall:
    """The summary call of one compaction, as the prompt response reports it: every attempt
    sent to the provider, abandoned ones included (COMPACT-012, COMPACT-014). It is no model
    call of the turn: `model_call` is the one it ran before or recovered (0 for `/compact`)."""

    compaction_id: str
    trigger: str
    model_call: int
    attempts: tuple[AttemptUsage, ...]

    @property
    def billed_attempts(self) -> int:
        return sum(1 for a in self.attempts if a.billed)


class CompactionFailed(Exception):
    """The summary could not be had (the provider kept failing, or answered nothing).
    `give_up` is `max_wait_exceeded` when the provider made no progress for `max_wait`."""

    def __init__(
        self,
        message: str,
        cause: ModelStreamError | None = None,
        give_up: GiveUp | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.cause = cause
        self.give_up = give_up


async def summarise(
    older: Sequence[Message],
    *,
    budget: ContextBudget,
    provider: ModelProvider,
    model: str,
    sink: TurnSink,
    compaction_id: str,
    policy: RetryPolicy,
    watch: ProgressWatch,
    billed: list[AttemptUsage],
    sleep: Callable[[float], Awaitable[None]],
    random: Callable[[], float] | None,
) -> str:
    """The summary of `older`; each attempt's usage is appended to `billed`."""
    draw = random or _random.random
    room = max(budget.limit * 0.6 - budget.overhead / 2, budget.limit * 0.3)
    limit = max(int(room) * 4, 2_000)  # characters of transcript
    words = max(50, min(1_500, budget.limit // 10))
    attempt, retries, shrinks, broke_shown = 1, 0, 0, False
    reason: str | None = None
    while True:
        transcript = transcript_text(older, limit=limit)
        request = ModelRequest(
            model=model,
            messages=(
                UserTurn(
                    (
                        "Summarise the conversation below for the agent that continues it, "
                        f"in at most {words} words.\n\n<conversation>\n{transcript}\n"
                        "</conversation>",
                    )
                ),
            ),
            system=SUMMARY_SYSTEM,
            attempt=attempt,
        )
        parts: list[str] = []
        bill = _Bill(attempt)
        try:
            reset = ResetMarker(attempt, reason) if reason is not None and broke_shown else None
            run = _Attempt(request, provider, sink, compaction_id, parts, bill, watch, reset)
            await run_watched(run.run, watch, sink.send_update, provider.name)
            summary = "".join(parts).strip()
            if not summary:
                raise CompactionFailed("the model answered the summary request with no text")
            bill.state = "completed"
            return summary
        except CompactionFailed:
            bill.reason = "empty_summary"
            raise
        except anyio.get_cancelled_exc_class():
            bill.reason = "cancelled"
            raise
        except ModelStreamError as error:
            bill.reason = error.kind.value
            broke_shown = bool(parts)
            if parts:
                # The partial summary is dropped, as a broken message is (COMPACT-006).
                await sink.send_update(CompactionShown(compaction_id, "in_progress", summary=""))
            if watch.exceeded:
                raise _waited_too_long(error, provider, watch, 0.0) from error
            if error.kind is FaultKind.CONTEXT_LENGTH_EXCEEDED and shrinks < _SHRINKS:
                shrinks, limit = shrinks + 1, limit // 2
                attempt, reason = attempt + 1, error.kind.value
                continue
            decision = policy.decide(error, attempt=attempt, retries_in_turn=retries, random=draw)
            if not decision.retry:
                raise CompactionFailed(
                    f"the summary request failed ({error.kind.value}): {error.message}", error
                ) from error
            if watch.would_exceed(decision.delay):  # WAIT-003: no back-off past the cap
                raise _waited_too_long(error, provider, watch, decision.delay) from error
            retries, attempt, reason = retries + 1, attempt + 1, error.kind.value
            logger.info(
                "retrying summary %s as attempt %d in %.2f s (%s)",
                compaction_id,
                attempt,
                decision.delay,
                reason,
            )
            await sleep(decision.delay)
        finally:
            billed.append(
                AttemptUsage(bill.attempt, bill.state, bill.usage, bill.received, bill.reason)
            )


class _Bill:
    """What one summary attempt was billed, as it streams."""

    __slots__ = ("attempt", "reason", "received", "state", "usage")

    def __init__(self, attempt: int) -> None:
        self.attempt = attempt
        self.state = "abandoned"
        self.usage: Usage | None = None
        self.received = False
        self.reason: str | None = None


class _Attempt:
    """One summary attempt's stream, forwarded as compaction chunks."""

    def __init__(
        self,
        request: ModelRequest,
        provider: ModelProvider,
        sink: TurnSink,
        compaction_id: str,
        parts: list[str],
        bill: _Bill,
        watch: ProgressWatch,
        reset: ResetMarker | None,
    ) -> None:
        self.request, self.provider, self.sink = request, provider, sink
        self.compaction_id, self.parts, self.bill, self.watch = compaction_id, parts, bill, watch
        self.reset = reset  # on the attempt's first chunk (RESET-001)

    async def run(self) -> None:
        parts, bill, reset = self.parts, self.bill, self.reset
        stream = self.provider.stream(self.request)
        try:
            async for event in stream:
                bill.received = True
                if not isinstance(event, _NO_PROGRESS):
                    self.watch.seen += 1
                if isinstance(event, Usage):
                    bill.usage = event  # the last Usage of an attempt wins (totals)
                elif isinstance(event, TextDelta) and event.text:
                    first = reset if not parts else None  # RESET-001, for the summary
                    parts.append(event.text)
                    chunk = CompactionChunk(self.compaction_id, event.text, first)
                    await self.sink.send_update(chunk)
                elif isinstance(event, Finish):
                    return
            raise ModelStreamError(
                FaultKind.INCOMPLETE_STREAM, "the summary stream ended without a finish"
            )
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                with anyio.move_on_after(5.0, shield=True):
                    await aclose()


def _waited_too_long(
    error: ModelStreamError, provider: ModelProvider, watch: ProgressWatch, delay: float
) -> CompactionFailed:
    final = wait_exceeded(error, provider.name, watch, delay)
    return CompactionFailed(final.message, final, GiveUp.MAX_WAIT_EXCEEDED)
