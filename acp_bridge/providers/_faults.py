"""Fault injection for plugin authors: break any provider's stream on purpose.

`FaultInjectingProvider(inner, plan)` passes the inner stream through and, on the attempts
the plan names, cuts it at one point by raising the `ModelStreamError` a real cut gives
(STREAM_INTERRUPTED, phase stream, retryable) and closing the inner stream, which closes
the real connection. Points:

    after-events:N   after N events were delivered (StreamStart counts), unless the Nth
                     was the Finish
    in-tool-call     inside the first tool call: after its first argument fragment, or
                     before its completion when the provider sends no fragments
    before-finish    instead of delivering the Finish

`@attempts=K` breaks attempts 1..K of each model call (default 1: the first attempt only,
so the turn engine's retry succeeds). `parse_fault_plan("in-tool-call@attempts=2")`
reads the CLI spelling.
"""

from __future__ import annotations

import enum
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

from acp_bridge.providers._base import ModelProvider
from acp_bridge.providers._conversation import ModelRequest
from acp_bridge.providers._errors import FaultKind, ModelStreamError, Phase
from acp_bridge.providers._events import Finish, StreamEvent, ToolCallComplete, ToolCallDelta

__all__ = ["FaultInjectingProvider", "FaultPlan", "FaultPoint", "parse_fault_plan"]

_SPEC = re.compile(r"^(?P<point>[a-z-]+)(?::(?P<count>\d+))?(?:@attempts=(?P<attempts>\d+))?$")


class FaultPoint(enum.StrEnum):
    """Where the stream is cut."""

    AFTER_EVENTS = "after-events"
    IN_TOOL_CALL = "in-tool-call"
    BEFORE_FINISH = "before-finish"


@dataclass(frozen=True, slots=True)
class FaultPlan:
    """Cut at `point` (after `events` events for AFTER_EVENTS) on attempts 1..`attempts`."""

    point: FaultPoint
    events: int = 0
    attempts: int = 1

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("a fault plan breaks at least one attempt (attempts >= 1)")
        if self.point is FaultPoint.AFTER_EVENTS and self.events < 1:
            raise ValueError("after-events needs a count of at least 1, e.g. after-events:5")

    def applies_to(self, attempt: int) -> bool:
        return attempt <= self.attempts

    def __str__(self) -> str:
        count = f":{self.events}" if self.point is FaultPoint.AFTER_EVENTS else ""
        return f"{self.point.value}{count}@attempts={self.attempts}"


def parse_fault_plan(spec: str) -> FaultPlan:
    """Read `after-events:5`, `in-tool-call`, `before-finish`, each with optional `@attempts=K`.

    Raises ValueError with a message fit for a CLI usage error.
    """
    match = _SPEC.match(spec.strip())
    points = ", ".join(point.value for point in FaultPoint)
    if match is None:
        raise ValueError(f"bad fault spec {spec!r}: expected POINT[:N][@attempts=K] ({points})")
    try:
        point = FaultPoint(match["point"])
    except ValueError:
        raise ValueError(
            f"unknown fault point {match['point']!r}: expected one of {points}"
        ) from None
    count = match["count"]
    if (count is None) == (point is FaultPoint.AFTER_EVENTS):
        raise ValueError(
            "after-events needs a count (after-events:N)"
            if count is None
            else f"{point.value} takes no count"
        )
    attempts = int(match["attempts"]) if match["attempts"] else 1
    return FaultPlan(point, events=int(count) if count else 0, attempts=attempts)


class FaultInjectingProvider:
    """A `ModelProvider` that breaks `inner`'s stream where `plan` says."""

    def __init__(self, inner: ModelProvider, plan: FaultPlan) -> None:
        self._inner = inner
        self._plan = plan

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def model(self) -> str:
        return self._inner.model

    @property
    def inner(self) -> ModelProvider:
        return self._inner

    @property
    def plan(self) -> FaultPlan:
        return self._plan

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        stream = self._inner.stream(request)
        if not self._plan.applies_to(request.attempt):
            return stream
        return self._broken(stream, request.attempt)

    async def aclose(self) -> None:
        aclose = getattr(self._inner, "aclose", None)
        if aclose is not None:
            await aclose()

    async def _broken(
        self, stream: AsyncIterator[StreamEvent], attempt: int
    ) -> AsyncIterator[StreamEvent]:
        plan = self._plan
        delivered = 0
        tool_fragments = 0
        try:
            async for event in stream:
                if plan.point is FaultPoint.BEFORE_FINISH and isinstance(event, Finish):
                    raise self._cut(attempt, "before the finish")
                if (
                    plan.point is FaultPoint.IN_TOOL_CALL
                    and isinstance(event, ToolCallComplete)
                    and tool_fragments == 0
                ):
                    raise self._cut(attempt, "inside the first tool call")
                yield event
                delivered += 1
                if plan.point is FaultPoint.IN_TOOL_CALL and isinstance(event, ToolCallDelta):
                    tool_fragments += 1
                    raise self._cut(attempt, "inside the first tool call")
                if (
                    plan.point is FaultPoint.AFTER_EVENTS
                    and delivered >= plan.events
                    and not isinstance(event, Finish)
                ):
                    raise self._cut(attempt, f"after {delivered} events")
        finally:
            # Closing the inner stream closes the real connection, as a real cut would.
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()

    def _cut(self, attempt: int, where: str) -> ModelStreamError:
        return ModelStreamError(
            FaultKind.STREAM_INTERRUPTED,
            f"injected fault ({self._plan}): stream cut {where} on attempt {attempt}",
            phase=Phase.STREAM,
            retryable=True,
        )
