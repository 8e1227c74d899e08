"""JSON forms of what the store keeps: the provider conversation and what tool calls showed.

Every record round-trips exactly: `message_from_json(message_to_json(m)) == m` for each
`UserTurn`, `AssistantTurn` (thoughts with their signatures and redacted data, tool calls with
their arguments and provider metadata) and `ToolResults`; the same for tool-call content and
locations. Keys are camelCase like the rest of the bridge's stored JSON (the effect ledger).
The JSON text is compact UTF-8 (`dumps`), the form stored in SQLite.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable, Iterable
from typing import Any

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.providers import (
    AssistantTurn,
    AudioPart,
    ImagePart,
    MediaPart,
    Message,
    Thought,
    ToolCall,
    ToolResult,
    ToolResults,
    UserTurn,
)
from acp_bridge.tools import (
    DiffContent,
    Location,
    MediaContent,
    TerminalContent,
    TextContent,
    ToolContent,
    diff_from_stored,
    diff_to_stored,
    media_from_json,
    media_to_json,
)

__all__ = [
    "content_from_json",
    "content_to_json",
    "dumps",
    "locations_from_json",
    "locations_to_json",
    "message_from_json",
    "message_to_json",
]


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)
# CPython's C encoder, made once: `json.dumps` with arguments builds an encoder and then the
# C one on every call (STORE4-005). Its output is `json.dumps`'s, byte for byte.
_make_c_encoder: Callable[..., Callable[[object, int], Iterable[str]]] | None = getattr(
    json.encoder, "c_make_encoder", None
)


def _c_encoder() -> Callable[[object, int], Iterable[str]] | None:
    """The C encoder `json.dumps` would build, or None where it is missing or takes other
    arguments (it is CPython's, not a documented API): then `_ENCODER.encode`, the same text."""
    if _make_c_encoder is None:
        return None
    try:
        # markers, default, string encoder, indent, separators, sort_keys, skipkeys, allow_nan
        return _make_c_encoder(
            None,
            _ENCODER.default,
            json.encoder.encode_basestring,
            None,
            ":",
            ",",
            False,
            False,
            True,
        )
    except TypeError:
        return None


_C_ENCODE = _c_encoder()


def dumps(value: object) -> str:
    """Compact JSON text, non-ASCII kept (SQLite stores UTF-8): what
    `json.dumps(value, ensure_ascii=False, separators=(",", ":"))` writes."""
    if _C_ENCODE is None:
        return _ENCODER.encode(value)
    return "".join(_C_ENCODE(value, 0))


# -- the conversation --------------------------------------------------------------------


def message_to_json(message: Message) -> JsonObject:
    if isinstance(message, UserTurn):
        user: JsonObject = {"type": "user", "parts": list(message.parts)}
        if message.images:
            user["images"] = [{"mimeType": i.mime_type, "data": i.data} for i in message.images]
        if message.audio:  # AUDIO-004
            user["audio"] = [{"mimeType": a.mime_type, "data": a.data} for a in message.audio]
        return user
    if isinstance(message, AssistantTurn):
        return {
            "type": "assistant",
            "text": message.text,
            "thoughts": [_thought_to_json(t) for t in message.thoughts],
            "toolCalls": [_call_to_json(c) for c in message.tool_calls],
        }
    return {"type": "toolResults", "results": [_result_to_json(r) for r in message.results]}


def _result_to_json(result: ToolResult) -> JsonObject:
    out: JsonObject = {
        "callId": result.call_id,
        "name": result.name,
        "output": result.output,
        "isError": result.is_error,
    }
    if result.media:  # MCP-MEDIA-003: kept for session/load and crash recovery
        out["media"] = [{"mimeType": m.mime_type, "data": m.data} for m in result.media]
    return out


def _result_from_json(data: Any) -> ToolResult:
    media = tuple(MediaPart(str(m["mimeType"]), str(m["data"])) for m in data.get("media", ()))
    return ToolResult(
        str(data["callId"]), str(data["name"]), str(data["output"]), bool(data["isError"]), media
    )


def message_from_json(data: Any) -> Message:
    kind = data["type"]
    if kind == "user":
        images = tuple(
            ImagePart(str(i["mimeType"]), str(i["data"])) for i in data.get("images", ())
        )
        audio = tuple(AudioPart(str(a["mimeType"]), str(a["data"])) for a in data.get("audio", ()))
        return UserTurn(tuple(str(p) for p in data["parts"]), images, audio)
    if kind == "assistant":
        return AssistantTurn(
            text=str(data["text"]),
            thoughts=tuple(_thought_from_json(t) for t in data["thoughts"]),
            tool_calls=tuple(_call_from_json(c) for c in data["toolCalls"]),
        )
    if kind == "toolResults":
        return ToolResults(tuple(_result_from_json(r) for r in data["results"]))
    raise ValueError(f"unknown stored message type {kind!r}")


def _thought_to_json(thought: Thought) -> JsonObject:
    return {
        "text": thought.text,
        "signature": thought.signature,
        "redactedData": thought.redacted_data,
    }


def _thought_from_json(data: Any) -> Thought:
    return Thought(str(data["text"]), data.get("signature"), data.get("redactedData"))


def _call_to_json(call: ToolCall) -> JsonObject:
    return {
        "callId": call.call_id,
        "name": call.name,
        "arguments": call.arguments,
        "providerMeta": dict(call.provider_meta),
    }


def _call_from_json(data: Any) -> ToolCall:
    return ToolCall(
        str(data["callId"]),
        str(data["name"]),
        dict(data["arguments"]),
        dict(data.get("providerMeta") or {}),
    )


# -- what a tool call showed ---------------------------------------------------------------


def content_to_json(content: Iterable[ToolContent]) -> list[JsonValue]:
    out: list[JsonValue] = []
    for item in content:
        if isinstance(item, TextContent):
            out.append({"type": "text", "text": item.text})
        elif isinstance(item, DiffContent):
            out.append(diff_to_stored(item))  # a large file's diff by its hashes (PERF-BIG-002)
        elif isinstance(item, MediaContent):
            out.append(media_to_json(item))
        else:
            out.append({"type": "terminal", "terminalId": item.terminal_id})
    return out


def content_from_json(data: Any) -> tuple[ToolContent, ...]:
    out: list[ToolContent] = []
    for item in data:
        kind = item["type"]
        if kind == "text":
            out.append(TextContent(str(item["text"])))
        elif kind == "diff":
            out.append(diff_from_stored(item))
        elif kind == "terminal":
            out.append(TerminalContent(str(item["terminalId"])))
        elif kind == "media":
            out.append(media_from_json(item))
        else:
            raise ValueError(f"unknown stored tool content type {kind!r}")
    return tuple(out)


def locations_to_json(locations: Iterable[Location]) -> list[JsonValue]:
    return [{"path": loc.path, "line": loc.line} for loc in locations]


def locations_from_json(data: Any) -> tuple[Location, ...]:
    return tuple(Location(str(item["path"]), item.get("line")) for item in data)
