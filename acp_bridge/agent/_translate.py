"""Turn-engine updates and tool contents -> ACP v1 wire models (one function per kind)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp_bridge.tools import (
    DiffContent,
    Location,
    MediaContent,
    TerminalContent,
    TextContent,
    ToolContent,
)
from acp_bridge.turn import (
    AgentText,
    AgentThought,
    PermissionOption,
    ToolCallChanged,
    ToolCallShown,
    TurnUpdate,
)

if TYPE_CHECKING:
    from acp_bridge import protocol as acp
else:
    from acp_bridge.agent._lazy import acp

__all__ = ["permission_options", "tool_call_fields", "update_model"]


def _content(item: ToolContent) -> acp.ToolCallContent:
    if isinstance(item, TextContent):
        return acp.ToolCallContentBlock(content=acp.TextContent(text=item.text))
    if isinstance(item, DiffContent):
        return acp.ToolCallDiff(path=item.path, old_text=item.old_text, new_text=item.new_text)
    if isinstance(item, MediaContent):
        return acp.ToolCallContentBlock(content=_media_block(item))
    assert isinstance(item, TerminalContent)
    return acp.ToolCallTerminal(terminal_id=item.terminal_id)


def _media_block(item: MediaContent) -> acp.ContentBlock:
    """An image, audio clip or embedded resource as the ACP content block (MCP-MEDIA-001)."""
    if item.kind == "image":
        if item.uri is None:
            return acp.ImageContent(data=item.data, mime_type=item.mime_type)
        return acp.ImageContent(data=item.data, mime_type=item.mime_type, uri=item.uri)
    if item.kind == "audio":
        return acp.AudioContent(data=item.data, mime_type=item.mime_type)
    uri = item.uri or ""
    if item.text is not None:
        text = acp.TextResourceContents(uri=uri, text=item.text, mime_type=item.mime_type)
        return acp.EmbeddedResource(resource=text)
    blob = acp.BlobResourceContents(uri=uri, blob=item.data, mime_type=item.mime_type)
    return acp.EmbeddedResource(resource=blob)


def _location(item: Location) -> acp.ToolCallLocation:
    if item.line is None:
        return acp.ToolCallLocation(path=item.path)
    return acp.ToolCallLocation(path=item.path, line=item.line)


def tool_call_fields(update: ToolCallShown) -> acp.ToolCallUpdate:
    """The `toolCall` of a permission request: the call as it was shown, but its content.

    The call's `tool_call` (with the diff) is on the wire before the gate asks, and the
    request's `toolCall` is an update that merges into it, so the diff is not sent twice
    (PERF-BIG-001).
    """
    return acp.ToolCallUpdate(**_shown_fields(update, with_content=False))


def _shown_fields(update: ToolCallShown, *, with_content: bool = True) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "tool_call_id": update.tool_call_id,
        "title": update.title,
        "kind": acp.ToolKind(update.kind.value),
        "status": acp.ToolCallStatus(update.status.value),
        "locations": [_location(loc) for loc in update.locations],
    }
    if with_content:
        fields["content"] = [_content(c) for c in update.content]
    if update.raw_input is not None:
        fields["raw_input"] = update.raw_input
    return fields


def update_model(update: TurnUpdate) -> acp.SessionUpdate:
    """The one `session/update` payload for a turn update."""
    if isinstance(update, AgentText):
        if update.reset is None:
            return acp.AgentMessageChunk(
                content=acp.TextContent(text=update.text), message_id=update.message_id
            )
        # The reset flag lives in the update's `_meta`, never at a root (spec/reset-extension.md).
        return acp.AgentMessageChunk(
            content=acp.TextContent(text=update.text),
            message_id=update.message_id,
            field_meta=update.reset.to_meta(),
        )
    if isinstance(update, AgentThought):
        return acp.AgentThoughtChunk(
            content=acp.TextContent(text=update.text), message_id=update.message_id
        )
    if isinstance(update, ToolCallShown):
        return acp.ToolCall(**_shown_fields(update))
    assert isinstance(update, ToolCallChanged)
    changed: dict[str, Any] = {"tool_call_id": update.tool_call_id}
    if update.status is not None:
        changed["status"] = acp.ToolCallStatus(update.status.value)
    if update.title is not None:
        changed["title"] = update.title
    if update.content is not None:
        changed["content"] = [_content(c) for c in update.content]
    if update.locations is not None:
        changed["locations"] = [_location(loc) for loc in update.locations]
    if update.raw_output is not None:
        changed["raw_output"] = update.raw_output
    return acp.ToolCallProgress(**changed)


def permission_options(options: tuple[PermissionOption, ...]) -> list[acp.PermissionOption]:
    return [
        acp.PermissionOption(
            option_id=o.option_id, name=o.name, kind=acp.PermissionOptionKind(o.kind.value)
        )
        for o in options
    ]
