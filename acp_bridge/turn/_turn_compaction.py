"""When a turn compacts its history (COMPACT-002): near the window, and on an overflow.

`TurnCompaction` belongs to one turn. The model caller asks it `before_call` (the context in
use, from the last call's usage, reached the budget's threshold: compact first) and, when a
request failed as `context_length_exceeded`, `recover` (compact, then the same model call
sends its request again, smaller). An overflow is never retried as it is: without a
compaction that succeeded it ends the turn like any final fault. Each model call recovers at
most twice; a window the provider named smaller than the budget's is adopted.
"""

from __future__ import annotations

import logging

from acp_bridge.providers import ModelStreamError
from acp_bridge.turn._attempt import AttemptState, ModelCall
from acp_bridge.turn._compaction import CompactionRecord
from acp_bridge.turn._compactor import compact
from acp_bridge.turn._request import NoJournal, TurnRequest
from acp_bridge.turn._retry import GiveUp, TurnFailed
from acp_bridge.turn._summary import CompactionFailed, SummaryCall
from acp_bridge.turn._watch import ProgressWatch

__all__ = ["TurnCompaction"]

logger = logging.getLogger(__name__)

_RECOVERIES_PER_CALL = 2


class TurnCompaction:
    """The compactions of one turn (none when the request has no `budget`)."""

    def __init__(self, request: TurnRequest, id_prefix: str) -> None:
        self.request = request
        self.id_prefix = id_prefix
        self.records: list[CompactionRecord] = []
        self.summaries: list[SummaryCall] = []  # every summary call made, for the report
        self._made = 0
        self._recoveries: dict[int, int] = {}

    def observe(self, call: ModelCall) -> None:
        """After a model call: its kept attempt's usage is the context in use now."""
        budget = self.request.budget
        if budget is None:
            return
        for attempt in call.attempts:
            if attempt.state is AttemptState.COMPLETED:  # the kept one
                budget.observe(attempt.usage, self.request.history)
                return

    async def before_call(self, model_call: int) -> None:
        """Compacts first when the context in use reached the threshold. A failed compaction
        is told and logged; the call goes ahead (an overflow then ends the turn)."""
        budget = self.request.budget
        if budget is None or not budget.due(self.request.history):  # COMPACT-010
            return
        try:
            await self._compact("threshold", model_call, None)
        except CompactionFailed as error:
            logger.warning("compaction before model call %d failed: %s", model_call, error)
            if error.give_up is GiveUp.MAX_WAIT_EXCEEDED and error.cause is not None:
                # COMPACT-013: the provider made no progress for max_wait; the call would
                # only wait as long again.
                raise TurnFailed.from_error(
                    error.cause,
                    GiveUp.MAX_WAIT_EXCEEDED,
                    attempts=0,
                    model_call=model_call,
                    policy=self.request.policy,
                ) from None

    async def recover(
        self, error: ModelStreamError, model_call: int, watch: ProgressWatch | None = None
    ) -> bool:
        """After `context_length_exceeded`: True when the history was compacted, so the
        request may go again; False ends the turn with the overflow (or, when `watch`, the
        model call's progress clock, was exceeded meanwhile, with the wait: COMPACT-013)."""
        budget = self.request.budget
        if budget is None:
            return False
        tries = self._recoveries.get(model_call, 0)
        if tries >= _RECOVERIES_PER_CALL:
            return False
        self._recoveries[model_call] = tries + 1
        named = error.context[1] if error.context else None
        if named is not None and 0 < named < budget.window:
            budget.named_window = named  # the provider knows its window better than a table
        try:
            return await self._compact(error.kind.value, model_call, watch) is not None
        except CompactionFailed as failure:
            logger.warning("compaction after an overflow failed: %s", failure)
            return False

    async def _compact(
        self, trigger: str, model_call: int, watch: ProgressWatch | None
    ) -> CompactionRecord | None:
        request = self.request
        assert request.budget is not None
        self._made += 1
        journal = request.journal or NoJournal()
        record = await compact(
            request.history,
            budget=request.budget,
            provider=request.provider,
            model=request.model,
            sink=request.sink,
            journal=journal.compacted,
            compaction_id=f"{self.id_prefix}-c{self._made}",
            trigger=trigger,
            before_model_call=model_call,
            policy=request.policy,
            watch=watch,
            sleep=request.sleep,
            random=request.random,
            summaries=self.summaries,
        )
        if record is not None:
            self.records.append(record)
        return record
