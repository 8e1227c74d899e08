"""What a prompt turn is given and what it gives back: `TurnRequest`, `TurnResult`, the
`TurnJournal` hook the session store implements, and the stable turn id."""

from __future__ import annotations

import enum
import random as _random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import anyio
from anyio.abc import TaskGroup

from acp_bridge.providers import (
    AssistantTurn,
    Message,
    ModelProvider,
    ToolResults,
    Usage,
    UserTurn,
)
from acp_bridge.tools._base import Tool, ToolContext
from acp_bridge.turn._attempt import AttemptState
from acp_bridge.turn._budget import ContextBudget
from acp_bridge.turn._compaction import CompactionRecord
from acp_bridge.turn._ledger import EffectLedger
from acp_bridge.turn._permission import PermissionMemory, SessionMode
from acp_bridge.turn._retry import RetryPolicy
from acp_bridge.turn._tool_tracker import ToolRun
from acp_bridge.turn._updates import TurnSink

if TYPE_CHECKING:  # the summary call's module is the compactor's, imported when it runs
    from acp_bridge.turn._summary import SummaryCall

__all__ = [
    "AttemptReport",
    "NoJournal",
    "StopReason",
    "TurnJournal",
    "TurnRequest",
    "TurnResult",
    "turn_id_for",
]


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
    committed when it returns (surviving the process being killed; on disk too for
    `tool_call_starting` with an effect key: SESS-001); an exception propagates and ends the
    turn before the next step,
    so a tool never runs unless its start was journaled. The prompt is the caller's to record
    before `Turn.run` (the engine appends it to history first thing). The default journal
    records nothing.

    - `model_call_kept(model_call, attempt, message)`: a completed attempt's `AssistantTurn`
      entered history, before any of its tool calls is shown (abandoned attempts never do).
      One without tool calls is the turn's last: a journal may commit it with the turn's end
      instead (the session store does: STORE4-001).
    - `tool_results_kept(message)`: a round's `ToolResults` entered history (also on the way
      out of a cancelled or failed turn, paired with every call of the round).
    - `tool_call_starting(tool_call_id, effect_key)`: a shown call is about to run: before its
      effect key (None for a tool without side effects) is recorded `started` in the ledger
      and before its `in_progress` update.
    - `recorded_effect(effect_key)`: whether an earlier run of this turn journaled the key as
      about to run; a key it did and the ledger has no record of is outcome unknown
      (EFFECT-LOST-001).
    - `compacted(record)`: a compaction's summary is complete; the history is replaced after
      this returns (COMPACT-005).
    """

    def model_call_kept(self, model_call: int, attempt: int, message: AssistantTurn) -> None: ...

    def tool_results_kept(self, message: ToolResults) -> None: ...

    def tool_call_starting(self, tool_call_id: str, effect_key: str | None) -> None: ...

    def recorded_effect(self, effect_key: str) -> bool: ...

    def compacted(self, record: CompactionRecord) -> None: ...


class NoJournal:
    """The default journal: records nothing."""

    def model_call_kept(self, model_call: int, attempt: int, message: AssistantTurn) -> None:
        pass

    def tool_results_kept(self, message: ToolResults) -> None:
        pass

    def tool_call_starting(self, tool_call_id: str, effect_key: str | None) -> None:
        pass

    def recorded_effect(self, effect_key: str) -> bool:
        return False

    def compacted(self, record: CompactionRecord) -> None:
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
    model call (`ModelRequest.reasoning`). `budget` (the session's, kept across turns) turns
    compaction on: before a model call once the context in use reaches its threshold, and when
    the provider answers that the request exceeds the window (COMPACT-002).
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
    budget: ContextBudget | None = None
    background: TaskGroup | None = None
    """Where each model call's progress watch runs, not joined at the call's end (TAIL2-002);
    None: beside the call, in its own task group."""


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
    summaries: tuple[SummaryCall, ...] = ()  # the compactions' summary calls (COMPACT-014)

    @property
    def billed_attempts(self) -> int:
        """The billed attempts of the turn's model calls (the summary calls' are apart)."""
        return sum(1 for a in self.attempts if a.billed)

    @property
    def usage(self) -> Usage:
        """Usage summed over every attempt, abandoned ones and summary calls' included (they
        cost too)."""
        reports = [a.usage for a in self.attempts if a.usage is not None]
        reports += [a.usage for s in self.summaries for a in s.attempts if a.usage is not None]
        return Usage(
            input_tokens=sum(u.input_tokens for u in reports),
            output_tokens=sum(u.output_tokens for u in reports),
            cached_input_tokens=sum(u.cached_input_tokens for u in reports),
            reasoning_tokens=sum(u.reasoning_tokens for u in reports),
        )
