"""The loop guard (sans-IO): the same tool call, with the same arguments, many times in a row.

Small models sometimes call one tool with identical arguments over and over (32 identical
`read_file` calls were seen). From the `refuse_after`-th identical call in a row the call is
not run: the model reads a refusal that says why and what to do instead. From the
`stop_after`-th the turn ends, with a clear reason for the user (spec/daily-use.md#loop-001).
A different call, or the same tool with other arguments, starts the count again.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from acp_bridge.providers import ToolCall, ToolResult
from acp_bridge.turn._effects import canonical_json

__all__ = ["LoopGuard", "LoopVerdict", "Screened", "screen"]


class LoopVerdict(enum.StrEnum):
    RUN = "run"
    REFUSE = "refuse"
    STOP = "stop"


@dataclass(slots=True)
class LoopGuard:
    refuse_after: int = 4
    stop_after: int = 8
    _last: tuple[str, str] | None = None
    _repeats: int = 0

    def _key(self, call: ToolCall) -> tuple[str, str]:
        try:
            return call.name, canonical_json(call.arguments)
        except ValueError:  # no canonical form: never equal to another call
            return call.name, f"#{id(call)}"

    def check(self, calls: Sequence[ToolCall]) -> dict[str, LoopVerdict]:
        """The verdict of each call of a round (by call id), counting in order."""
        verdicts: dict[str, LoopVerdict] = {}
        for call in calls:
            key = self._key(call)
            self._repeats = self._repeats + 1 if key == self._last else 1
            self._last = key
            if self._repeats >= self.stop_after:
                verdicts[call.call_id] = LoopVerdict.STOP
            elif self._repeats >= self.refuse_after:
                verdicts[call.call_id] = LoopVerdict.REFUSE
            else:
                verdicts[call.call_id] = LoopVerdict.RUN
        return verdicts

    @property
    def repeats(self) -> int:
        return self._repeats

    def refusal(self, call: ToolCall) -> ToolResult:
        return ToolResult(
            call.call_id,
            call.name,
            f"Not run: you called {call.name} with exactly these arguments {self._repeats} "
            "times in a row, and the result does not change. Use the result you already "
            "have, call a different tool or other arguments, or answer the user.",
            is_error=True,
        )

    def stop_message(self, name: str) -> str:
        return (
            f"Stopped: the model called {name} with the same arguments {self._repeats} times "
            "in a row, so this turn was ended. Rephrase the request or try another model."
        )


@dataclass(frozen=True, slots=True)
class Screened:
    """One round after the guard: the calls to run, the refusals, and whether to stop."""

    run: tuple[ToolCall, ...]
    refused: tuple[ToolResult, ...]
    stop: str | None  # the message ending the turn, when it must end


def screen(guard: LoopGuard, calls: Sequence[ToolCall]) -> Screened:
    verdicts = guard.check(calls)
    run = tuple(c for c in calls if verdicts[c.call_id] is LoopVerdict.RUN)
    refused = tuple(guard.refusal(c) for c in calls if verdicts[c.call_id] is not LoopVerdict.RUN)
    stopping = [c for c in calls if verdicts[c.call_id] is LoopVerdict.STOP]
    return Screened(run, refused, guard.stop_message(stopping[0].name) if stopping else None)
