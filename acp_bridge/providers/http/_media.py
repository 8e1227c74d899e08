"""Which tool-result media each provider's API takes, by media type (MCP-MEDIA-002).

A tool result's text always describes its media, so a part a provider does not take is left
out of the request and the model still reads what it was; a part it takes is sent as bytes
in the provider's own form (the adapters). The tables are the media types each API
documents for images (and, where it takes them in a tool result, audio and PDF): sending
any other type would make the provider reject the whole request, and the session with it.
"""

from __future__ import annotations

from collections.abc import Iterable

from acp_bridge.providers._conversation import MediaPart

__all__ = ["ANTHROPIC_MEDIA", "GEMINI_AUDIO", "GEMINI_MEDIA", "OPENAI_MEDIA", "taken"]

_WEB_IMAGES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})

OPENAI_MEDIA = _WEB_IMAGES
"""Chat Completions `image_url` parts (in a user message: tool messages take text only)."""

ANTHROPIC_MEDIA = _WEB_IMAGES | {"application/pdf"}
"""`tool_result` content: `image` blocks, and `document` blocks for PDF."""

GEMINI_MEDIA = frozenset(
    {"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif", "application/pdf"}
)
"""`functionResponse.parts` (multimodal function responses)."""

GEMINI_AUDIO = frozenset(
    {
        "audio/wav",
        "audio/x-wav",
        "audio/mp3",
        "audio/mpeg",
        "audio/aiff",
        "audio/aac",
        "audio/ogg",
        "audio/flac",
    }
)
"""`inlineData` parts beside the function responses, as Gemini takes audio in a prompt."""


def taken(media: Iterable[MediaPart], accepted: frozenset[str]) -> list[MediaPart]:
    return [part for part in media if part.mime_type.lower() in accepted]
