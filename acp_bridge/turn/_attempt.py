"""Attempts and model calls: the per-attempt accumulators of a streamed model answer (sans-IO).

A prompt turn is one or more model calls (the tool loop); a model call is one or more attempts
(retries). Every stream event is fed to exactly one `Attempt` and tagged `(attempt, seq)`.
Accumulators (text, thoughts, tool-call fragments, finish, usage) belong to the attempt, never
to the turn (TURN-001). Only a completed attempt becomes an `AssistantTurn` (TURN-006); an
abandoned one is kept for the debug log and nothing else reads it.
"""

from __future__ import annotations

import enum
import itertools
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

from acp_bridge.providers import (
    AssistantTurn,
    FaultKind,
    Finish,
    FinishReason,
    ModelStreamError,
    StreamEvent,
    TextDelta,
    TextParts,
    Thought,
    ThoughtDelta,
    ToolCall,
    ToolCallComplete,
    ToolCallDelta,
    ToolCallStart,
    Usage,
)

__all__ = ["Attempt", "AttemptState", "ModelCall", "TaggedEvent"]

logger = logging.getLogger(__name__)


class AttemptState(enum.StrEnum):
    OPEN = "open"
    COMPLETED = "completed"
    ABANDONED = "abandoned"


@dataclass(frozen=True, slots=True)
class TaggedEvent:
    """A stream event with its identity: the attempt it belongs to and a turn-wide sequence."""

    attempt: int
    seq: int
    event: StreamEvent


@dataclass(slots=True)
class _ThoughtBlock:
    fragments: TextParts = field(default_factory=TextParts)
    signature: str | None = None
    redacted_data: str | None = None
    closed: bool = False


@dataclass(slots=True)
class _CallFragments:
    call_id: str
    name: str
    index: int
    fragments: TextParts = field(default_factory=TextParts)
    complete: ToolCallComplete | None = None


class Attempt:
    """One streamed answer to one model request, accumulated in O(n).

    `shown_chunks` records whether any `agent_message_chunk` / `agent_thought_chunk` was sent
    for this attempt (including a chunk that carried a reset marker); the reset rule reads it
    when the attempt is abandoned (RESET-001, RESET-008).
    """

    __slots__ = (
        "_calls",
        "_text",
        "_thoughts",
        "abandon_reason",
        "event_count",
        "finish",
        "model_call",
        "number",
        "received_events",
        "shown_chunks",
        "state",
        "usage",
    )

    def __init__(self, number: int, *, model_call: int = 1) -> None:
        self.number = number
        self.model_call = model_call
        self.state = AttemptState.OPEN
        self.finish: Finish | None = None
        self.usage: Usage | None = None
        self.shown_chunks = False
        self.received_events = False
        self.event_count = 0
        self.abandon_reason: str | None = None
        self._text = TextParts()  # few objects for a million deltas (MEM-002)
        self._thoughts: list[_ThoughtBlock] = []
        self._calls: dict[str, _CallFragments] = {}

    # -- feeding -------------------------------------------------------------------------

    def feed(self, event: StreamEvent, seq: int) -> TaggedEvent:
        """Accumulate one event and tag it (see `take`)."""
        self.take(event)
        return TaggedEvent(self.number, seq, event)

    def take(self, event: StreamEvent) -> None:
        """Accumulate one event. A `Finish` completes the attempt (see `_complete`).

        Raises `ModelStreamError(MALFORMED_TOOL_CALL)` when the tool calls are inconsistent;
        the attempt then stays open and the caller abandons it.
        """
        if self.state is not AttemptState.OPEN:
            raise RuntimeError(f"attempt {self.number} is {self.state.value}; it takes no events")
        self.received_events = True
        self.event_count += 1
        if type(event) is TextDelta:  # the per-event hot path first, without calls
            if self._thoughts:
                self._thoughts[-1].closed = True
            if event.text:
                self._text.append(event.text)
        elif isinstance(event, TextDelta):
            self._close_thought()
            if event.text:
                self._text.append(event.text)
        elif isinstance(event, ThoughtDelta):
            self._feed_thought(event)
        elif isinstance(event, ToolCallStart):
            self._close_thought()
            if event.call_id not in self._calls:
                self._calls[event.call_id] = _CallFragments(event.call_id, event.name, event.index)
        elif isinstance(event, ToolCallDelta):
            self._fragments_for(event.call_id, event.index).fragments.append(event.fragment)
        elif isinstance(event, ToolCallComplete):
            self._feed_complete(event)
        elif isinstance(event, Usage):
            self.usage = event  # the last Usage of an attempt wins (providers report totals)
        elif isinstance(event, Finish):
            self._complete(event)

    def _feed_thought(self, event: ThoughtDelta) -> None:
        if event.redacted_data is not None:
            self._close_thought()
            self._thoughts.append(
                _ThoughtBlock(
                    _parts(event.text),
                    event.signature,
                    event.redacted_data,
                    closed=True,
                )
            )
            return
        if not self._thoughts or self._thoughts[-1].closed:
            self._thoughts.append(_ThoughtBlock())
        block = self._thoughts[-1]
        if event.text:
            block.fragments.append(event.text)
        if event.signature is not None:
            # A signature ends its reasoning block (Anthropic signature_delta, Gemini
            # thoughtSignature); it is kept verbatim for the next request.
            block.signature = event.signature
            block.closed = True

    def _close_thought(self) -> None:
        if self._thoughts:
            self._thoughts[-1].closed = True

    def _fragments_for(self, call_id: str, index: int) -> _CallFragments:
        found = self._calls.get(call_id)
        if found is None:
            found = _CallFragments(call_id, "", index)
            self._calls[call_id] = found
        return found

    def _feed_complete(self, event: ToolCallComplete) -> None:
        self._close_thought()
        entry = self._calls.get(event.call_id)
        if entry is None:
            entry = _CallFragments(event.call_id, event.name, -1)
            self._calls[event.call_id] = entry
        if entry.complete is not None:
            raise ModelStreamError(
                FaultKind.MALFORMED_TOOL_CALL,
                f"tool call {event.call_id!r} completed twice in one attempt",
            )
        entry.name = event.name
        entry.complete = event

    def _complete(self, finish: Finish) -> None:
        incomplete = [c.call_id for c in self._calls.values() if c.complete is None]
        if incomplete and finish.reason is not FinishReason.LENGTH:
            raise ModelStreamError(
                FaultKind.MALFORMED_TOOL_CALL,
                f"the answer finished with unfinished tool calls: {', '.join(incomplete)}",
            )
        for call_id in incomplete:  # cut off by the output limit: never executable
            logger.info("attempt %d: dropping tool call %s cut by max tokens", self.number, call_id)
            del self._calls[call_id]
        self._close_thought()
        self.finish = finish
        self.state = AttemptState.COMPLETED

    # -- state ---------------------------------------------------------------------------

    def abandon(self, reason: str) -> None:
        """Close the attempt for good; only the debug log reads it afterwards (TURN-001)."""
        if self.state is AttemptState.ABANDONED:
            return
        self.state = AttemptState.ABANDONED
        self.abandon_reason = reason
        logger.info("abandoned %s", self.describe())

    # -- views ---------------------------------------------------------------------------

    @property
    def text(self) -> str:
        return self._text.text()

    @property
    def thoughts(self) -> tuple[Thought, ...]:
        return tuple(
            Thought(b.fragments.text(), b.signature, b.redacted_data) for b in self._thoughts
        )

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
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

    def to_assistant_turn(self, *, with_tool_calls: bool = True) -> AssistantTurn:
        """The history record of this attempt; only a completed attempt has one (TURN-006)."""
        if self.state is not AttemptState.COMPLETED:
            raise RuntimeError(f"attempt {self.number} is {self.state.value}, not completed")
        calls = self.tool_calls if with_tool_calls else ()
        return AssistantTurn(text=self.text, thoughts=self.thoughts, tool_calls=calls)

    def describe(self) -> str:
        names = [c.name or c.call_id for c in self._calls.values()]
        return (
            f"attempt {self.number} of model call {self.model_call} ({self.state.value}"
            f"{', ' + self.abandon_reason if self.abandon_reason else ''}): {self.event_count} "
            f"events, {self._text.size} chars of text, {len(self._thoughts)} thoughts, "
            f"tool calls {names or 'none'}, shown={self.shown_chunks}"
        )


def _parts(text: str) -> TextParts:
    parts = TextParts()
    if text:
        parts.append(text)
    return parts


class ModelCall:
    """The attempts of one model call, numbered from 1; at most one is open at a time."""

    def __init__(self, number: int, *, seq: Iterator[int] | None = None) -> None:
        self.number = number
        self.attempts: list[Attempt] = []
        self._seq = seq if seq is not None else itertools.count(1)

    @property
    def current(self) -> Attempt:
        if not self.attempts:
            raise RuntimeError("no attempt started")
        return self.attempts[-1]

    def start_attempt(self) -> Attempt:
        if self.attempts and self.current.state is AttemptState.OPEN:
            raise RuntimeError("the previous attempt is still open; abandon it first")
        attempt = Attempt(len(self.attempts) + 1, model_call=self.number)
        self.attempts.append(attempt)
        return attempt

    def feed(self, event: StreamEvent) -> TaggedEvent:
        attempt = self.current
        seq = next(self._seq)
        self.accept(event, seq)
        return TaggedEvent(attempt.number, seq, event)

    def accept(self, event: StreamEvent, seq: int | None = None) -> None:
        """`feed` without building the tag: the turn's per-event hot path."""
        if seq is None:
            seq = next(self._seq)
        attempt = self.attempts[-1] if self.attempts else self.current
        attempt.take(event)
        if logger.isEnabledFor(logging.DEBUG):  # per-event hot path: no formatting otherwise
            logger.debug(
                "model call %d attempt %d seq %d: %s",
                self.number,
                attempt.number,
                seq,
                type(event).__name__,
            )

    @property
    def completed(self) -> Attempt | None:
        for attempt in self.attempts:
            if attempt.state is AttemptState.COMPLETED:
                return attempt
        return None
