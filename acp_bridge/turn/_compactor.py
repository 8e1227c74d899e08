"""Compacting a session's history: the summarisation call, its updates and its record.

`compact` plans what to summarise (`_compaction.plan_compaction`), asks the model for the
summary through the same provider (`_summary.summarise`), streams it to the editor as
`CompactionChunk`s between a `CompactionShown` in_progress and completed (COMPACT-004),
journals the `CompactionRecord` and only then changes the history in place (COMPACT-005).

After it, a `UsageReport` tells the editor what the summary call was billed (every attempt,
never counted as context: COMPACT-012) and, once the history changed, the context now in use,
estimated until the next model call's usage says (COMPACT-011).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio

from acp_bridge.providers import Message, ModelProvider
from acp_bridge.turn._budget import ContextBudget
from acp_bridge.turn._compaction import CompactionRecord, compacted_history, plan_compaction
from acp_bridge.turn._retry import RetryPolicy
from acp_bridge.turn._summary import CompactionFailed, SummaryCall, summarise
from acp_bridge.turn._updates import AttemptUsage, CompactionShown, TurnSink, UsageReport
from acp_bridge.turn._watch import ProgressWatch

__all__ = ["compact"]

logger = logging.getLogger(__name__)


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
    watch: ProgressWatch | None = None,
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    random: Callable[[], float] | None = None,
    summaries: list[SummaryCall] | None = None,
) -> CompactionRecord | None:
    """Compacts `history` in place; None when there is nothing to summarise.

    `watch`: the progress clock of the model call the compaction serves (an overflow's
    recovery), so its waiting counts there; else the summary call has its own (WAIT-003).
    Raises `CompactionFailed` (after a `failed` update); a cancellation sends `cancelled`
    and propagates. The history is unchanged unless the record was journaled. The summary
    call, once made, is appended to `summaries` whatever its outcome (COMPACT-014).
    """
    plan = plan_compaction(
        history,
        keep_turns=budget.keep_turns,
        budget=budget.kept_budget(),
    )
    if plan is None:
        logger.info("compaction %s: nothing to summarise", compaction_id)
        return None
    policy = policy or RetryPolicy()
    if watch is None:
        watch = ProgressWatch(stall_after=policy.stall_notice_after, max_wait=policy.max_wait)
    older, kept = len(plan.older), plan.kept
    shown = CompactionShown(
        compaction_id, "in_progress", trigger=trigger, summarised=older, kept=kept
    )
    await sink.send_update(shown)
    billed: list[AttemptUsage] = []
    try:
        summary = await summarise(
            plan.older,
            budget=budget,
            provider=provider,
            model=model,
            sink=sink,
            compaction_id=compaction_id,
            policy=policy,
            watch=watch,
            billed=billed,
            sleep=sleep,
            random=random,
        )
        record = CompactionRecord(
            compaction_id, summary, kept, trigger, before_model_call, summarised=older
        )
        journal(record)  # durable before the history changes and before it is shown done
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True), anyio.move_on_after(5.0):
            await sink.send_update(CompactionShown(compaction_id, "cancelled", trigger=trigger))
        raise
    except CompactionFailed as error:
        await sink.send_update(
            CompactionShown(compaction_id, "failed", error=error.message, trigger=trigger)
        )
        if any(a.usage is not None for a in billed):  # billed all the same (COMPACT-012)
            await sink.send_update(
                UsageReport(before_model_call, None, tuple(billed), compaction_id=compaction_id)
            )
        raise
    finally:
        if summaries is not None and billed:
            summaries.append(SummaryCall(compaction_id, trigger, before_model_call, tuple(billed)))
    history[:] = compacted_history(summary, history[len(history) - kept :])
    budget.estimate(history)  # until the next usage says
    await sink.send_update(
        CompactionShown(
            compaction_id, "completed", summary, trigger=trigger, summarised=older, kept=kept
        )
    )
    await sink.send_update(  # COMPACT-011: the context now in use, and what the summary cost
        UsageReport(
            before_model_call,
            None,
            tuple(billed),
            context=budget.used,
            compaction_id=compaction_id,
        )
    )
    logger.info(
        "compaction %s (%s): %d messages summarised, %d kept", compaction_id, trigger, older, kept
    )
    return record
