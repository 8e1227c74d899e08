"""Compacting a session's history: the summarisation call, its updates and its record.

`compact` plans what to summarise (`_compaction.plan_compaction`), asks the model for the
summary through the same provider (a transcript of the older messages in one user turn, a
summarisation system prompt, no tools), streams it to the editor as `CompactionChunk`s between
a `CompactionShown` in_progress and completed (COMPACT-004), journals the `CompactionRecord`
and only then changes the history in place (COMPACT-005).

The summarisation call keeps the retry contract (COMPACT-006): a broken stream is retried per
`RetryPolicy`; when the abandoned attempt had shown summary text, the partial summary is
cleared (`summary: ""`) and the new attempt's first chunk carries the reset marker. A summary
request that itself exceeds the window is sent again with half the transcript.
"""

from __future__ import annotations

import logging
import random as _random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import anyio

from acp_bridge.providers import (
    FaultKind,
    Finish,
    Message,
    ModelProvider,
    ModelRequest,
    ModelStreamError,
    TextDelta,
    Usage,
    UserTurn,
)
from acp_bridge.turn._compaction import (
    CompactionRecord,
    compacted_history,
    estimate_tokens,
    plan_compaction,
    transcript_text,
)
from acp_bridge.turn._retry import RetryPolicy
from acp_bridge.turn._tally import TokenTally
from acp_bridge.turn._updates import CompactionChunk, CompactionShown, ResetMarker, TurnSink

__all__ = ["SUMMARY_SYSTEM", "CompactionFailed", "ContextBudget", "compact"]

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


@dataclass(slots=True)
class ContextBudget:
    """One session's context budget (the agent layer keeps it across turns).

    `window`: the model's context window in tokens; compaction is due once `used` (the
    context in use after the last model call, from its usage) reaches `threshold` of it.
    `keep_turns`: how many recent prompt turns a compaction keeps whole. A `threshold` of
    infinity never makes it due (an overflow still compacts).
    """

    window: int
    threshold: float = 0.8
    keep_turns: int = 2
    used: int = 0
    named_window: int | None = None  # what the provider's overflow error said, when smaller
    overhead: int = 0  # what a request takes besides the history: system prompt, tools
    tally: TokenTally = field(default_factory=TokenTally, compare=False, repr=False)

    def kept_budget(self) -> int:
        """The most the messages a compaction keeps may take: half of what the threshold
        leaves once the request's overhead is counted."""
        room = self.limit * min(self.threshold, 0.8) - self.overhead
        return max(int(room / 2), 0)

    @property
    def limit(self) -> int:
        """The window compaction works to: the smaller of the known and the named one."""
        named = self.named_window
        return self.window if named is None else min(self.window, named)

    def due(self) -> bool:
        return self.used >= self.threshold * self.limit

    def observe(self, usage: Usage | None, history: Sequence[Message] = ()) -> None:
        """After a model call: its kept attempt's usage is the context now in use, and what
        its input took beyond `history` (the messages it sent) is the overhead."""
        if usage is not None and (usage.input_tokens or usage.output_tokens):
            self.used = usage.input_tokens + usage.output_tokens
            if history:
                self.overhead = max(usage.input_tokens - self.tally.estimate(history), 0)


class CompactionFailed(Exception):
    """The summary could not be had (the provider kept failing, or answered nothing)."""

    def __init__(self, message: str, cause: ModelStreamError | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.cause = cause


async def compact(
    history: list[Message],
    *,
    budget: ContextBudget,
    provider: ModelProvider,
    model: str,
    sink: TurnSink,
    journal: Callable[[CompactionRecord], None],
    compaction_id: str,
    trigger: str,
    before_model_call: int = 0,
    policy: RetryPolicy | None = None,
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    random: Callable[[], float] | None = None,
) -> CompactionRecord | None:
    """Compacts `history` in place; None when there is nothing to summarise.

    Raises `CompactionFailed` (after a `failed` update); a cancellation sends `cancelled`
    and propagates. The history is unchanged unless the record was journaled.
    """
    plan = plan_compaction(
        history,
        keep_turns=budget.keep_turns,
        budget=budget.kept_budget(),
    )
    if plan is None:
        logger.info("compaction %s: nothing to summarise", compaction_id)
        return None
    older, kept = len(plan.older), plan.kept
    shown = CompactionShown(
        compaction_id, "in_progress", trigger=trigger, summarised=older, kept=kept
    )
    await sink.send_update(shown)
    try:
        summary = await _summarise(
            plan.older,
            budget=budget,
            provider=provider,
            model=model,
            sink=sink,
            compaction_id=compaction_id,
            policy=policy or RetryPolicy(),
            sleep=sleep,
            random=random,
        )
        record = CompactionRecord(compaction_id, summary, kept, trigger, before_model_call)
        journal(record)  # durable before the history changes and before it is shown done
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True), anyio.move_on_after(5.0):
            await sink.send_update(CompactionShown(compaction_id, "cancelled", trigger=trigger))
        raise
    except CompactionFailed as error:
        await sink.send_update(
            CompactionShown(compaction_id, "failed", error=error.message, trigger=trigger)
        )
        raise
    history[:] = compacted_history(summary, history[len(history) - kept :])
    budget.used = budget.overhead + estimate_tokens(history)  # until the next usage says
    await sink.send_update(
        CompactionShown(
            compaction_id, "completed", summary, trigger=trigger, summarised=older, kept=kept
        )
    )
    logger.info(
        "compaction %s (%s): %d messages summarised, %d kept", compaction_id, trigger, older, kept
    )
    return record


async def _summarise(
    older: tuple[Message, ...],
    *,
    budget: ContextBudget,
    provider: ModelProvider,
    model: str,
    sink: TurnSink,
    compaction_id: str,
    policy: RetryPolicy,
    sleep: Callable[[float], Awaitable[None]],
    random: Callable[[], float] | None,
) -> str:
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
        stream = provider.stream(request)
        try:
            finished = False
            async for event in stream:
                if isinstance(event, TextDelta) and event.text:
                    reset = None
                    if not parts and reason is not None and broke_shown:
                        reset = ResetMarker(attempt, reason)  # RESET-001, for the summary
                    parts.append(event.text)
                    await sink.send_update(CompactionChunk(compaction_id, event.text, reset))
                elif isinstance(event, Finish):
                    finished = True
                    break
            if not finished:
                raise ModelStreamError(
                    FaultKind.INCOMPLETE_STREAM, "the summary stream ended without a finish"
                )
            summary = "".join(parts).strip()
            if not summary:
                raise CompactionFailed("the model answered the summary request with no text")
            return summary
        except ModelStreamError as error:
            broke_shown = bool(parts)
            if parts:
                # The partial summary is dropped, as a broken message is (COMPACT-006).
                await sink.send_update(CompactionShown(compaction_id, "in_progress", summary=""))
            if error.kind is FaultKind.CONTEXT_LENGTH_EXCEEDED and shrinks < _SHRINKS:
                shrinks, limit = shrinks + 1, limit // 2
                attempt, reason = attempt + 1, error.kind.value
                continue
            decision = policy.decide(error, attempt=attempt, retries_in_turn=retries, random=draw)
            if not decision.retry:
                raise CompactionFailed(
                    f"the summary request failed ({error.kind.value}): {error.message}", error
                ) from error
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
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                with anyio.move_on_after(5.0, shield=True):
                    await aclose()
