"""The light replay lines of tool calls and plans: `session/load` without pydantic.

A replayed tool call is one `tool_call` in its final state, followed by its plan when it was
the planning tool's (PLAN-002). They were built as ACP models and dumped with `to_wire`; here
they are built as the plain dicts `to_wire` writes, key order included (`agent/_light.py`'s
rule), so a session with tool calls loads without building a model per call, and one whose
every line is light loads without importing pydantic. Tests hold each builder equal to the
models over generated calls (tests/sessions/test_sessions_replay_wire.py).

The stored calls are the bridge's own (kinds and statuses of its enums, 1-based lines), so
nothing is validated here: the models would accept every one of them as it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.sessions import StoredToolCall
from acp_bridge.tools import (
    DiffContent,
    Location,
    MediaContent,
    TerminalContent,
    TextContent,
    ToolContent,
    ToolKind,
    stored_plan,
)
from acp_bridge.turn import PlanEntry

__all__ = ["content_wire", "plan_wire", "tool_call_lines", "tool_call_wire"]


def _media_wire(item: MediaContent) -> JsonObject:
    """`to_wire` of the content block of an image, audio clip or embedded resource."""
    if item.kind == "image":
        image: JsonObject = {"type": "image", "data": item.data, "mimeType": item.mime_type}
        if item.uri is not None:
            image["uri"] = item.uri
        return image
    if item.kind == "audio":
        return {"type": "audio", "data": item.data, "mimeType": item.mime_type}
    uri = item.uri or ""
    resource: JsonObject
    if item.text is not None:
        resource = {"uri": uri, "text": item.text, "mimeType": item.mime_type}
    else:
        resource = {"uri": uri, "blob": item.data, "mimeType": item.mime_type}
    return {"type": "resource", "resource": resource}


def content_wire(item: ToolContent) -> JsonObject:
    """`to_wire` of a tool call content item (`_translate._content`'s model)."""
    if isinstance(item, TextContent):
        return {"type": "content", "content": {"type": "text", "text": item.text}}
    if isinstance(item, DiffContent):
        return {
            "type": "diff",
            "path": item.path,
            "oldText": item.old_text,
            "newText": item.new_text,
        }
    if isinstance(item, MediaContent):
        return {"type": "content", "content": _media_wire(item)}
    assert isinstance(item, TerminalContent)
    return {"type": "terminal", "terminalId": item.terminal_id}


def _location_wire(item: Location) -> JsonObject:
    if item.line is None:
        return {"path": item.path}
    return {"path": item.path, "line": item.line}


def tool_call_wire(call: StoredToolCall) -> JsonObject:
    """The `tool_call` that replays a stored call: its final state, without the embedded
    terminals of the earlier connection (they no longer exist)."""
    wire: JsonObject = {
        "sessionUpdate": "tool_call",
        "toolCallId": call.tool_call_id,
        "title": call.title,
        "kind": call.kind.value,
        "status": call.status.value,
        "content": [content_wire(c) for c in call.content if not isinstance(c, TerminalContent)],
        "locations": [_location_wire(loc) for loc in call.locations],
    }
    raw_input: JsonValue = call.raw_input
    if raw_input is not None:
        wire["rawInput"] = raw_input
    if call.raw_output is not None:
        wire["rawOutput"] = call.raw_output
    return wire


def plan_wire(entries: Sequence[PlanEntry]) -> JsonObject:
    """A `plan` update of these entries (`_live.plan_update`'s model)."""
    return {
        "sessionUpdate": "plan",
        "entries": [
            {"content": e.content, "priority": e.priority, "status": e.status} for e in entries
        ],
    }


def tool_call_lines(call: StoredToolCall) -> list[JsonObject]:
    """The updates that replay a stored call: its `tool_call`, then the plan a finished
    planning-tool call showed, read back from its rawOutput (PLAN-002)."""
    entries = stored_plan(call.raw_output) if call.kind is ToolKind.THINK else None
    shown = tool_call_wire(call)
    return [shown] if entries is None else [shown, plan_wire(entries)]
