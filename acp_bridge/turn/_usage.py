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
    # One pass, no generator per question: this runs in every turn's tail (issue 15.2).
    attempts = call.attempts
    kept = None
    found = reported = False
    for attempt in attempts:
        if attempt.usage is not None:
            reported = True
        if not found and attempt.state is AttemptState.COMPLETED:
            kept, found = attempt.usage, True
    if not reported:
        return None
    return UsageReport(
        call.number,
        kept,
        tuple(
            AttemptUsage(a.number, a.state._value_, a.usage, a.received_events) for a in attempts
        ),
        ends_turn=ends_turn,
    )
