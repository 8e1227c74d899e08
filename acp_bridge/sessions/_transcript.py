"""What a `session/load` replays, in order, from the stored turns (sans-IO).

For each turn, oldest first (SESS-030): the user's prompt as sent; then, per kept model call,
the message and thought segments its kept attempt showed, in the order shown, followed by its
tool calls in their final state; then the turn's closing note when it did not complete. A
compaction made in the turn comes where it happened: before the model call it preceded (after
the prompt for `/compact`), as its `CompactionRecord` (COMPACT-005).
Abandoned attempts were never stored, so they are never replayed, and neither is a reset
marker (RESET-004). The agent layer turns each item into one `session/update`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from acp_bridge._json import JsonObject
from acp_bridge.sessions._records import StoredToolCall, StoredTurn
from acp_bridge.sessions._shown import ShownTurn
from acp_bridge.turn import AgentText, AgentThought, CompactionRecord

__all__ = ["PromptShown", "ReplayItem", "transcript"]


@dataclass(frozen=True, slots=True)
class PromptShown:
    """A turn's prompt: the ACP content blocks the editor sent, under one message id."""

    blocks: tuple[JsonObject, ...]
    message_id: str


ReplayItem: TypeAlias = PromptShown | AgentText | AgentThought | StoredToolCall | CompactionRecord


def transcript(turns: Sequence[ShownTurn] | Sequence[StoredTurn]) -> Iterator[ReplayItem]:
    """The replay of `turns` (every stored turn of a session, oldest first; what they showed
    is all it reads of them)."""
    for turn in turns:
        yield PromptShown(turn.prompt, f"{turn.id_prefix}-user")
        calls: dict[int, list[StoredToolCall]] = {}
        for call in turn.tool_calls:
            calls.setdefault(call.model_call, []).append(call)
        compactions = list(turn.compactions)
        for model_call in turn.model_calls:
            while compactions and compactions[0].before_model_call <= model_call.model_call:
                yield compactions.pop(0)
            for segment in model_call.display:
                if segment.kind == "thought":
                    yield AgentThought(segment.text, segment.message_id)
                else:
                    yield AgentText(segment.text, segment.message_id)
            yield from calls.pop(model_call.model_call, ())
        yield from compactions  # before a call that failed, or a /compact turn
        for leftover in calls.values():  # shown without a kept model call: never by the engine
            yield from leftover
        if turn.note:
            yield AgentText(turn.note, f"{turn.id_prefix}-note")
