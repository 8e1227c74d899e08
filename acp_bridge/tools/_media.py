"""Media a tool returned (`MediaContent`): its stored JSON form and its parts for the model.

One JSON form serves the effect ledger and the session journal, so a reused effect, a
recovered crash and `session/load` keep the same bytes (MCP-MEDIA-003). The bytes are bounded
where they enter (the MCP result's media budget), so what is stored is bounded too.
`media_parts` is what the model is sent besides the result's text: every block that carries
bytes, in order; each provider adapter takes the media types its API accepts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from acp_bridge._json import JsonObject
from acp_bridge.providers import MediaPart
from acp_bridge.tools._base import MediaContent, ToolContent

__all__ = ["media_from_json", "media_parts", "media_to_json"]


def media_to_json(item: MediaContent) -> JsonObject:
    out: JsonObject = {"type": "media", "kind": item.kind, "mimeType": item.mime_type}
    if item.data:
        out["data"] = item.data
    if item.uri is not None:
        out["uri"] = item.uri
    if item.text is not None:
        out["text"] = item.text
    return out


def media_from_json(data: Any) -> MediaContent:
    uri, text = data.get("uri"), data.get("text")
    return MediaContent(
        kind=str(data["kind"]),
        mime_type=str(data["mimeType"]),
        data=str(data.get("data", "")),
        uri=None if uri is None else str(uri),
        text=None if text is None else str(text),
    )


def media_parts(content: Iterable[ToolContent]) -> tuple[MediaPart, ...]:
    """The media of a tool's content the model is sent (blocks with bytes, in order)."""
    return tuple(
        MediaPart(c.mime_type, c.data) for c in content if isinstance(c, MediaContent) and c.data
    )
