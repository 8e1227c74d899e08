"""Compaction, sans-IO: which part of the history is summarised, and the history after it.

A compaction replaces the older part of the conversation by a summary the model wrote
(spec/daily-use.md#compact-003). What is kept is whole: the last `keep_turns` prompt turns,
fewer when they alone would not fit the budget, and, when even the current turn does not
fit, its latest rounds. A round (a model turn with its tool calls and their results) is never
split, so the history stays paired 1:1 (TURN-007). The summary goes first, as user text:
merged ahead of the first kept prompt, or on its own before a kept model turn.

`compacted_history` is the one function that builds the history after a compaction: the turn
engine applies it live, and the session store applies the same record when it reads the
history back (`session/load`, a restart), so both see the same conversation.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from acp_bridge.providers import AssistantTurn, Message, ToolResults, ToolSpec, UserTurn
from acp_bridge.turn._tally import CHARS_PER_TOKEN, message_chars, tokens_of

__all__ = [
    "SUMMARY_HEADER",
    "CompactionPlan",
    "CompactionRecord",
    "compacted_history",
    "estimate_overhead",
    "estimate_tokens",
    "plan_compaction",
    "transcript_text",
]

SUMMARY_HEADER = (
    "[The earlier part of this conversation was compacted to fit the model's context window. "
    "Summary of it, written by the model:]"
)
_SUMMARY_FOOTER = "[End of the summary. The conversation continues from here.]"
_RESULT_CHARS = 2_000  # of each tool result, in the summarisation transcript


@dataclass(frozen=True, slots=True)
class CompactionRecord:
    """A compaction as journaled: the summary, and how many messages at the end of the
    history (as it was then) were kept after it. `before_model_call`: the model call of the
    turn it came before (0 for `/compact`, which makes none); `trigger`: `threshold`,
    `context_length_exceeded` or `command`; `summarised`: how many messages the summary
    replaced (shown again by the replay, COMPACT-009)."""

    compaction_id: str
    summary: str
    kept: int
    trigger: str
    before_model_call: int = 0
    summarised: int = 0


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """`older` is summarised; the last `kept` messages of the history stay as they are."""

    older: tuple[Message, ...]
    kept: int


def estimate_tokens(messages: Sequence[Message]) -> int:
    """About how many tokens `messages` take (characters / 4; images count 1 000 each)."""
    return tokens_of(sum(message_chars(m) for m in messages), len(messages))


def estimate_overhead(system: str | None, tools: Sequence[ToolSpec]) -> int:
    """About how many tokens a request takes besides its messages: the system prompt (with
    the project instructions) and the tool definitions (MCP tools included), as the
    provider is sent them (COMPACT-010)."""
    chars = len(system or "")
    for tool in tools:
        chars += len(tool.name) + len(tool.description) + len(json.dumps(tool.parameters))
    return chars // CHARS_PER_TOKEN + 10 * len(tools)


def plan_compaction(
    history: Sequence[Message], *, keep_turns: int, budget: int
) -> CompactionPlan | None:
    """What to summarise so that the kept messages take at most `budget` tokens; None when
    nothing can be summarised (a history of one round or less).

    Boundaries are prompt turns (the start of a `UserTurn`), newest kept first; within the
    newest turn, when it alone is over the budget, the start of a round (an `AssistantTurn`),
    keeping at least the last round.
    """
    starts = [i for i, m in enumerate(history) if isinstance(m, UserTurn)]
    rounds = [i for i, m in enumerate(history) if isinstance(m, AssistantTurn)]
    candidates: list[int] = []  # boundaries, most kept first
    for count in range(max(keep_turns, 1), 0, -1):
        if len(starts) >= count:
            candidates.append(starts[-count])
    last_start = starts[-1] if starts else 0
    candidates.extend(i for i in rounds if i > last_start)
    for boundary in candidates:
        if boundary <= 0:
            continue  # nothing before it to summarise
        if estimate_tokens(history[boundary:]) <= budget:
            return CompactionPlan(tuple(history[:boundary]), len(history) - boundary)
    # Nothing fits: keep only the last round (or the last turn when it has none).
    fallback = max((i for i in (*starts, *rounds) if i > 0), default=0)
    if fallback <= 0:
        return None
    return CompactionPlan(tuple(history[:fallback]), len(history) - fallback)


def compacted_history(summary: str, kept: Sequence[Message]) -> list[Message]:
    """The history after a compaction: the summary as user text, then the kept messages.

    A kept history opening with a prompt gets the summary merged ahead of the prompt's own
    text, so user and model turns still alternate; kept results with no model turn before
    them (a record that no longer matches the history) are dropped.
    """
    text = f"{SUMMARY_HEADER}\n\n{summary.strip()}\n\n{_SUMMARY_FOOTER}"
    rest = list(kept)
    while rest and isinstance(rest[0], ToolResults):
        rest.pop(0)
    if rest and isinstance(rest[0], UserTurn):
        first = rest[0]
        return [UserTurn((text, *first.parts), first.images), *rest[1:]]
    return [UserTurn((text,)), *rest]


def transcript_text(messages: Sequence[Message], *, limit: int) -> str:
    """`messages` as a plain transcript for the summarisation call, at most `limit`
    characters: tool results are cut to 2 000 characters each, and when the whole is still
    too long its oldest lines go first (a previous summary, at the very start, is kept)."""
    lines: list[str] = []
    for message in messages:
        if isinstance(message, UserTurn):
            text = "\n".join(message.parts)
            images = f" [{len(message.images)} image(s)]" if message.images else ""
            lines.append(f"USER: {text}{images}")
        elif isinstance(message, AssistantTurn):
            if message.text:
                lines.append(f"ASSISTANT: {message.text}")
            for call in message.tool_calls:
                arguments = json.dumps(call.arguments, ensure_ascii=False)
                lines.append(f"ASSISTANT called {call.name} {_cut(arguments, _RESULT_CHARS)}")
        else:
            for result in message.results:
                state = "failed" if result.is_error else "returned"
                lines.append(f"TOOL {result.name} {state}: {_cut(result.output, _RESULT_CHARS)}")
    text = "\n\n".join(lines)
    if len(text) <= limit:
        return text
    head = lines[0] if lines and lines[0].startswith(f"USER: {SUMMARY_HEADER}") else ""
    head = _cut(head, limit // 2)
    room = max(limit - len(head) - 40, 0)
    return f"{head}\n\n[... earlier lines omitted ...]\n\n{text[-room:]}" if room else head


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [... {len(text) - limit} more characters]"
