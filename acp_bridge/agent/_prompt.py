"""ACP prompt content -> the model's `UserTurn` (text parts).

Baseline content (text, resource_link) is always accepted; embedded resources are inlined
as text (we advertise `embeddedContext`); images and audio are refused with -32602 because
we do not advertise them (a client must not send what was not advertised).
"""

from __future__ import annotations

from collections.abc import Sequence

from acp_bridge import protocol as acp
from acp_bridge.errors import InvalidParams
from acp_bridge.providers import UserTurn

__all__ = ["prompt_title", "user_turn"]


def _part(block: acp.ContentBlock, index: int) -> str:
    if isinstance(block, acp.TextContent):
        return block.text
    if isinstance(block, acp.ResourceLink):
        label = block.title or block.name
        line = f"[{label}]({block.uri})"
        return f"{line} {block.description}" if block.description else line
    if isinstance(block, acp.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, acp.TextResourceContents):
            return f'<resource uri="{resource.uri}">\n{resource.text}\n</resource>'
        mime = resource.mime_type or "application/octet-stream"
        return (
            f'<resource uri="{resource.uri}" mimeType="{mime}">(binary content omitted)</resource>'
        )
    kind = "image" if isinstance(block, acp.ImageContent) else "audio"
    raise InvalidParams.at(
        f"prompt.{index}.type",
        f"prompt[{index}] is {kind} content, which this agent does not accept "
        f"(promptCapabilities.{kind} is false)",
    )


def user_turn(blocks: Sequence[acp.ContentBlock]) -> UserTurn:
    """The user's prompt as text parts, in order."""
    if not blocks:
        raise InvalidParams.at("prompt", "prompt must hold at least one content block")
    return UserTurn(tuple(_part(block, i) for i, block in enumerate(blocks)))


def prompt_title(turn: UserTurn, limit: int = 60) -> str:
    """A short session title from the first prompt (for session_info_update)."""
    text = " ".join(" ".join(turn.parts).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
