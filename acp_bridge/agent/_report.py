"""The prompt response's `_meta.acpBridge`: what a turn cost and which effects ran.

`turnId` is the stable turn id (a turn sent again after a crash keeps it: SESS-021);
`idPrefix` prefixes this run's message and tool-call ids; `rerun` says that this run ran
again an interrupted or failed turn. `attempts` and `billedAttempts` are the model calls';
`compactions`, present when the turn made a summary call, lists each one's attempts
(COMPACT-014), so the response names every request sent to the provider.
"""

from __future__ import annotations

from typing import Any

from acp_bridge.agent._live import usage_fields as usage_meta_of
from acp_bridge.sessions import TurnStart
from acp_bridge.turn import AttemptUsage, SummaryCall, TurnResult

__all__ = ["turn_report"]


def turn_report(start: TurnStart, result: TurnResult) -> dict[str, Any]:
    report: dict[str, Any] = {
        "turnId": start.turn_id,
        "idPrefix": start.id_prefix,
        "rerun": start.retry_of is not None,
        "modelCalls": result.model_calls,
        "retries": result.retries,
        "billedAttempts": result.billed_attempts,
        "attempts": [
            {
                "modelCall": a.model_call,
                "attempt": a.attempt,
                "state": a.state.value,
                "reason": a.reason,
                "billed": a.billed,
                "usage": usage_meta_of(a.usage),
            }
            for a in result.attempts
        ],
        "effects": [
            {
                "toolCallId": run.tool_call_id,
                "tool": run.name,
                "status": run.status.value,
                "effectKey": run.effect_key,
                "ran": run.ran,
                "reused": run.reused,
                "asked": run.asked,
            }
            for run in result.tool_runs
        ],
    }
    if result.summaries:
        report["compactions"] = [_summary_call(s) for s in result.summaries]
    return report


def _summary_call(call: SummaryCall) -> dict[str, Any]:
    return {
        "compactionId": call.compaction_id,
        "trigger": call.trigger,
        "modelCall": call.model_call or None,  # None: `/compact`, before no model call
        "billedAttempts": call.billed_attempts,
        "attempts": [_summary_attempt(a) for a in call.attempts],
    }


def _summary_attempt(a: AttemptUsage) -> dict[str, Any]:
    return {
        "attempt": a.attempt,
        "state": a.state,
        "reason": a.reason,
        "billed": a.billed,
        "usage": usage_meta_of(a.usage),
    }
