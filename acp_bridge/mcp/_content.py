"""An MCP `CallToolResult` (as JSON) -> the tool call's outcome (sans-IO, MCP-RESULT-001..).

Text blocks become text; image, audio and binary resource blocks are described (media type
and size) since the tool result the model reads is text; text resources become their text;
resource links their URI. Without any content block, `structuredContent` is shown as JSON.
`isError` results fail the call with the server's message (MCP-RESULT-002). What the model
reads is cut to the tool limit with the usual marker (MCP-RESULT-003); the editor gets the
whole text.
"""

from __future__ import annotations

import json
from typing import Any

from acp_bridge._json import JsonValue
from acp_bridge.tools._base import TextContent, ToolOutcome
from acp_bridge.tools._text import truncate_head, truncation_marker

__all__ = ["MalformedResult", "result_outcome"]

_RAW_OUTPUT_LIMIT = 64_000


class MalformedResult(ValueError):
    """The server's result is not a CallToolResult."""


def _decoded_size(data: Any) -> int:
    return len(data) * 3 // 4 if isinstance(data, str) else 0


def _block_text(block: Any) -> str:
    if not isinstance(block, dict):
        raise MalformedResult("a content block is not an object")
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        if not isinstance(text, str):
            raise MalformedResult("a text block has no text")
        return text
    if kind in ("image", "audio"):
        mime = block.get("mimeType", "?")
        return f"[{kind} {mime}, {_decoded_size(block.get('data'))} bytes]"
    if kind == "resource":
        resource = block.get("resource")
        if not isinstance(resource, dict):
            raise MalformedResult("a resource block has no resource")
        uri = resource.get("uri", "?")
        if isinstance(resource.get("text"), str):
            return f"[resource {uri}]\n{resource['text']}"
        mime = resource.get("mimeType", "application/octet-stream")
        return f"[resource {uri} ({mime}), {_decoded_size(resource.get('blob'))} bytes]"
    if kind == "resource_link":
        return f"[resource link {block.get('uri', '?')}: {block.get('name', '')}]"
    return f"[{kind} content]"


def result_outcome(label: str, result: Any, model_limit: int) -> ToolOutcome:
    """The outcome of a call of the tool `label` (e.g. ``time: get_current_time``)."""
    if not isinstance(result, dict) or not isinstance(result.get("content", []), list):
        raise MalformedResult("the result is not a CallToolResult")
    parts = [_block_text(block) for block in result.get("content", [])]
    structured = result.get("structuredContent")
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, indent=2))
    text = "\n".join(parts)
    failed = result.get("isError") is True
    if failed:
        text = f"{label} failed: {text or 'the server gave no reason'}"
    for_model, dropped = truncate_head(text, model_limit)
    if dropped:
        for_model = f"{for_model}\n{truncation_marker(dropped)}"
    raw: JsonValue = None
    if len(json.dumps(result)) <= _RAW_OUTPUT_LIMIT:
        raw = result
    return ToolOutcome(
        ok=not failed,
        for_model=for_model or "(no output)",
        content=(TextContent(text),) if text else (),
        raw_output=raw,
    )
