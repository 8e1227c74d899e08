"""The provider-neutral conversation: what the turn engine keeps as history and sends.

Only completed attempts become history. Each adapter renders these records into its own
wire format (OpenAI messages, Anthropic content blocks, Gemini contents) and must keep the
pairing: every `ToolResult` answers exactly one `ToolCall` of the preceding `AssistantTurn`.
History messages take weak references: the HTTP adapters keep each one's encoding while it
lives (`providers/http/_fragments.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from acp_bridge._json import JsonObject, JsonValue

__all__ = [
    "AssistantTurn",
    "AudioPart",
    "ImagePart",
    "MediaPart",
    "Message",
    "ModelRequest",
    "Thought",
    "ToolCall",
    "ToolResult",
    "ToolResults",
    "ToolSpec",
    "UserTurn",
]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool offered to the model: name, description and a JSON Schema for its arguments."""

    name: str
    description: str
    parameters: JsonObject


@dataclass(frozen=True, slots=True)
class Thought:
    """A completed reasoning block, with the provider's signature kept verbatim."""

    text: str
    signature: str | None = None
    redacted_data: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call of a completed attempt, as the model made it."""

    call_id: str
    name: str
    arguments: JsonObject
    provider_meta: Mapping[str, JsonValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MediaPart:
    """An image, audio clip or binary resource a tool returned: media type and base64 data.

    The result's `output` text always describes it too; an adapter sends the bytes where its
    provider takes that media type, and relies on the text otherwise (MCP-MEDIA-002)."""

    mime_type: str
    data: str


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The answer to one `ToolCall` (same `call_id` and `name`); `media` follows `output`."""

    call_id: str
    name: str
    output: str
    is_error: bool = False
    media: tuple[MediaPart, ...] = ()


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image of the user's prompt: its media type and base64 data (CONTENT-001)."""

    mime_type: str
    data: str


@dataclass(frozen=True, slots=True)
class AudioPart:
    """An audio clip of the user's prompt: its media type (`audio/wav`, `audio/mp3`, ...,
    normalized by the agent) and base64 data (AUDIO-001)."""

    mime_type: str
    data: str


@dataclass(frozen=True, slots=True, weakref_slot=True)
class UserTurn:
    """The user's prompt: text parts (resources are inlined by the agent), then its images,
    then its audio clips."""

    parts: tuple[str, ...]
    images: tuple[ImagePart, ...] = ()
    audio: tuple[AudioPart, ...] = ()


@dataclass(frozen=True, slots=True, weakref_slot=True)
class AssistantTurn:
    """The kept (completed) attempt of one model call."""

    text: str
    thoughts: tuple[Thought, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True, slots=True, weakref_slot=True)
class ToolResults:
    """The function responses for the tool calls of the preceding `AssistantTurn`."""

    results: tuple[ToolResult, ...]


Message: TypeAlias = UserTurn | AssistantTurn | ToolResults


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One model call. `attempt` starts at 1; adapters may only use it for logging/tracing.
    `reasoning`: the session's reasoning effort (`low|medium|high`); None sends none.
    `tool_required`: the model must call one of `tools` (OpenAI-compatible `tool_choice:
    "required"`), asked only on the retry after output the server could not parse
    (UNPARSED-003)."""

    model: str
    messages: Sequence[Message]
    tools: Sequence[ToolSpec] = ()
    system: str | None = None
    attempt: int = 1
    reasoning: str | None = None
    tool_required: bool = False
