"""History repair: the pairing check that runs before every model request (sans-IO).

Providers reject a request whose function responses do not pair 1:1 with the calls of the
preceding model turn (Gemini: 400 INVALID_ARGUMENT, forever, once it is in the history).
`repair_history` makes that state unreachable (TURN-007): it drops every `ToolResult` without a
matching call (same `call_id` and `name`) in the immediately preceding `AssistantTurn`, drops
duplicates, and answers every unanswered call with an error result.

A prompt that got no reply (its turn was cancelled, or failed, before the model answered) is
followed by the next prompt: two user turns in a row, which some chat templates refuse. They
are sent as one user turn (`join_unanswered_prompts`, also before every request): the first
prompt, a note that it got no reply, then the next (SESS-CANCEL-001); the session store keeps
each prompt as it was.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from acp_bridge.providers import (
    AssistantTurn,
    Message,
    ToolCall,
    ToolResult,
    ToolResults,
    UserTurn,
)

__all__ = [
    "MISSING_RESULT",
    "NO_REPLY",
    "DroppedResult",
    "join_unanswered_prompts",
    "repair_history",
]

logger = logging.getLogger(__name__)

MISSING_RESULT = (
    "No result was recorded for this tool call (the turn was interrupted or the result was "
    "lost). Assume it did not complete; check before repeating it."
)
NO_REPLY = "[No reply was given to the user's message above. The user's next message follows.]"


@dataclass(frozen=True, slots=True)
class DroppedResult:
    """A function response removed from history, and why."""

    index: int  # position of its `ToolResults` message in the input
    result: ToolResult
    why: str


def repair_history(messages: Sequence[Message]) -> tuple[list[Message], list[DroppedResult]]:
    """Return a history whose tool results pair 1:1 with their calls, and what was dropped.

    Idempotent; a history that is already paired comes back equal, holding the same message
    objects (checked without copying any: this runs before every model request, and the
    providers' encoding cache is keyed by message identity).
    """
    if _paired(messages):
        return list(messages), []
    return repair(messages)


def repair(messages: Sequence[Message]) -> tuple[list[Message], list[DroppedResult]]:
    """`repair_history` without its check for an already paired history."""
    repaired: list[Message] = []
    dropped: list[DroppedResult] = []
    for index, message in enumerate(messages):
        if isinstance(message, ToolResults):
            previous = repaired[-1] if repaired else None
            if isinstance(previous, AssistantTurn) and previous.tool_calls:
                repaired.append(_pair(previous, message, index, dropped))
                continue
            for result in message.results:
                dropped.append(DroppedResult(index, result, "no preceding model turn with calls"))
            continue
        _answer_open_calls(repaired)
        repaired.append(message)
    _answer_open_calls(repaired)
    for item in dropped:
        logger.warning(
            "history repair dropped the result for %s %r: %s",
            item.result.name,
            item.result.call_id,
            item.why,
        )
    return repaired, dropped


def _paired(messages: Sequence[Message]) -> bool:
    """Whether `repair_history` would change nothing: every `ToolResults` follows a model turn
    with calls and answers each of its calls once, in order; no call is left unanswered."""
    calls: Sequence[ToolCall] | None = None  # of the model turn awaiting its results
    for message in messages:
        if isinstance(message, ToolResults):
            results = message.results
            if calls is None or len(results) != len(calls):
                return False
            if len(calls) > 1 and len({call.call_id for call in calls}) != len(calls):
                return False  # one id for two calls: the repair answers both alike
            for call, result in zip(calls, results, strict=True):
                if call.call_id != result.call_id or call.name != result.name:
                    return False
            calls = None
        elif calls is not None:
            return False
        elif isinstance(message, AssistantTurn) and message.tool_calls:
            calls = message.tool_calls
    return calls is None


def _pair(
    turn: AssistantTurn, message: ToolResults, index: int, dropped: list[DroppedResult]
) -> ToolResults:
    wanted = {call.call_id: call.name for call in turn.tool_calls}
    found: dict[str, ToolResult] = {}
    for result in message.results:
        if wanted.get(result.call_id) != result.name:
            dropped.append(DroppedResult(index, result, "no matching call in the model turn"))
        elif result.call_id in found:
            dropped.append(DroppedResult(index, result, "a second result for the same call"))
        else:
            found[result.call_id] = result
    return ToolResults(
        tuple(found.get(c.call_id) or _missing(c.call_id, c.name) for c in turn.tool_calls)
    )


def _answer_open_calls(repaired: list[Message]) -> None:
    """If the last message is a model turn with calls, answer them (nothing else will)."""
    last = repaired[-1] if repaired else None
    if isinstance(last, AssistantTurn) and last.tool_calls:
        logger.warning("history repair answered %d unanswered tool call(s)", len(last.tool_calls))
        repaired.append(ToolResults(tuple(_missing(c.call_id, c.name) for c in last.tool_calls)))


def join_unanswered_prompts(messages: list[Message]) -> list[Message]:
    """`messages` with each run of user turns joined into one (SESS-CANCEL-001); the same
    list, unchanged, when there is none (the usual case, checked without copying)."""
    previous: Message | None = None
    for message in messages:
        if type(message) is UserTurn and type(previous) is UserTurn:
            break
        previous = message
    else:
        return messages
    joined: list[Message] = []
    for message in messages:
        last = joined[-1] if joined else None
        if isinstance(message, UserTurn) and isinstance(last, UserTurn):
            joined[-1] = _joined(last, message)
        else:
            joined.append(message)
    return joined


def _joined(first: UserTurn, then: UserTurn) -> UserTurn:
    """Two prompts in a row as one user turn, the note between them."""
    return UserTurn(
        (*first.parts, NO_REPLY, *then.parts),
        first.images + then.images,
        first.audio + then.audio,
    )


def _missing(call_id: str, name: str) -> ToolResult:
    return ToolResult(call_id=call_id, name=name, output=MISSING_RESULT, is_error=True)
