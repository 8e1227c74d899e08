"""Session records -> ACP wire models: the `session/load` replay and `session/list` entries.

One `session/update` per transcript item (`acp_bridge.sessions.transcript`): the prompt's
blocks as `user_message_chunk`s, shown text and thoughts as `agent_message_chunk` /
`agent_thought_chunk` under the message ids they had, each tool call as one `tool_call` in its
final state. Embedded terminals are left out of a replay: they belonged to the editor's
terminals of the earlier connection, which no longer exist (the same rule as a reused
effect's outcome).

The replay's I/O (pages of stored turns, many lines per write) is `_replaying`'s, which
encodes text chunks and plain-text prompt blocks into their lines directly; `replay_params`
is the way every other item goes, and what those direct lines must equal. Tool calls and
their plans are built without the models there too (`_replay_wire`); `replay_updates`, the
models of every item, is what the light lines are tested against.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from acp_bridge._json import JsonObject
from acp_bridge.agent._chunks import chunk_params
from acp_bridge.agent._live import compaction_update, plan_update
from acp_bridge.agent._replay_wire import tool_call_lines
from acp_bridge.agent._translate import _content, _location, update_model
from acp_bridge.sessions import (
    PromptShown,
    ReplayItem,
    SessionRecord,
    StoredToolCall,
)
from acp_bridge.tools import TerminalContent, ToolKind, stored_plan
from acp_bridge.turn import AgentText, AgentThought, CompactionRecord, CompactionShown, PlanShown

if TYPE_CHECKING:
    from acp_bridge import protocol as acp
else:
    from acp_bridge.agent._lazy import acp

__all__ = [
    "iso_time",
    "mcp_record",
    "plain_text",
    "replay_params",
    "replay_updates",
    "session_info",
]


def iso_time(timestamp: float) -> str:
    """ISO 8601 in UTC with milliseconds, as `updatedAt` is sent."""
    moment = datetime.datetime.fromtimestamp(timestamp, datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def session_info(record: SessionRecord) -> acp.SessionInfo:
    fields: dict[str, Any] = {
        "session_id": record.session_id,
        "cwd": record.cwd,
        "updated_at": iso_time(record.updated_at),
    }
    if record.additional_directories:
        fields["additional_directories"] = list(record.additional_directories)
    if record.title is not None:
        fields["title"] = record.title
    return acp.SessionInfo(**fields)


def mcp_record(server: acp.McpServer) -> JsonObject:
    """What is recorded of an MCP server the editor passed: never its env or headers,
    which may hold secrets."""
    if isinstance(server, acp.McpServerStdio):
        return {"name": server.name, "type": "stdio", "command": server.command}
    return {"name": server.name, "type": server.type, "url": server.url}


def _tool_call(call: StoredToolCall) -> acp.ToolCall:
    fields: dict[str, Any] = {
        "tool_call_id": call.tool_call_id,
        "title": call.title,
        "kind": acp.ToolKind(call.kind.value),
        "status": acp.ToolCallStatus(call.status.value),
        "content": [_content(c) for c in call.content if not isinstance(c, TerminalContent)],
        "locations": [_location(loc) for loc in call.locations],
    }
    if call.raw_input is not None:
        fields["raw_input"] = call.raw_input
    if call.raw_output is not None:
        fields["raw_output"] = call.raw_output
    return acp.ToolCall(**fields)


def replay_updates(item: ReplayItem, *, compaction: bool = False) -> list[acp.SessionUpdate]:
    """The session updates that replay one transcript item. A compaction is replayed as one
    `compaction_update` (completed, with its summary) to clients that take them (COMPACT-005)."""
    if isinstance(item, CompactionRecord):
        if not compaction:
            return []
        done = CompactionShown(  # every field the live one had (COMPACT-009)
            item.compaction_id,
            "completed",
            item.summary,
            trigger=item.trigger,
            summarised=item.summarised,
            kept=item.kept,
        )
        return [compaction_update(done)]
    if isinstance(item, PromptShown):
        return [
            acp.UserMessageChunk(
                content=acp.from_wire(acp.CONTENT_BLOCK, block), message_id=item.message_id
            )
            for block in item.blocks
        ]
    if isinstance(item, StoredToolCall):
        plan = _stored_plan(item)  # PLAN-002: the plan is shown again with its tool call
        return [_tool_call(item)] if plan is None else [_tool_call(item), plan]
    return [update_model(item)]


def _stored_plan(call: StoredToolCall) -> acp.Plan | None:
    """The `plan` a finished planning-tool call showed, read back from its rawOutput."""
    entries = stored_plan(call.raw_output) if call.kind is ToolKind.THINK else None
    return None if entries is None else plan_update(PlanShown(entries))


def plain_text(block: JsonObject) -> bool:
    return (
        block.keys() == {"type", "text"}
        and block["type"] == "text"
        and (isinstance(block["text"], str))
    )


def replay_params(
    session_id: str, item: ReplayItem, *, compaction: bool = False
) -> list[JsonObject]:
    """The `session/update` params that replay one item (equal to `replay_updates`' wire)."""
    if isinstance(item, AgentText | AgentThought):
        return [chunk_params(session_id, item)]
    if isinstance(item, PromptShown) and all(plain_text(b) for b in item.blocks):
        return [
            {
                "sessionId": session_id,
                "update": {
                    "sessionUpdate": "user_message_chunk",
                    "content": {"type": "text", "text": block["text"]},
                    "messageId": item.message_id,
                },
            }
            for block in item.blocks
        ]
    if isinstance(item, StoredToolCall):  # most of a tool-using session's other lines
        return [{"sessionId": session_id, "update": u} for u in tool_call_lines(item)]
    # `to_wire(SessionNotification)` without building that model's validator (all of the
    # update union: tens of ms, before the first update of a prompt with an image).
    return [
        {"sessionId": session_id, "update": acp.to_wire(update)}
        for update in replay_updates(item, compaction=compaction)
    ]
