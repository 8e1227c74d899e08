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

import functools
from collections.abc import Mapping, Sequence
from typing import cast
from urllib.parse import quote

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.providers._conversation import (
    AssistantTurn,
    MediaPart,
    Message,
    ModelRequest,
    ToolCall,
    ToolResults,
    UserTurn,
)
from acp_bridge.providers._reasoning import thinking_budget
from acp_bridge.providers.http._fragments import (
    Element,
    FragmentCache,
    Fragments,
    dumps,
    encode_body,
    grouped,
)
from acp_bridge.providers.http._gemini_stream import GeminiStreamDecoder
from acp_bridge.providers.http._media import GEMINI_AUDIO, GEMINI_MEDIA, taken
from acp_bridge.providers.http._options import HttpProviderOptions
from acp_bridge.providers.http._provider import HttpModelProvider
from acp_bridge.providers.http._schemas import for_gemini
from acp_bridge.providers.http._transport import StreamDecoder, WireRequest

__all__ = [
    "GeminiProvider",
    "encode_generate_content",
    "encode_message",
    "render_generate_content",
]


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
            content=encode_generate_content(request, self._options, self.fragments),
            headers=headers,
        )

    def encode_message(self, message: Message) -> bytes:
        return encode_message(message)

    def decoder(self, model: str) -> StreamDecoder:
        return GeminiStreamDecoder(
            model=model, provider=self.PROVIDER, secret=self._options.api_key
        )


def render_generate_content(request: ModelRequest, options: HttpProviderOptions) -> JsonObject:
    """The JSON body of a `streamGenerateContent` request."""
    calls = _calls_by_id(request.messages)
    contents: list[tuple[str, list[JsonValue]]] = []
    for message in request.messages:
        _append(contents, _role(message), _parts(message, _with_ids(message, calls)))
    body: list[JsonValue] = [{"role": role, "parts": parts} for role, parts in contents]
    return cast(JsonObject, _body(request, options, body))


def encode_generate_content(
    request: ModelRequest, options: HttpProviderOptions, cache: FragmentCache[Message]
) -> bytes:
    """`render_generate_content` encoded, each history message's parts taken from `cache`
    (function responses keyed also by which of their calls had an id of Gemini's)."""
    calls = _calls_by_id(request.messages)

    def entry(index: int, message: Message) -> tuple[int, str, bytes]:
        if isinstance(message, ToolResults):
            ids = _with_ids(message, calls)
            fragment = cache.fragment(message, ids, functools.partial(_encoded, ids=ids))
        else:
            fragment = cache.fragment(message)
        return index, _role(message), fragment

    def build(messages: Sequence[Message], start: int) -> list[Element]:
        entries = (entry(i, messages[i]) for i in range(start, len(messages)))
        return grouped(entries, b',"parts":[', b"]}")

    # A function response's form depends on every call of the request (`_with_ids`), so
    # reused elements are only those made with the same calls.
    context = tuple((i, bool(c.provider_meta.get("synthesized_id"))) for i, c in calls.items())
    contents = Fragments(cache.assemble(request.messages, build, context))
    return encode_body(_body(request, options, contents))


def encode_message(message: Message) -> bytes:
    """One history message's parts, encoded (function responses as if their calls had ids)."""
    return _encoded(message, None)


def _encoded(message: Message, ids: tuple[bool, ...] | None) -> bytes:
    return b",".join(dumps(part) for part in _parts(message, ids))


def _role(message: Message) -> str:
    return "model" if isinstance(message, AssistantTurn) else "user"


def _with_ids(message: Message, calls: Mapping[str, ToolCall]) -> tuple[bool, ...] | None:
    """Per function response: whether it names its call's id (Gemini gave the call one)."""
    if not isinstance(message, ToolResults):
        return None
    return tuple(
        (call := calls.get(result.call_id)) is not None
        and not call.provider_meta.get("synthesized_id")
        for result in message.results
    )


def _parts(message: Message, ids: tuple[bool, ...] | None) -> list[JsonValue]:
    if isinstance(message, UserTurn):
        user: list[JsonValue] = [{"text": part} for part in message.parts if part]
        user.extend(
            {"inlineData": {"mimeType": image.mime_type, "data": image.data}}
            for image in (*message.images, *message.audio)  # AUDIO-002: audio inline too
        )
        return user
    if isinstance(message, AssistantTurn):
        return _model_parts(message)
    if isinstance(message, ToolResults):
        parts: list[JsonValue] = []
        audio: list[JsonValue] = []
        for index, result in enumerate(message.results):
            response: JsonObject = {
                "name": result.name,
                "response": {"error" if result.is_error else "output": result.output},
            }
            if ids is None or ids[index]:
                response["id"] = result.call_id
            # MCP-MEDIA-002: images and PDFs as the response's own parts; audio beside.
            media = taken(result.media, GEMINI_MEDIA)
            if media:
                response["parts"] = [_inline(m) for m in media]
            audio.extend(_inline(m) for m in taken(result.media, GEMINI_AUDIO))
            parts.append({"functionResponse": response})
        return [*parts, *audio]
    return []


def _body(
    request: ModelRequest, options: HttpProviderOptions, contents: list[JsonValue] | Fragments
) -> dict[str, JsonValue | Fragments]:
    body: dict[str, JsonValue | Fragments] = {"contents": contents}
    if request.system:
        body["systemInstruction"] = {"parts": [{"text": request.system}]}
    if request.tools:
        body["tools"] = [
            {
                "functionDeclarations": [
                    {
                        "name": tool.name,
                        "description": tool.description,
                        "parametersJsonSchema": for_gemini(tool.parameters),
                    }
                    for tool in request.tools
                ]
            }
        ]
        if request.tool_required:  # UNPARSED-003
            body["toolConfig"] = {"functionCallingConfig": {"mode": "ANY"}}
    config: JsonObject = {}
    if options.max_tokens is not None:
        config["maxOutputTokens"] = options.max_tokens
    budget = thinking_budget(request.reasoning, options.thinking_budget)  # REASON-002
    if budget:
        config["thinkingConfig"] = {"includeThoughts": True, "thinkingBudget": budget}
    if config:
        body["generationConfig"] = config
    return body


def _inline(part: MediaPart) -> JsonValue:
    return {"inlineData": {"mimeType": part.mime_type, "data": part.data}}


def _calls_by_id(messages: Sequence[Message]) -> dict[str, ToolCall]:
    found: dict[str, ToolCall] = {}
    for message in messages:
        if isinstance(message, AssistantTurn) and message.tool_calls:
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
