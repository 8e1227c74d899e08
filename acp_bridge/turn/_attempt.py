"""Attempts and model calls: the per-attempt accumulators of a streamed model answer (sans-IO).

A prompt turn is one or more model calls (the tool loop); a model call is one or more attempts
(retries). Every stream event is fed to exactly one `Attempt` and tagged `(attempt, seq)`.
Accumulators (text, thoughts, tool-call fragments, finish, usage) belong to the attempt, never
to the turn (TURN-001); the rules of the reasoning blocks and the tool calls are
`_attempt_parts`. Only a completed attempt becomes an `AssistantTurn` (TURN-006); an
abandoned one is kept for the debug log and nothing else reads it.
"""

from __future__ import annotations

import enum
import itertools
import logging
from collections.abc import Iterator
from dataclasses import dataclass

from acp_bridge.providers import (
    AssistantTurn,
    Finish,
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
from acp_bridge.turn._attempt_parts import (
    ThoughtBlock,
    ToolCallFragments,
    feed_thought,
    thoughts_of,
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
        self._thoughts: list[ThoughtBlock] = []
        self._calls = ToolCallFragments()

    # -- feeding -------------------------------------------------------------------------

    def feed(self, event: StreamEvent, seq: int) -> TaggedEvent:
        """Accumulate one event and tag it (see `take`)."""
        self.take(event)
        return TaggedEvent(self.number, seq, event)

    def take(self, event: StreamEvent) -> None:
        """Accumulate one event. A `Finish` completes the attempt; the tool calls it leaves
        incomplete are an error unless the output limit cut them (`ToolCallFragments.finish`).

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
            feed_thought(self._thoughts, event)
        elif isinstance(event, ToolCallStart):
            self._close_thought()
            self._calls.start(event)
        elif isinstance(event, ToolCallDelta):
            self._calls.delta(event)
        elif isinstance(event, ToolCallComplete):
            self._close_thought()
            self._calls.complete(event)
        elif isinstance(event, Usage):
            self.usage = event  # the last Usage of an attempt wins (providers report totals)
        elif isinstance(event, Finish):
            self._calls.finish(event.reason, self.number)
            self._close_thought()
            self.finish = event
            self.state = AttemptState.COMPLETED

    def _close_thought(self) -> None:
        if self._thoughts:
            self._thoughts[-1].closed = True

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
        return thoughts_of(self._thoughts)

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The completed tool calls, in the order the model started them."""
        return self._calls.completed()

    def to_assistant_turn(self, *, with_tool_calls: bool = True) -> AssistantTurn:
        """The history record of this attempt; only a completed attempt has one (TURN-006)."""
        if self.state is not AttemptState.COMPLETED:
            raise RuntimeError(f"attempt {self.number} is {self.state.value}, not completed")
        calls = self.tool_calls if with_tool_calls else ()
        return AssistantTurn(text=self.text, thoughts=self.thoughts, tool_calls=calls)

    def describe(self) -> str:
        names = self._calls.names()
        return (
            f"attempt {self.number} of model call {self.model_call} ({self.state.value}"
            f"{', ' + self.abandon_reason if self.abandon_reason else ''}): {self.event_count} "
            f"events, {self._text.size} chars of text, {len(self._thoughts)} thoughts, "
            f"tool calls {names or 'none'}, shown={self.shown_chunks}"
        )


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
