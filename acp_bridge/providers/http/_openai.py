"""`OpenAIProvider`: Chat Completions streaming, for OpenAI and compatible local servers.

`base_url` includes the version (`https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`);
requests go to `{base_url}/chat/completions`. With no API key no auth header is sent, so
Ollama, llama.cpp, vLLM and LM Studio work as they are. History renders tool calls as
`tool_calls` with their ids and tool results as `role: "tool"` messages paired by
`tool_call_id`; reasoning is not sent back (Chat Completions has no field for it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import cast

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.providers._conversation import (
    AssistantTurn,
    Message,
    ModelRequest,
    ToolResults,
    UserTurn,
)
from acp_bridge.providers._modalities import audio_format
from acp_bridge.providers._reasoning import DEFAULT_LEVEL
from acp_bridge.providers._vision import text_only_model
from acp_bridge.providers.http._fragments import (
    Element,
    FragmentCache,
    Fragments,
    dumps,
    encode_body,
)
from acp_bridge.providers.http._media import OPENAI_MEDIA, taken
from acp_bridge.providers.http._openai_stream import OpenAIStreamDecoder
from acp_bridge.providers.http._options import HttpProviderOptions
from acp_bridge.providers.http._provider import HttpModelProvider
from acp_bridge.providers.http._schemas import for_openai
from acp_bridge.providers.http._transport import StreamDecoder, WireRequest

__all__ = [
    "OpenAIProvider",
    "encode_chat_completions",
    "encode_message",
    "render_chat_completions",
]


class OpenAIProvider(HttpModelProvider):
    """OpenAI Chat Completions (`stream: true`) and every server that speaks it."""

    PROVIDER = "openai"
    DEFAULT_BASE_URL = "https://api.openai.com/v1"

    def render(self, request: ModelRequest, model: str) -> WireRequest:
        headers: dict[str, str] = {}
        if self._options.api_key:
            headers["authorization"] = f"Bearer {self._options.api_key}"
        return WireRequest(
            url=self.endpoint("/chat/completions"),
            content=encode_chat_completions(request, model, self._options, self.fragments),
            headers=headers,
        )

    def encode_message(self, message: Message) -> bytes:
        return encode_message(message)

    def decoder(self, model: str) -> StreamDecoder:
        return OpenAIStreamDecoder(
            model=model, provider=self.PROVIDER, secret=self._options.api_key
        )


def render_chat_completions(
    request: ModelRequest, model: str, options: HttpProviderOptions
) -> JsonObject:
    """The JSON body of a streaming Chat Completions request."""
    messages: list[JsonValue] = []
    if request.system:
        messages.append(_system(request.system))
    images = not text_only_model(model)
    for message in request.messages:
        messages.extend(_entries(message, images=images))
    return cast(JsonObject, _body(request, model, options, messages))


def encode_chat_completions(
    request: ModelRequest,
    model: str,
    options: HttpProviderOptions,
    cache: FragmentCache[Message],
) -> bytes:
    """`render_chat_completions` encoded, each history message's JSON taken from `cache`."""
    items = [dumps(_system(request.system))] if request.system else []
    text_only = text_only_model(model)

    def fragment(message: Message) -> bytes:
        if text_only and _has_media(message):  # rare: encoded afresh, without the images
            return b",".join(dumps(e) for e in _entries(message, images=False))
        return cache.fragment(message)

    def build(messages: Sequence[Message], start: int) -> list[Element]:
        elements = ((fragment(messages[i]), i) for i in range(start, len(messages)))
        return [element for element in elements if element[0]]

    items += cache.assemble(request.messages, build, text_only)
    return encode_body(_body(request, model, options, Fragments(items)))


def encode_message(message: Message) -> bytes:
    """One history message's entries of `messages`, encoded (comma-separated)."""
    return b",".join(dumps(entry) for entry in _entries(message))


def _system(text: str) -> JsonObject:
    return {"role": "system", "content": text}


def _has_media(message: Message) -> bool:
    return isinstance(message, ToolResults) and any(r.media for r in message.results)


def _entries(message: Message, *, images: bool = True) -> list[JsonObject]:
    if isinstance(message, UserTurn):
        return [{"role": "user", "content": _user_content(message)}]
    if isinstance(message, AssistantTurn):
        return [_assistant(message)]
    if isinstance(message, ToolResults):
        entries: list[JsonObject] = [
            {"role": "tool", "tool_call_id": result.call_id, "content": result.output}
            for result in message.results
        ]
        return entries + _tool_images(message) if images else entries
    return []


def _body(
    request: ModelRequest,
    model: str,
    options: HttpProviderOptions,
    messages: list[JsonValue] | Fragments,
) -> dict[str, JsonValue | Fragments]:
    body: dict[str, JsonValue | Fragments] = {"model": model, "messages": messages, "stream": True}
    if options.include_usage:
        body["stream_options"] = {"include_usage": True}
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": for_openai(tool.parameters),
                },
            }
            for tool in request.tools
        ]
        if request.tool_required:
            body["tool_choice"] = "required"  # UNPARSED-003: the server's grammar holds the call
    if options.max_tokens is not None:
        body["max_tokens"] = options.max_tokens
    if request.reasoning not in (None, DEFAULT_LEVEL):
        body["reasoning_effort"] = request.reasoning  # REASON-002
    return body


def _user_content(turn: UserTurn) -> JsonValue:
    if len(turn.parts) == 1 and not turn.images and not turn.audio:
        return turn.parts[0]
    content: list[JsonValue] = [{"type": "text", "text": part} for part in turn.parts]
    content.extend(
        {"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"}}
        for image in turn.images
    )
    # AUDIO-002: Chat Completions audio input, `format` "wav" or "mp3".
    content.extend(
        {
            "type": "input_audio",
            "input_audio": {"data": clip.data, "format": audio_format(clip.mime_type)},
        }
        for clip in turn.audio
    )
    return content


def _tool_images(message: ToolResults) -> list[JsonObject]:
    """MCP-MEDIA-002: a tool message takes text only, so the images the tools returned follow
    the batch's tool messages as one user message, each result's images under a label."""
    content: list[JsonValue] = []
    for result in message.results:
        images = taken(result.media, OPENAI_MEDIA)
        if not images:
            continue
        label = f"Images returned by the tool call {result.call_id} ({result.name}):"
        content.append({"type": "text", "text": label})
        content.extend(
            {"type": "image_url", "image_url": {"url": f"data:{i.mime_type};base64,{i.data}"}}
            for i in images
        )
    return [{"role": "user", "content": content}] if content else []


def _assistant(turn: AssistantTurn) -> JsonObject:
    entry: JsonObject = {"role": "assistant", "content": turn.text or None}
    if turn.tool_calls:
        entry["tool_calls"] = [
            {
                "id": call.call_id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": json.dumps(call.arguments, ensure_ascii=False),
                },
            }
            for call in turn.tool_calls
        ]
    elif not turn.text:
        entry["content"] = ""
    return entry
