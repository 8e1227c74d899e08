"""An attempt's reasoning blocks and tool calls in flight, as they accumulate (sans-IO).

Two of an `Attempt`'s accumulators, each with its own rules: `ThoughtBlock`s (a block closes
at its signature, at any other event, or stays whole when redacted) and `ToolCallFragments`
(argument fragments per call id, a call completed at most once, and at the finish the calls
left incomplete: an error, unless the output limit cut them, when they are dropped). The
attempt's text and its per-event hot path stay in `_attempt`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from acp_bridge.providers import (
    FaultKind,
    FinishReason,
    ModelStreamError,
    TextParts,
    Thought,
    ThoughtDelta,
    ToolCall,
    ToolCallComplete,
    ToolCallDelta,
    ToolCallStart,
)

__all__ = ["ThoughtBlock", "ToolCallFragments", "feed_thought", "thoughts_of"]

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class ThoughtBlock:
    fragments: TextParts = field(default_factory=TextParts)
    signature: str | None = None
    redacted_data: str | None = None
    closed: bool = False


def feed_thought(blocks: list[ThoughtBlock], event: ThoughtDelta) -> None:
    """One reasoning delta into `blocks`: a redacted one is a closed block of its own, a
    signature closes the block it ends, anything else extends the open block."""
    if event.redacted_data is not None:
        if blocks:
            blocks[-1].closed = True
        text = TextParts()
        if event.text:
            text.append(event.text)
        blocks.append(ThoughtBlock(text, event.signature, event.redacted_data, closed=True))
        return
    if not blocks or blocks[-1].closed:
        blocks.append(ThoughtBlock())
    block = blocks[-1]
    if event.text:
        block.fragments.append(event.text)
    if event.signature is not None:
        # A signature ends its reasoning block (Anthropic signature_delta, Gemini
        # thoughtSignature); it is kept verbatim for the next request.
        block.signature = event.signature
        block.closed = True


def thoughts_of(blocks: list[ThoughtBlock]) -> tuple[Thought, ...]:
    return tuple(Thought(b.fragments.text(), b.signature, b.redacted_data) for b in blocks)


@dataclass(slots=True)
class _Fragments:
    call_id: str
    name: str
    index: int
    fragments: TextParts = field(default_factory=TextParts)
    complete: ToolCallComplete | None = None


class ToolCallFragments:
    """The tool calls of one attempt, in the order the model started them."""

    __slots__ = ("_calls",)

    def __init__(self) -> None:
        self._calls: dict[str, _Fragments] = {}

    def __bool__(self) -> bool:
        return bool(self._calls)

    def start(self, event: ToolCallStart) -> None:
        if event.call_id not in self._calls:
            self._calls[event.call_id] = _Fragments(event.call_id, event.name, event.index)

    def delta(self, event: ToolCallDelta) -> None:
        found = self._calls.get(event.call_id)
        if found is None:
            found = self._calls[event.call_id] = _Fragments(event.call_id, "", event.index)
        found.fragments.append(event.fragment)

    def complete(self, event: ToolCallComplete) -> None:
        """Raises `ModelStreamError(MALFORMED_TOOL_CALL)` for a call completed twice."""
        entry = self._calls.get(event.call_id)
        if entry is None:
            entry = self._calls[event.call_id] = _Fragments(event.call_id, event.name, -1)
        if entry.complete is not None:
            raise ModelStreamError(
                FaultKind.MALFORMED_TOOL_CALL,
                f"tool call {event.call_id!r} completed twice in one attempt",
            )
        entry.name = event.name
        entry.complete = event

    def finish(self, reason: FinishReason, attempt: int) -> None:
        """At the attempt's finish: an incomplete call is an error (MALFORMED_TOOL_CALL),
        unless the output limit cut it, which is never executable and is dropped."""
        incomplete = [c.call_id for c in self._calls.values() if c.complete is None]
        if incomplete and reason is not FinishReason.LENGTH:
            raise ModelStreamError(
                FaultKind.MALFORMED_TOOL_CALL,
                f"the answer finished with unfinished tool calls: {', '.join(incomplete)}",
            )
        for call_id in incomplete:
            logger.info("attempt %d: dropping tool call %s cut by max tokens", attempt, call_id)
            del self._calls[call_id]

    def completed(self) -> tuple[ToolCall, ...]:
        """The completed tool calls, in the order the model started them."""
        return tuple(
            ToolCall(
                c.complete.call_id,
                c.complete.name,
                c.complete.arguments,
                dict(c.complete.provider_meta),
            )
            for c in self._calls.values()
            if c.complete is not None
        )

    def names(self) -> list[str]:
        return [c.name or c.call_id for c in self._calls.values()]
