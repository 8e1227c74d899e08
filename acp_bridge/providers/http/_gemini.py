"""`GeminiProvider`: `models/{model}:streamGenerateContent?alt=sse` on the Gemini API.

`base_url` includes the version (`https://generativelanguage.googleapis.com/v1beta`); the
key goes in `x-goog-api-key`, never in the URL. History keeps what Gemini validates in a
tool loop: each `functionCall` part goes back with its `thoughtSignature`
(`ToolCall.provider_meta["thought_signature"]`), thoughts as `thought: true` parts with
their signatures, and results as `functionResponse` parts (`{"output": ...}` or
`{"error": ...}`), with the call's id only when Gemini gave one. Tool schemas are sent as
`parametersJsonSchema`, i.e. plain JSON Schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.providers._conversation import (
    AssistantTurn,
    Message,
    ModelRequest,
    ToolCall,
    ToolResults,
    UserTurn,
)
from acp_bridge.providers._reasoning import thinking_budget
from acp_bridge.providers.http._gemini_stream import GeminiStreamDecoder
from acp_bridge.providers.http._options import HttpProviderOptions
from acp_bridge.providers.http._provider import HttpModelProvider
from acp_bridge.providers.http._transport import StreamDecoder, WireRequest

__all__ = ["GeminiProvider", "render_generate_content"]


class GeminiProvider(HttpModelProvider):
    """Google Gemini API streaming with `alt=sse`."""

    PROVIDER = "gemini"
    DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"

    def render(self, request: ModelRequest, model: str) -> WireRequest:
        headers: dict[str, str] = {}
        if self._options.api_key:
            headers["x-goog-api-key"] = self._options.api_key
        name = quote(model.removeprefix("models/"), safe="-._")
        return WireRequest(
            url=self.endpoint(f"/models/{name}:streamGenerateContent", {"alt": "sse"}),
            body=render_generate_content(request, self._options),
            headers=headers,
        )

    def decoder(self, model: str) -> StreamDecoder:
        return GeminiStreamDecoder(
            model=model, provider=self.PROVIDER, secret=self._options.api_key
        )


def render_generate_content(request: ModelRequest, options: HttpProviderOptions) -> JsonObject:
    """The JSON body of a `streamGenerateContent` request."""
    calls = _calls_by_id(request.messages)
    contents: list[tuple[str, list[JsonValue]]] = []
    for message in request.messages:
        if isinstance(message, UserTurn):
            user: list[JsonValue] = [{"text": part} for part in message.parts if part]
            user.extend(
                {"inlineData": {"mimeType": image.mime_type, "data": image.data}}
                for image in message.images
            )
            _append(contents, "user", user)
        elif isinstance(message, AssistantTurn):
            _append(contents, "model", _model_parts(message))
        elif isinstance(message, ToolResults):
            parts: list[JsonValue] = []
            for result in message.results:
                response: JsonObject = {
                    "name": result.name,
                    "response": {"error" if result.is_error else "output": result.output},
                }
                call = calls.get(result.call_id)
                if call is not None and not call.provider_meta.get("synthesized_id"):
                    response["id"] = result.call_id
                parts.append({"functionResponse": response})
            _append(contents, "user", parts)
    body: JsonObject = {"contents": [{"role": role, "parts": parts} for role, parts in contents]}
    if request.system:
        body["systemInstruction"] = {"parts": [{"text": request.system}]}
    if request.tools:
        body["tools"] = [
            {
                "functionDeclarations": [
                    {
                        "name": tool.name,
                        "description": tool.description,
                        "parametersJsonSchema": tool.parameters,
                    }
                    for tool in request.tools
                ]
            }
        ]
    config: JsonObject = {}
    if options.max_tokens is not None:
        config["maxOutputTokens"] = options.max_tokens
    budget = thinking_budget(request.reasoning, options.thinking_budget)  # REASON-002
    if budget:
        config["thinkingConfig"] = {"includeThoughts": True, "thinkingBudget": budget}
    if config:
        body["generationConfig"] = config
    return body


def _calls_by_id(messages: Sequence[Message]) -> dict[str, ToolCall]:
    found: dict[str, ToolCall] = {}
    for message in messages:
        if isinstance(message, AssistantTurn):
            found.update((call.call_id, call) for call in message.tool_calls)
    return found


def _append(contents: list[tuple[str, list[JsonValue]]], role: str, parts: list[JsonValue]) -> None:
    if not parts:
        return
    if contents and contents[-1][0] == role:
        contents[-1][1].extend(parts)
    else:
        contents.append((role, parts))


def _model_parts(turn: AssistantTurn) -> list[JsonValue]:
    parts: list[JsonValue] = []
    trailing: list[JsonValue] = []
    for thought in turn.thoughts:
        if thought.text:
            part: JsonObject = {"text": thought.text, "thought": True}
            if thought.signature:
                part["thoughtSignature"] = thought.signature
            parts.append(part)
        elif thought.signature:
            # A signature that arrived on an empty part after the answer goes back there.
            trailing.append({"text": "", "thoughtSignature": thought.signature})
    if turn.text:
        parts.append({"text": turn.text})
    parts.extend(trailing)
    for call in turn.tool_calls:
        function: JsonObject = {"name": call.name, "args": call.arguments}
        if not call.provider_meta.get("synthesized_id"):
            function["id"] = call.call_id
        call_part: JsonObject = {"functionCall": function}
        signature = call.provider_meta.get("thought_signature")
        if isinstance(signature, str):
            call_part["thoughtSignature"] = signature
        parts.append(call_part)
    return parts
