"""A session's context budget (sans-IO): the window, what a request carries, when to compact.

The agent layer keeps one `ContextBudget` per session across its turns; the turn engine asks
it before every model call whether compaction is due (COMPACT-002, COMPACT-010) and tells it
each model call's usage and each compaction's outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from acp_bridge.providers import Message, Usage
from acp_bridge.turn._compaction import estimate_tokens
from acp_bridge.turn._tally import TokenTally

__all__ = ["ContextBudget"]


@dataclass(slots=True)
class ContextBudget:
    """One session's context budget (the agent layer keeps it across turns).

    `window`: the model's context window in tokens; compaction is due once the context the
    next request will carry (`in_use`) reaches `threshold` of it. `used` is the context in
    use after the last model call (from its usage, else estimated) and covers the first
    `counted` messages of the history; messages added since (a prompt, tool results) are
    estimated on top, so a tool round that grew the context mid-turn counts (COMPACT-010).
    `keep_turns`: how many recent prompt turns a compaction keeps whole. A `threshold` of
    infinity never makes it due (an overflow still compacts).
    """

    window: int
    threshold: float = 0.8
    keep_turns: int = 2
    used: int = 0
    named_window: int | None = None  # what the provider's overflow error said, when smaller
    known_overhead: int = 0  # `overhead` as last worked out
    counted: int = 0  # how many messages of the history `used` covers
    tally: TokenTally = field(default_factory=TokenTally, compare=False, repr=False)
    observed: tuple[int, tuple[Message, ...]] | None = field(
        default=None, compare=False, repr=False
    )
    """The last model call's input tokens and the messages it sent, until `overhead` is
    asked for: working it out (the tally) is not done in the turn's tail (LIVE4-004)."""

    @property
    def overhead(self) -> int:
        """What a request takes besides the history: the system prompt, the tools."""
        observed = self.observed
        if observed is not None:
            self.observed = None
            tokens, history = observed
            self.known_overhead = max(tokens - self.tally.estimate(history), 0)
        return self.known_overhead

    @overhead.setter
    def overhead(self, value: int) -> None:
        self.observed, self.known_overhead = None, value

    def kept_budget(self) -> int:
        """The most the messages a compaction keeps may take: half of what the threshold
        leaves once the request's overhead is counted."""
        room = self.limit * min(self.threshold, 0.8) - self.overhead
        return max(int(room / 2), 0)

    @property
    def limit(self) -> int:
        """The window compaction works to: the smaller of the known and the named one."""
        named = self.named_window
        return self.window if named is None else min(self.window, named)

    def in_use(self, history: Sequence[Message]) -> int:
        """What the next request carries: `used`, plus the messages added since."""
        if self.counted >= len(history):
            return self.used
        return self.used + estimate_tokens(history[self.counted :])

    def due(self, history: Sequence[Message] = ()) -> bool:
        return self.in_use(history) >= self.threshold * self.limit

    def estimate(self, history: Sequence[Message], overhead: int | None = None) -> None:
        """Until a model call's usage says: the overhead and the history, estimated."""
        if overhead is not None:
            self.overhead = overhead
        self.used, self.counted = self.overhead + estimate_tokens(history), len(history)

    def observe(self, usage: Usage | None, history: Sequence[Message] = ()) -> None:
        """After a model call: its kept attempt's usage is the context now in use, and what
        its input took beyond `history` (the messages it sent) is the overhead. The reply,
        which enters the history next, is its output tokens."""
        if usage is not None and (usage.input_tokens or usage.output_tokens):
            self.used = usage.input_tokens + usage.output_tokens
            self.counted = len(history) + 1
            if history:  # the messages as they were sent: `history` grows on
                self.observed = usage.input_tokens, tuple(history)
