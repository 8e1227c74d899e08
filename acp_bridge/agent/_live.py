"""Live updates beyond the conversation, in wire form: usage, notices, plans, compactions.

`LiveUpdates` belongs to one session and keeps what these updates need across turns: the
model's context window and the cumulative cost. Notices go only to clients that advertised
`session.notices` (the schema's rule); for the others they are dropped here, since the same
facts are in the log and in the prompt response's `_meta`. Compaction updates likewise go
only to clients that advertised `session.compaction`; the others get a `notice` when the
compaction is over (if they take notices), never its summary chunks (COMPACT-004).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from acp_bridge._json import JsonObject
from acp_bridge.providers import DEFAULT_CONTEXT_WINDOW, Usage, known_context_window
from acp_bridge.turn import (
    CompactionChunk,
    CompactionShown,
    PlanShown,
    UsageReport,
    UserNotice,
)

if TYPE_CHECKING:
    from acp_bridge import protocol as acp
else:
    from acp_bridge.agent._lazy import acp

__all__ = [
    "LIVE_UPDATES",
    "LiveUpdates",
    "compaction_update",
    "plan_update",
    "usage_fields",
    "usage_meta",
    "usage_wire",
]

LIVE_UPDATES = (UsageReport, UserNotice, PlanShown, CompactionShown, CompactionChunk)
LiveUpdate = UsageReport | UserNotice | PlanShown | CompactionShown | CompactionChunk


def usage_fields(usage: Usage | None) -> JsonObject | None:
    if usage is None:
        return None
    fields: JsonObject = {
        "input": usage.input_tokens,
        "output": usage.output_tokens,
        "cachedInput": usage.cached_input_tokens,
        "reasoning": usage.reasoning_tokens,
    }
    if usage.cost is not None:
        fields["cost"] = usage.cost
    return fields


def usage_meta(report: UsageReport) -> JsonObject:
    """`_meta.acpBridge` of a usage_update: every attempt's billed usage (USAGE-002)."""
    billed = [a.usage for a in report.attempts if a.usage is not None]
    meta: JsonObject = {} if report.compaction_id is None else _compaction_meta(report)
    return {
        **meta,
        "modelCall": report.model_call,
        "kept": usage_fields(report.kept),
        "billed": usage_fields(
            Usage(
                input_tokens=sum(u.input_tokens for u in billed),
                output_tokens=sum(u.output_tokens for u in billed),
                cached_input_tokens=sum(u.cached_input_tokens for u in billed),
                reasoning_tokens=sum(u.reasoning_tokens for u in billed),
                cost=None
                if all(u.cost is None for u in billed)
                else sum(u.cost or 0.0 for u in billed),
            )
        ),
        "attempts": [
            {
                "attempt": a.attempt,
                "state": a.state,
                "billed": a.billed,
                "usage": usage_fields(a.usage),
            }
            for a in report.attempts
        ],
    }


def _compaction_meta(report: UsageReport) -> JsonObject:
    """COMPACT-011/012: the usage_update after a compaction names it; its `billed` is the
    summary call's, and `estimated` says `used` is an estimate until the next call's usage."""
    return {"compactionId": report.compaction_id, "estimated": report.context is not None}


@dataclass(slots=True)
class LiveUpdates:
    """One session's translator of live updates (see the module docstring).

    `context_window`: the configured window (the `context_window` setting), else the known
    table's, else `DEFAULT_CONTEXT_WINDOW`; `windows` (the agent's `ModelList.window`, which
    also knows the provider's metadata) replaces that when given; `used` is the context in
    use after the last model call; `cost` the session's cumulative provider-reported cost.
    """

    model: str
    notices: bool = False
    compaction: bool = False
    context_window: int | None = None
    used: int = 0
    cost: float | None = None
    pending: list[UserNotice] = field(default_factory=list)
    windows: Callable[[str], tuple[int, str]] | None = None
    last: tuple[int, int] | None = None
    """`used` and `size` of the last usage_update."""
    last_source: str = "default"
    kept: JsonObject | None = None
    """The snapshot the session store holds (USAGE-006)."""
    looked_up: tuple[tuple[object, ...], tuple[int, str]] | None = None
    """What `window()` last looked up from (the model, `windows`, `context_window`) and
    the window it found."""

    def announce(self, notice: UserNotice | None) -> None:
        """Queues a notice for the start of the next turn (what was loaded for it)."""
        if notice is not None:
            self.pending.append(notice)

    def take_pending(self) -> list[UserNotice]:
        pending, self.pending = self.pending, []
        return pending

    def window(self) -> tuple[int, str]:
        """The model's window and its `sizeSource`, looked up now (and kept for the turn's
        usage_updates, `_turn_window`)."""
        if self.windows is not None:
            window = self.windows(self.model)
        elif self.context_window is not None:
            window = self.context_window, "config"
        elif (known := known_context_window(self.model)) is not None:
            window = known, "known_models"
        else:
            window = DEFAULT_CONTEXT_WINDOW, "default"
        self.looked_up = (self.model, self.windows, self.context_window), window
        return window

    def wire(self, update: LiveUpdate) -> acp.SessionUpdate | JsonObject | None:
        """The session update for `update`, or None when this client must not get it; a
        usage_update (one per model call, in the turn's tail) comes as its wire object,
        built directly (`usage_wire`)."""
        if isinstance(update, CompactionShown | CompactionChunk):
            if self.compaction:
                return compaction_update(update)
            if isinstance(update, CompactionChunk) or update.status != "completed":
                return None
            update = UserNotice(
                "info",
                "Compacted the conversation to fit the model's context window",
                f"{update.summarised} earlier messages were summarised by the model; the "
                f"{update.kept} most recent were kept as they were.",
                kind="compaction",
            )
        if isinstance(update, UserNotice):
            if not self.notices:
                return None
            return acp.Notice(
                severity=update.severity,
                title=update.title,
                description=update.description,
                field_meta={"acpBridge": {"kind": update.kind}},
            )
        if isinstance(update, PlanShown):
            return plan_update(update)
        return self._usage(update)

    def snapshot(self) -> JsonObject | None:
        """The last usage_update's figures, kept with the session (USAGE-006); None before
        the first model call that reported usage."""
        if self.last is None:
            return None
        used, size = self.last
        snapshot: JsonObject = {"used": used, "size": size}
        if self.cost is not None:
            snapshot["cost"] = self.cost
        snapshot["sizeSource"] = self.last_source
        return snapshot

    def restore(self, snapshot: JsonObject) -> JsonObject | None:
        """Takes back a kept snapshot (the context in use, the cumulative cost) and answers
        the usage_update that replays it, built directly (`usage_wire`: a test holds it equal
        to the model's `to_wire`); None for a snapshot that is not one (counts outside the
        schema's uint64, a boolean)."""
        used, size = _uint64(snapshot.get("used")), _uint64(snapshot.get("size"))
        if used is None or size is None:
            return None
        self.used = used
        cost = snapshot.get("cost")
        number = isinstance(cost, int | float) and not isinstance(cost, bool)
        self.cost = float(cost) if number and math.isfinite(cost) else None  # type: ignore[arg-type]
        self.kept = snapshot
        meta: JsonObject = {"replayed": True, "sizeSource": snapshot.get("sizeSource")}
        return usage_wire(used, size, self.cost, meta)

    def usage(self, report: UsageReport) -> tuple[int, int, float | None, str]:
        """Takes in a model call's usage: the usage_update's `used`, `size`, `cost` and
        `sizeSource` (what `wire` builds its update of, and the sink its line)."""
        if report.kept is not None:
            # The context now in use: the kept attempt's prompt and its answer (USAGE-001).
            self.used = report.kept.input_tokens + report.kept.output_tokens
        elif report.context is not None:  # COMPACT-011: after a compaction, estimated
            self.used = report.context
        for attempt in report.attempts:
            if attempt.usage is not None and attempt.usage.cost is not None:
                self.cost = (self.cost or 0.0) + attempt.usage.cost
        size, source = self._turn_window()
        self.last, self.last_source = (self.used, size), source
        return self.used, size, self.cost, source

    def _turn_window(self) -> tuple[int, str]:
        """The window `window()` last looked up for this model: at the turn's start (the
        context budget's), not again in the turn's tail for each usage_update."""
        looked = self.looked_up
        if looked is not None and looked[0] == (self.model, self.windows, self.context_window):
            return looked[1]
        return self.window()

    def _usage(self, report: UsageReport) -> JsonObject:
        used, size, cost, source = self.usage(report)
        return usage_wire(used, size, cost, {**usage_meta(report), "sizeSource": source})


def _uint64(value: object) -> int | None:
    """`value` when it is a count the schema's uint64 holds."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 64:
        return value
    return None


def usage_wire(used: int, size: int, cost: float | None, meta: JsonObject) -> JsonObject:
    """`to_wire(UsageUpdate(used=, size=, cost=Cost(amount=cost, currency="USD"),
    field_meta={"acpBridge": meta}))`, built directly (a test holds them equal)."""
    if used < 0 or size < 0:
        raise ValueError(f"a usage_update counts no negative tokens (used {used}, size {size})")
    wire: JsonObject = {
        "_meta": {"acpBridge": meta},
        "sessionUpdate": "usage_update",
        "used": used,
        "size": size,
    }
    if cost is not None:
        wire["cost"] = {"amount": float(cost), "currency": "USD"}
    return wire


def compaction_update(
    update: CompactionShown | CompactionChunk,
) -> acp.CompactionUpdate | acp.CompactionSummaryChunk:
    """The `compaction_update` or `compaction_summary_chunk` of a compaction (COMPACT-004)."""
    if isinstance(update, CompactionChunk):
        if update.reset is None:
            return acp.CompactionSummaryChunk(
                compaction_id=update.compaction_id, content=acp.TextContent(text=update.text)
            )
        return acp.CompactionSummaryChunk(
            compaction_id=update.compaction_id,
            content=acp.TextContent(text=update.text),
            field_meta=update.reset.to_meta(),
        )
    fields: dict[str, Any] = {"compaction_id": update.compaction_id, "status": update.status}
    if update.summary is not None:
        fields["summary"] = [acp.TextContent(text=update.summary)] if update.summary else []
    if update.error is not None:
        fields["error"] = update.error
    if update.trigger:
        meta: dict[str, Any] = {"trigger": update.trigger}
        if update.summarised:
            meta["summarised"] = update.summarised
        if update.kept:
            meta["kept"] = update.kept
        fields["field_meta"] = {"acpBridge": meta}
    return acp.CompactionUpdate(**fields)


def plan_update(plan: PlanShown) -> acp.Plan:
    return acp.Plan(
        entries=[
            acp.PlanEntry(
                content=e.content,
                priority=acp.PlanEntryPriority(e.priority),
                status=acp.PlanEntryStatus(e.status),
            )
            for e in plan.entries
        ]
    )
