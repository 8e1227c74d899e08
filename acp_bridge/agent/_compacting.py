"""Compaction at the agent surface: the session's budget, and the `/compact` command.

Every session has one `ContextBudget` (the window from `usage_update.size`'s sources, the
`compaction_threshold` and `compaction_keep_turns` settings), kept across its turns, so the
turn engine compacts before the context outgrows the window (COMPACT-002). `/compact` (a
prompt whose only text is the command) runs a turn that makes no model call of its own: it
summarises the older history at once, whatever the threshold (COMPACT-007); its prompt is
journaled for the replay but never enters the model history.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.agent._config import COMPACT_COMMAND, AgentConfig
from acp_bridge.agent._live import LiveUpdates
from acp_bridge.agent._session import Session
from acp_bridge.providers import ToolSpec
from acp_bridge.tools import Tool
from acp_bridge.turn import (
    AgentText,
    CompactionFailed,
    ContextBudget,
    NoJournal,
    StopReason,
    SummaryCall,
    TurnFailed,
    TurnRequest,
    TurnResult,
    compact,
    estimate_overhead,
)

__all__ = ["COMPACT_COMMAND", "CompactCommand", "context_budget", "is_compact_command"]


def is_compact_command(blocks: Sequence[JsonObject]) -> bool:
    """The prompt (its wire content blocks) is `/compact` alone: text blocks only,
    surrounding space ignored."""
    if not blocks or not all(b.get("type") == "text" for b in blocks):
        return False
    text = "".join(str(b.get("text", "")) for b in blocks)
    return text.strip() == f"/{COMPACT_COMMAND.name}"


def context_budget(
    session: Session,
    live: LiveUpdates,
    config: AgentConfig,
    system: str | None = None,
    tools: Iterable[Tool] = (),
) -> ContextBudget:
    """The session's budget, following its current model's window; None-free: a threshold
    of 0 only stops compacting before a call (an overflow still compacts).

    A session's first budget (a new session, or the first prompt after `session/load`,
    `session/resume` or a restart) estimates what the next request really carries: the
    system prompt with the project instructions, the tool definitions (MCP tools included)
    and the history; at least the context the session's kept usage said (USAGE-006), until
    a model call's usage says (COMPACT-010).
    """
    window, _ = live.window()
    threshold = config.compaction_threshold if config.compaction_threshold > 0 else float("inf")
    budget = session.budget
    if budget is None:
        budget = ContextBudget(window, threshold, config.compaction_keep_turns)
        specs = [ToolSpec(t.name, t.description, t.parameters) for t in tools]
        budget.estimate(session.history, estimate_overhead(system, specs))
        budget.used = max(budget.used, live.used)
        session.budget = budget
    else:
        if window != budget.window:  # another model: what its predecessor's errors said goes
            budget.window, budget.named_window = window, None
        budget.threshold, budget.keep_turns = threshold, config.compaction_keep_turns
    return budget


class CompactCommand:
    """The `/compact` turn: the same surface as `Turn` (`run`, `result`)."""

    def __init__(self, request: TurnRequest) -> None:
        self.request = request
        self.id_prefix = request.id_prefix or request.turn_id
        self.summaries: list[SummaryCall] = []

    def result(self, stop_reason: StopReason) -> TurnResult:
        return TurnResult(stop_reason, 0, 0, (), (), tuple(self.summaries))

    async def run(self) -> TurnResult:
        request = self.request
        budget = request.budget
        assert budget is not None
        journal = request.journal or NoJournal()
        say = f"{self.id_prefix}-compact"
        try:
            record = await compact(
                request.history,
                budget=budget,
                provider=request.provider,
                model=request.model,
                sink=request.sink,
                journal=journal.compacted,
                compaction_id=f"{self.id_prefix}-c1",
                trigger="command",
                policy=request.policy,
                sleep=request.sleep,
                random=request.random,
                summaries=self.summaries,
            )
        except CompactionFailed as error:
            give_up = "not_retryable" if error.give_up is None else error.give_up.value
            data: dict[str, JsonValue] = {"reason": "compaction_failed", "giveUp": give_up}
            raise TurnFailed(f"Could not compact the conversation: {error.message}", data) from None
        if record is None:
            text = "Nothing to compact yet: the conversation is only its latest exchange."
        else:
            text = (
                "Compacted the conversation: the older messages are now a summary written by "
                f"the model; the {record.kept} most recent messages were kept as they were."
            )
        await request.sink.send_update(AgentText(text, say))
        return self.result(StopReason.END_TURN)
