"""An MCP `CallToolResult` (as JSON) -> the tool call's outcome (sans-IO, MCP-RESULT-001..).

Text blocks become text. Image, audio and embedded-resource blocks become `MediaContent`: the
editor is shown them as ACP content blocks, and the model reads a one-line description of each
in the text and is sent the bytes where its provider takes them (MCP-MEDIA-001/002). Their
bytes are bounded per result (`MEDIA_BUDGET`, decoded): a block past the budget, or whose data
is not base64, is described with the reason and carried nowhere, so what the journal and the
effect ledger store is bounded too (MCP-MEDIA-004). A text resource's text is also part of the
model's text; resource links their URI. Without any content block, `structuredContent` is
shown as JSON. `isError` results fail the call with the server's message (MCP-RESULT-002).
What the model reads is cut to the tool limit with the usual marker (MCP-RESULT-003).
"""

from __future__ import annotations

import binascii
import json
import re
from base64 import b64decode
from typing import Any

from acp_bridge._json import JsonValue
from acp_bridge.tools._base import MediaContent, TextContent, ToolContent, ToolOutcome
from acp_bridge.tools._text import truncate_head, truncation_marker

__all__ = ["MEDIA_BUDGET", "MalformedResult", "result_outcome"]

MEDIA_BUDGET = 4 * 1024 * 1024
"""Decoded bytes of media one result may carry (Anthropic takes images up to 5 MB)."""

_RAW_OUTPUT_LIMIT = 64_000
_MIME = re.compile(r"[A-Za-z0-9][\w.+-]*/[A-Za-z0-9][\w.+-]*")


class MalformedResult(ValueError):
    """The server's result is not a CallToolResult."""


class _Reader:
    """Reads the blocks in order: text for the model, content for the editor, the budget."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.content: list[ToolContent] = []
        self.left = MEDIA_BUDGET

    def add_text(self, text: str, *, shown: bool = True) -> None:
        self.text.append(text)
        if not shown:
            return
        last = self.content[-1] if self.content else None
        if isinstance(last, TextContent):
            self.content[-1] = TextContent(f"{last.text}\n{text}")
        else:
            self.content.append(TextContent(text))

    def add_media(self, kind: str, mime: Any, data: Any, uri: str | None) -> None:
        if not isinstance(mime, str) or not _MIME.fullmatch(mime):
            mime = "application/octet-stream"
        what = f"{kind} {mime}" if uri is None else f"resource {uri} ({mime})"
        size = _decoded_size(data)
        if size is None:
            self.add_text(f"[{what}: its data is not base64, so it is not passed on]")
            return
        if size > self.left:
            self.add_text(
                f"[{what}, {size} bytes: not passed on, over the {MEDIA_BUDGET}-byte "
                "limit for the media of one result]"
            )
            return
        self.left -= size
        self.add_text(f"[{what}, {size} bytes]", shown=False)
        self.content.append(MediaContent(kind, mime, data, uri=uri))

    def block(self, block: Any) -> None:
        if not isinstance(block, dict):
            raise MalformedResult("a content block is not an object")
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if not isinstance(text, str):
                raise MalformedResult("a text block has no text")
            self.add_text(text)
        elif kind in ("image", "audio"):
            self.add_media(kind, block.get("mimeType"), block.get("data"), None)
        elif kind == "resource":
            self.resource(block.get("resource"))
        elif kind == "resource_link":
            self.add_text(f"[resource link {block.get('uri', '?')}: {block.get('name', '')}]")
        else:
            self.add_text(f"[{kind} content]")

    def resource(self, resource: Any) -> None:
        if not isinstance(resource, dict) or not isinstance(resource.get("uri"), str):
            raise MalformedResult("a resource block has no resource")
        uri = resource["uri"]
        mime = resource.get("mimeType")
        if isinstance(resource.get("text"), str):
            text = resource["text"]
            self.add_text(f"[resource {uri}]\n{text}", shown=False)
            shown_mime = mime if isinstance(mime, str) and _MIME.fullmatch(mime) else "text/plain"
            self.content.append(MediaContent("resource", shown_mime, uri=uri, text=text))
            return
        self.add_media("resource", mime, resource.get("blob"), uri)


def _decoded_size(data: Any) -> int | None:
    """The decoded size of base64 `data`, or None when it is not base64."""
    if not isinstance(data, str):
        return None
    try:
        return len(b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return None


def _without_bytes(result: dict[str, Any]) -> JsonValue:
    """The result for `rawOutput`, base64 data replaced by its length (no bytes twice)."""

    def strip(value: Any) -> Any:
        if isinstance(value, list):
            return [strip(v) for v in value]
        if isinstance(value, dict):
            return {
                k: (
                    f"({len(v)} base64 characters)"
                    if k in ("data", "blob") and isinstance(v, str)
                    else strip(v)
                )
                for k, v in value.items()
            }
        return value

    raw = strip(result)
    return raw if len(json.dumps(raw)) <= _RAW_OUTPUT_LIMIT else None


def result_outcome(label: str, result: Any, model_limit: int) -> ToolOutcome:
    """The outcome of a call of the tool `label` (e.g. ``time: get_current_time``)."""
    if not isinstance(result, dict) or not isinstance(result.get("content", []), list):
        raise MalformedResult("the result is not a CallToolResult")
    reader = _Reader()
    for block in result.get("content", []):
        reader.block(block)
    structured = result.get("structuredContent")
    if not reader.text and structured is not None:
        reader.add_text(json.dumps(structured, ensure_ascii=False, indent=2))
    text = "\n".join(reader.text)
    content = reader.content
    failed = result.get("isError") is True
    if failed:
        text = f"{label} failed: {text or 'the server gave no reason'}"
        content = [TextContent(text), *(c for c in content if isinstance(c, MediaContent))]
    for_model, dropped = truncate_head(text, model_limit)
    if dropped:
        for_model = f"{for_model}\n{truncation_marker(dropped)}"
    if not content and text:
        content = [TextContent(text)]
    return ToolOutcome(
        ok=not failed,
        for_model=for_model or "(no output)",
        content=tuple(content),
        raw_output=_without_bytes(result),
    )
