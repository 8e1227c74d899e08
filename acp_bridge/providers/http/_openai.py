"""`OpenAIProvider`: Chat Completions streaming, for OpenAI and compatible local servers.

`base_url` includes the version (`https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`);
requests go to `{base_url}/chat/completions`. With no API key no auth header is sent, so
Ollama, llama.cpp, vLLM and LM Studio work as they are. History renders tool calls as
`tool_calls` with their ids and tool results as `role: "tool"` messages paired by
`tool_call_id`; reasoning is not sent back (Chat Completions has no field for it).
"""

from __future__ import annotations

import json

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.providers._conversation import (
    AssistantTurn,
    ModelRequest,
    ToolResults,
    UserTurn,
)
from acp_bridge.providers._reasoning import DEFAULT_LEVEL
from acp_bridge.providers.http._openai_stream import OpenAIStreamDecoder
from acp_bridge.providers.http._options import HttpProviderOptions
from acp_bridge.providers.http._provider import HttpModelProvider
from acp_bridge.providers.http._transport import StreamDecoder, WireRequest

__all__ = ["OpenAIProvider", "render_chat_completions"]


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
            body=render_chat_completions(request, model, self._options),
            headers=headers,
        )

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
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        if isinstance(message, UserTurn):
            messages.append({"role": "user", "content": _user_content(message)})
        elif isinstance(message, AssistantTurn):
            messages.append(_assistant(message))
        elif isinstance(message, ToolResults):
            messages.extend(
                {"role": "tool", "tool_call_id": result.call_id, "content": result.output}
                for result in message.results
            )
    body: JsonObject = {"model": model, "messages": messages, "stream": True}
    if options.include_usage:
        body["stream_options"] = {"include_usage": True}
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                },
            }
            for tool in request.tools
        ]
    if options.max_tokens is not None:
        body["max_tokens"] = options.max_tokens
    if request.reasoning not in (None, DEFAULT_LEVEL):
        body["reasoning_effort"] = request.reasoning  # REASON-002
    return body


def _user_content(turn: UserTurn) -> JsonValue:
    if len(turn.parts) == 1 and not turn.images:
        return turn.parts[0]
    content: list[JsonValue] = [{"type": "text", "text": part} for part in turn.parts]
    content.extend(
        {"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"}}
        for image in turn.images
    )
    return content


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
