"""What may enter history, the journal and the wire: JSON only, text UTF-8 can carry (sans-IO).

The last line of defence behind the stream decoders (TURN-TEXT-001, TURN-JSON-001): a chunk's
text with a lone surrogate is repaired (U+FFFD) before it is shown or kept; a kept message is
cleaned before it enters history (strings repaired, non-finite numbers null). A tool call whose
arguments were not JSON (`1e999` parsed as infinity, a lone surrogate) is kept with clean
arguments and refused with a readable error: it never runs.
"""

from __future__ import annotations

import dataclasses

from acp_bridge.providers import (
    AssistantTurn,
    TextDelta,
    Thought,
    ThoughtDelta,
    ToolCall,
    ToolResults,
    clean_json,
    repair_surrogates,
)

__all__ = ["NOT_JSON", "clean_assistant_turn", "clean_results", "repaired_chunk"]

NOT_JSON = (
    "they are not valid JSON: a number is out of range (NaN or infinity, such as 1e999) or a "
    "string holds a broken character. Send finite numbers and plain text"
)


def repaired_chunk(event: TextDelta | ThoughtDelta) -> TextDelta | ThoughtDelta:
    """A chunk whose text (known to be non-ASCII) has no lone surrogate."""
    text = repair_surrogates(event.text)
    return event if text is event.text else dataclasses.replace(event, text=text)


def _clean_thought(thought: Thought) -> Thought:
    return Thought(
        repair_surrogates(thought.text),
        None if thought.signature is None else repair_surrogates(thought.signature),
        None if thought.redacted_data is None else repair_surrogates(thought.redacted_data),
    )


def _clean_call(call: ToolCall) -> ToolCall:
    arguments = clean_json(call.arguments)
    meta = clean_json(dict(call.provider_meta))
    if arguments is call.arguments and meta == call.provider_meta:
        return call
    assert isinstance(arguments, dict)
    assert isinstance(meta, dict)
    return dataclasses.replace(call, arguments=arguments, provider_meta=meta)


def clean_assistant_turn(message: AssistantTurn) -> AssistantTurn:
    """The message as history may keep it (TURN-JSON-001)."""
    return AssistantTurn(
        repair_surrogates(message.text),
        tuple(_clean_thought(t) for t in message.thoughts),
        tuple(_clean_call(c) for c in message.tool_calls),
    )


def clean_results(message: ToolResults) -> ToolResults:
    """Tool outputs with lone surrogates repaired (a file name read with surrogateescape)."""
    return ToolResults(
        tuple(
            dataclasses.replace(r, output=repair_surrogates(r.output))
            if not r.output.isascii()
            else r
            for r in message.results
        )
    )
