"""Usage per model call (sans-IO): what the kept attempt holds, and what every attempt cost.

The usage of an abandoned attempt was billed but is not context: it is reported beside the
kept attempt's, never added to it (spec/usage-and-compaction.md#usage-002).
"""

from __future__ import annotations

from acp_bridge.turn._attempt import AttemptState, ModelCall
from acp_bridge.turn._updates import AttemptUsage, UsageReport

__all__ = ["usage_report"]


def usage_report(call: ModelCall, *, ends_turn: bool = False) -> UsageReport | None:
    """The `UsageReport` of a finished (completed or failed) model call; None when no
    attempt of it reported any usage and none was billed."""
    attempts = tuple(
        AttemptUsage(a.number, a.state.value, a.usage, a.received_events) for a in call.attempts
    )
    if not any(a.usage is not None for a in attempts):
        return None
    kept = next(
        (a.usage for a in call.attempts if a.state is AttemptState.COMPLETED),
        None,
    )
    return UsageReport(call.number, kept, attempts, ends_turn=ends_turn)
