"""Where a retry becomes a reset flag: chunks of one model call, per attempt (sans-IO).

`ChunkPresenter` turns an attempt's text and thought deltas into `AgentText` / `AgentThought`
updates with per-attempt message ids (RESET-006), and decides whether a retry must open with a
reset chunk (spec/reset-extension.md, RESET-001..RESET-005): only when the abandoned attempt
had shown chunks, only on the new attempt's first chunk, always with empty text because the
bridge sends it before the back-off sleep.
"""

from __future__ import annotations

from acp_bridge.providers import TextDelta, ThoughtDelta
from acp_bridge.turn._attempt import Attempt
from acp_bridge.turn._updates import AgentText, AgentThought, ResetMarker

__all__ = ["GAVE_UP", "ChunkPresenter", "message_id", "thought_id"]

GAVE_UP = "gave_up"
"""The `reason` of the marker sent when the bridge stops retrying (RESET-010)."""


def message_id(id_prefix: str, model_call: int, attempt: int) -> str:
    """The `messageId` of an attempt's `agent_message_chunk`s (RESET-006)."""
    return f"{id_prefix}-m{model_call}-a{attempt}"


def thought_id(id_prefix: str, model_call: int, attempt: int) -> str:
    """The `messageId` of an attempt's `agent_thought_chunk`s (RESET-006)."""
    return f"{id_prefix}-m{model_call}-a{attempt}-thought"


class ChunkPresenter:
    """Presents the attempts of one model call to the editor."""

    def __init__(self, id_prefix: str, model_call: int) -> None:
        self.id_prefix = id_prefix
        self.model_call = model_call
        self._ids: dict[int, tuple[str, str]] = {}

    def chunk_for(
        self, attempt: Attempt, event: TextDelta | ThoughtDelta
    ) -> AgentText | AgentThought | None:
        """The update for one delta, or None when there is nothing to show."""
        if not event.text:
            return None  # an empty delta (or a bare signature) shows nothing
        attempt.shown_chunks = True
        ids = self._ids.get(attempt.number)
        if ids is None:  # computed once per attempt, not per chunk
            ids = self._ids[attempt.number] = (
                message_id(self.id_prefix, self.model_call, attempt.number),
                thought_id(self.id_prefix, self.model_call, attempt.number),
            )
        if isinstance(event, TextDelta):
            return AgentText(event.text, ids[0])
        return AgentThought(event.text, ids[1])

    def reset_for(self, abandoned: Attempt, new: Attempt, reason: str) -> AgentText | None:
        """The reset chunk that opens `new`, or None when `abandoned` showed nothing.

        RESET-001: sent at retry start (before the back-off) with empty text, as the first
        chunk of the new attempt. RESET-004: no reset when nothing was shown.
        """
        if not abandoned.shown_chunks:
            return None
        new.shown_chunks = True  # the reset chunk is itself a chunk of the new attempt
        return AgentText(
            text="",
            message_id=message_id(self.id_prefix, self.model_call, new.number),
            reset=ResetMarker(attempt=new.number, reason=reason),
        )

    def give_up_for(self, last: Attempt, fault: str, give_up: str) -> AgentText | None:
        """The marker sent when the bridge gives up after `last`, or None when `last` showed
        nothing. RESET-010: it discards the failed attempt's output before the error."""
        if not last.shown_chunks:
            return None
        return AgentText(
            text="",
            message_id=message_id(self.id_prefix, self.model_call, last.number),
            reset=ResetMarker(last.number, GAVE_UP, fault=fault, give_up=give_up),
        )
