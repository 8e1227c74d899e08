"""Normalized model-stream events: the one vocabulary every provider adapter speaks.

A provider turns its wire format (SSE, NDJSON, scripts) into these frozen dataclasses and
nothing else. The turn engine tags each event with its attempt; providers never see attempts
as state and never retry on their own. A broken stream is raised as `ModelStreamError`, never
hidden and never spliced onto a second stream.

Invariants an adapter keeps:
- `ToolCallComplete` is emitted only once its arguments parsed as a JSON object.
- An attempt ends with exactly one `Finish`, or a raised `ModelStreamError`.
- A stream that ends without its terminal marker raises `FaultKind.INCOMPLETE_STREAM`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from acp_bridge._json import JsonObject, JsonValue

__all__ = [
    "Finish",
    "FinishReason",
    "StreamEvent",
    "StreamStart",
    "TextDelta",
    "ThoughtDelta",
    "ToolCallComplete",
    "ToolCallDelta",
    "ToolCallStart",
    "Usage",
]


class FinishReason(enum.StrEnum):
    """Why a model stopped, normalized across providers."""

    STOP = "stop"
    TOOL_CALLS = "tool_calls"
    LENGTH = "length"
    CONTENT_FILTER = "content_filter"
    REFUSAL = "refusal"
    PAUSE = "pause"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class StreamStart:
    """The provider accepted the request and the first bytes arrived."""

    provider: str
    model: str
    request_id: str | None = None


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A fragment of the answer's text (may split a word or a UTF-8 grapheme cluster)."""

    text: str


@dataclass(frozen=True, slots=True)
class ThoughtDelta:
    """A fragment of visible reasoning. `signature` is opaque provider state to send back."""

    text: str
    signature: str | None = None
    redacted_data: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """A tool call began. `call_id` is synthesized by the adapter when the provider has none."""

    call_id: str
    name: str
    index: int


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A raw fragment of a call's JSON arguments. Display-only; never executed."""

    call_id: str
    index: int
    fragment: str


@dataclass(frozen=True, slots=True)
class ToolCallComplete:
    """A whole tool call whose arguments parsed as a JSON object.

    `provider_meta` keeps what the provider needs to see again in history (a Gemini
    `thoughtSignature`, an OpenAI Responses item id), verbatim.
    """

    call_id: str
    name: str
    arguments: JsonObject
    raw_arguments: str = ""
    provider_meta: Mapping[str, JsonValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage reported by the provider; the last `Usage` of an attempt wins.

    Adapters pass usage on as soon as the provider reports it (cumulative totals), not only
    before the finish, so an attempt that breaks later still has what it was billed.
    `cost` is the provider's own figure for the attempt (OpenRouter's credits), if any.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    reasoning_tokens: int = 0
    cost: float | None = None


@dataclass(frozen=True, slots=True)
class Finish:
    """The attempt completed: the terminal marker arrived."""

    reason: FinishReason
    raw_reason: str | None = None


StreamEvent: TypeAlias = (
    StreamStart
    | TextDelta
    | ThoughtDelta
    | ToolCallStart
    | ToolCallDelta
    | ToolCallComplete
    | Usage
    | Finish
)
