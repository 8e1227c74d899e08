"""The token estimate of a growing history at the cost of its new messages (issue 15.2).

After every model call the context budget re-estimates what the history it sent takes
(`ContextBudget.observe`: the request's overhead is its usage minus that estimate). Summing
every message again made that O(history) per call, in the turn's tail; `TokenTally` keeps
the character count of the history it counted last, and when that history is a prefix of
the next one (a session's history only grows between compactions) counts only the new
messages. The prefix is compared at C speed (equal messages count alike); a rewritten
history (compaction, repair) is counted afresh.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from acp_bridge.providers import AssistantTurn, Message, UserTurn

__all__ = ["CHARS_PER_TOKEN", "TokenTally", "message_chars", "tokens_of"]

CHARS_PER_TOKEN = 4  # a rough, provider-neutral estimate; usage figures correct it
_IMAGE_CHARS = 4_000  # an image counts about 1 000 tokens


def message_chars(message: Message) -> int:
    """What one message counts in the estimate, in characters."""
    if isinstance(message, UserTurn):
        return sum(len(p) for p in message.parts) + _IMAGE_CHARS * len(message.images)
    if isinstance(message, AssistantTurn):
        total = len(message.text) + sum(len(t.text) for t in message.thoughts)
        return total + sum(len(c.name) + len(json.dumps(c.arguments)) for c in message.tool_calls)
    return sum(len(r.output) + len(r.name) for r in message.results)


def tokens_of(chars: int, messages: int) -> int:
    """The estimate of `messages` messages of `chars` characters in all."""
    return chars // CHARS_PER_TOKEN + 4 * messages


class TokenTally:
    """`estimate_tokens` of the histories it is given, counting each new message once.

    `counted` is how many messages were counted (what the tests check)."""

    __slots__ = ("_chars", "_last", "counted")

    def __init__(self) -> None:
        self._last: tuple[Message, ...] = ()
        self._chars = 0
        self.counted = 0

    def estimate(self, messages: Sequence[Message]) -> int:
        current = tuple(messages)
        last = self._last
        start, chars = 0, 0
        if last and len(last) <= len(current) and current[: len(last)] == last:
            start, chars = len(last), self._chars
        for message in current[start:]:
            chars += message_chars(message)
        self.counted += len(current) - start
        self._last, self._chars = current, chars
        return tokens_of(chars, len(current))
