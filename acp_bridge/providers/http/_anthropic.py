"""`AnthropicProvider`: the Messages API with `stream: true`.

`base_url` is the API root without the version (`https://api.anthropic.com`); requests go
to `{base_url}/v1/messages` with `x-api-key` and `anthropic-version`. History keeps what a
tool loop needs: thinking blocks go back with their signatures (redacted ones with their
data; unsigned thoughts cannot be replayed and are dropped), tool calls as `tool_use`
blocks, results as `tool_result` blocks that open the next user message. Consecutive
messages of one role are merged, as the API requires alternation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.providers._conversation import (
    AssistantTurn,
    Message,
    ModelRequest,
    ToolResult,
    ToolResults,
    UserTurn,
)
from acp_bridge.providers._reasoning import thinking_budget
from acp_bridge.providers.http._anthropic_stream import AnthropicStreamDecoder
from acp_bridge.providers.http._fragments import (
    Element,
    FragmentCache,
    Fragments,
    dumps,
    encode_body,
    grouped,
)
from acp_bridge.providers.http._media import ANTHROPIC_MEDIA, taken
from acp_bridge.providers.http._options import HttpProviderOptions
from acp_bridge.providers.http._provider import HttpModelProvider
from acp_bridge.providers.http._schemas import for_anthropic
from acp_bridge.providers.http._transport import StreamDecoder, WireRequest

__all__ = [
    "ANTHROPIC_VERSION",
    "AnthropicProvider",
    "encode_message",
    "encode_messages",
    "render_messages",
]

ANTHROPIC_VERSION = "2023-06-01"
_DEFAULT_MAX_TOKENS = 8192


class AnthropicProvider(HttpModelProvider):
    """Anthropic Messages streaming (and servers that mimic `/v1/messages`)."""

    PROVIDER = "anthropic"
    DEFAULT_BASE_URL = "https://api.anthropic.com"

    def render(self, request: ModelRequest, model: str) -> WireRequest:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if self._options.api_key:
            headers["x-api-key"] = self._options.api_key
        return WireRequest(
            url=self.endpoint("/v1/messages"),
            content=encode_messages(request, model, self._options, self.fragments),
            headers=headers,
        )

    def encode_message(self, message: Message) -> bytes:
        return encode_message(message)

    def decoder(self, model: str) -> StreamDecoder:
        return AnthropicStreamDecoder(
            model=model, provider=self.PROVIDER, secret=self._options.api_key
        )


def render_messages(request: ModelRequest, model: str, options: HttpProviderOptions) -> JsonObject:
    """The JSON body of a streaming Messages request."""
    turns: list[tuple[str, list[JsonValue]]] = []
    for message in request.messages:
        _append(turns, _role(message), _blocks(message))
    messages: list[JsonValue] = [{"role": role, "content": blocks} for role, blocks in turns]
    return cast(JsonObject, _body(request, model, options, messages))


def encode_messages(
    request: ModelRequest,
    model: str,
    options: HttpProviderOptions,
    cache: FragmentCache[Message],
) -> bytes:
    """`render_messages` encoded, each history message's blocks taken from `cache`."""

    def build(messages: Sequence[Message], start: int) -> list[Element]:
        entries = (
            (i, _role(messages[i]), cache.fragment(messages[i]))
            for i in range(start, len(messages))
        )
        return grouped(entries, b',"content":[', b"]}")

    messages = Fragments(cache.assemble(request.messages, build))
    return encode_body(_body(request, model, options, messages))


def encode_message(message: Message) -> bytes:
    """One history message's content blocks, encoded (comma-separated)."""
    return b",".join(dumps(block) for block in _blocks(message))


def _role(message: Message) -> str:
    return "assistant" if isinstance(message, AssistantTurn) else "user"


def _blocks(message: Message) -> list[JsonValue]:
    if isinstance(message, UserTurn):
        blocks: list[JsonValue] = [{"type": "text", "text": part} for part in message.parts if part]
        blocks.extend(
            {
                "type": "image",
                "source": {"type": "base64", "media_type": image.mime_type, "data": image.data},
            }
            for image in message.images
        )
        # Anthropic takes no audio (AUDIO-003): a clip journaled under another provider
        # is named, never sent as a block the API would refuse.
        blocks.extend(
            {
                "type": "text",
                "text": f"[audio clip ({clip.mime_type}) omitted: this model takes no audio]",
            }
            for clip in message.audio
        )
        return blocks
    if isinstance(message, AssistantTurn):
        return _assistant_blocks(message)
    if isinstance(message, ToolResults):
        return [_tool_result(result) for result in message.results]
    return []


def _body(
    request: ModelRequest,
    model: str,
    options: HttpProviderOptions,
    messages: list[JsonValue] | Fragments,
) -> dict[str, JsonValue | Fragments]:
    budget = thinking_budget(request.reasoning, options.thinking_budget)  # REASON-002
    max_tokens = options.max_tokens or (_DEFAULT_MAX_TOKENS + (budget or 0))
    if budget and max_tokens <= budget:
        max_tokens += budget  # Anthropic requires max_tokens > budget_tokens (REASON-002)
    body: dict[str, JsonValue | Fragments] = {
        "model": model,
        "max_tokens": max_tokens,
        "messages": messages,
        "stream": True,
    }
    if request.system:
        body["system"] = request.system
    if request.tools:
        body["tools"] = [
            {
                "name": tool.name,
                "description": tool.description,
                "input_schema": for_anthropic(tool.parameters),
            }
            for tool in request.tools
        ]
        if request.tool_required and not budget:  # "any" is refused beside thinking
            body["tool_choice"] = {"type": "any"}  # UNPARSED-003
    if budget:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    return body


def _append(turns: list[tuple[str, list[JsonValue]]], role: str, blocks: list[JsonValue]) -> None:
    if not blocks:
        return
    if turns and turns[-1][0] == role:
        turns[-1][1].extend(blocks)
    else:
        turns.append((role, blocks))


def _assistant_blocks(turn: AssistantTurn) -> list[JsonValue]:
    blocks: list[JsonValue] = []
    for thought in turn.thoughts:
        if thought.redacted_data:
            blocks.append({"type": "redacted_thinking", "data": thought.redacted_data})
        elif thought.signature:
            blocks.append(
                {"type": "thinking", "thinking": thought.text, "signature": thought.signature}
            )
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    blocks.extend(
        {"type": "tool_use", "id": call.call_id, "name": call.name, "input": call.arguments}
        for call in turn.tool_calls
    )
    return blocks


def _tool_result(result: ToolResult) -> JsonValue:
    content: JsonValue = result.output
    media = taken(result.media, ANTHROPIC_MEDIA)
    if media:  # MCP-MEDIA-002: image blocks (and PDF documents) inside the tool_result
        blocks: list[JsonValue] = [{"type": "text", "text": result.output}]
        blocks.extend(
            {
                "type": "document" if m.mime_type == "application/pdf" else "image",
                "source": {"type": "base64", "media_type": m.mime_type, "data": m.data},
            }
            for m in media
        )
        content = blocks
    block: JsonObject = {"type": "tool_result", "tool_use_id": result.call_id, "content": content}
    if result.is_error:
        block["is_error"] = True
    return block
