"""The turn engine: attempts, the reset flag, held tool calls, permissions, effects, history.

Layer contract: a prompt turn is one or more model calls, each one or more attempts. Only a
completed attempt is shown as final, enters history, or has its tool calls shown, asked about
and run; a retry that follows shown output opens with a reset chunk (spec/reset-extension.md).
Side effects are keyed by meaning and recorded in the effect ledger (spec/effect-keys.md).
The engine speaks `TurnUpdate`s to a `TurnSink`; it knows nothing of JSON-RPC.
"""

from typing import TYPE_CHECKING

from acp_bridge._exports import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from acp_bridge.turn._attempt import Attempt, AttemptState, ModelCall, TaggedEvent
    from acp_bridge.turn._budget import ContextBudget
    from acp_bridge.turn._compaction import (
        SUMMARY_HEADER,
        CompactionPlan,
        CompactionRecord,
        compacted_history,
        estimate_overhead,
        estimate_tokens,
        plan_compaction,
    )
    from acp_bridge.turn._compactor import compact
    from acp_bridge.turn._effects import EFFECT_KEY_VERSION, EffectKey, EffectSteps, canonical_json
    from acp_bridge.turn._history import MISSING_RESULT, NO_REPLY, DroppedResult, repair_history
    from acp_bridge.turn._ledger import EffectLedger, EffectRecord, EffectState, LedgerUnavailable
    from acp_bridge.turn._permission import (
        GateDecision,
        PermissionGate,
        PermissionMemory,
        PermissionVerdict,
        SessionMode,
        permission_options,
    )
    from acp_bridge.turn._request import (
        AttemptReport,
        NoJournal,
        StopReason,
        TurnJournal,
        TurnRequest,
        TurnResult,
        turn_id_for,
    )
    from acp_bridge.turn._reset import ChunkPresenter, message_id, thought_id
    from acp_bridge.turn._retry import GiveUp, RetryDecision, RetryPolicy, TurnFailed
    from acp_bridge.turn._runner import Turn, run_turn
    from acp_bridge.turn._store_file import StoreFileProblem, file_problem, newer_schema
    from acp_bridge.turn._summary import SUMMARY_SYSTEM, CompactionFailed, SummaryCall
    from acp_bridge.turn._tool_tracker import ToolRun
    from acp_bridge.turn._updates import (
        AgentText,
        AgentThought,
        AttemptUsage,
        CompactionChunk,
        CompactionShown,
        PermissionDecision,
        PermissionOption,
        PermissionOptionKind,
        PlanEntry,
        PlanShown,
        ResetMarker,
        ToolCallChanged,
        ToolCallShown,
        ToolStatus,
        TurnSink,
        TurnUpdate,
        UsageReport,
        UserNotice,
    )

__all__ = [
    "EFFECT_KEY_VERSION",
    "MISSING_RESULT",
    "NO_REPLY",
    "SUMMARY_HEADER",
    "SUMMARY_SYSTEM",
    "AgentText",
    "AgentThought",
    "Attempt",
    "AttemptReport",
    "AttemptState",
    "AttemptUsage",
    "ChunkPresenter",
    "CompactionChunk",
    "CompactionFailed",
    "CompactionPlan",
    "CompactionRecord",
    "CompactionShown",
    "ContextBudget",
    "DroppedResult",
    "EffectKey",
    "EffectLedger",
    "EffectRecord",
    "EffectState",
    "EffectSteps",
    "GateDecision",
    "GiveUp",
    "LedgerUnavailable",
    "ModelCall",
    "NoJournal",
    "PermissionDecision",
    "PermissionGate",
    "PermissionMemory",
    "PermissionOption",
    "PermissionOptionKind",
    "PermissionVerdict",
    "PlanEntry",
    "PlanShown",
    "ResetMarker",
    "RetryDecision",
    "RetryPolicy",
    "SessionMode",
    "StopReason",
    "StoreFileProblem",
    "SummaryCall",
    "TaggedEvent",
    "ToolCallChanged",
    "ToolCallShown",
    "ToolRun",
    "ToolStatus",
    "Turn",
    "TurnFailed",
    "TurnJournal",
    "TurnRequest",
    "TurnResult",
    "TurnSink",
    "TurnUpdate",
    "UsageReport",
    "UserNotice",
    "canonical_json",
    "compact",
    "compacted_history",
    "estimate_overhead",
    "estimate_tokens",
    "file_problem",
    "message_id",
    "newer_schema",
    "permission_options",
    "plan_compaction",
    "repair_history",
    "run_turn",
    "thought_id",
    "turn_id_for",
]

__getattr__, __dir__ = _lazy_exports(__name__)
