"""A fake model with a small context window, behind a real loopback HTTP server.

`WindowedModel` answers each request in its provider's own wire format (OpenAI-compatible
chat completions, Anthropic messages, Gemini streamGenerateContent), counts a request's
tokens as its body's length / 4, and answers a request over its window with that provider's
real "context length exceeded" error (HTTP 400). A summary request (the bridge's
summarisation system prompt) gets a short summary; other prompts alternate between a
`read_file` call followed by an answer, and a plain answer. Every request body is kept, so a
test can check that each one was paired and fitted the window. Each connection serves one
request and closes; nothing sleeps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

__all__ = ["WindowedModel", "overflow_error", "paired", "provider_for", "system_text"]

ANSWER = (
    "Here is what I found. The notes describe the project's layout, its tests and how the "
    "pieces fit together; nothing in them needs changing for this question. "
)


def provider_for(kind: str, base_url: str) -> Any:
    """The bridge's real provider of that kind, talking to `base_url`."""
    from acp_bridge.providers.http import (
        AnthropicProvider,
        GeminiProvider,
        HttpProviderOptions,
        OpenAIProvider,
    )

    options = HttpProviderOptions("m", base_url=base_url, api_key="k", idle_timeout=30.0)
    if kind in ("openai", "llama.cpp"):
        return OpenAIProvider(options)
    if kind == "anthropic":
        return AnthropicProvider(options)
    return GeminiProvider(options)


def overflow_error(kind: str, tokens: int, window: int) -> Any:
    """That provider's real error body for a prompt of `tokens` over `window`."""
    if kind == "openai":
        return {
            "error": {
                "message": f"This model's maximum context length is {window} tokens. However, "
                f"your messages resulted in {tokens} tokens. Please reduce the length of the "
                "messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        }
    if kind == "llama.cpp":
        return {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size. try increasing "
                "the context size or enable context shift",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": tokens,
                "n_ctx": window,
            }
        }
    if kind == "anthropic":
        return {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": f"prompt is too long: {tokens} tokens > {window} maximum",
            },
        }
    return [
        {
            "error": {
                "code": 400,
                "message": f"The input token count ({tokens}) exceeds the maximum number of "
                f"tokens allowed ({window}).",
                "status": "INVALID_ARGUMENT",
            }
        }
    ]


def system_text(kind: str, body: dict[str, Any]) -> str:
    if kind in ("openai", "llama.cpp"):
        first = body["messages"][0]
        return str(first["content"]) if first["role"] == "system" else ""
    if kind == "anthropic":
        system = body.get("system", "")
        return system if isinstance(system, str) else "".join(b["text"] for b in system)
    parts = body.get("systemInstruction", {}).get("parts", [])
    return "".join(p.get("text", "") for p in parts)


def paired(kind: str, body: dict[str, Any]) -> None:
    """Asserts that every tool call of the request is answered right after it, 1:1."""
    if kind in ("openai", "llama.cpp"):
        messages = body["messages"]
        for i, message in enumerate(messages):
            if message["role"] == "tool":
                previous = [m for m in messages[:i] if m["role"] != "tool"][-1]
                ids = [c["id"] for c in previous.get("tool_calls") or ()]
                assert message["tool_call_id"] in ids, f"unpaired tool message {message}"
            calls = message.get("tool_calls") or ()
            if calls:
                answers = [m["tool_call_id"] for m in messages[i + 1 : i + 1 + len(calls)]]
                assert answers == [c["id"] for c in calls], f"unanswered calls in {message}"
        return
    if kind == "anthropic":
        messages = body["messages"]
        assert messages[0]["role"] == "user"
        for i, message in enumerate(messages):
            blocks = message["content"] if isinstance(message["content"], list) else []
            uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            results = [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]
            if results:
                before = messages[i - 1]["content"]
                assert [b["id"] for b in before if b.get("type") == "tool_use"] == results
            if uses:
                after = messages[i + 1]["content"]
                assert [b["tool_use_id"] for b in after if b.get("type") == "tool_result"] == uses
        return
    contents = body["contents"]
    assert contents[0]["role"] == "user"
    for i, content in enumerate(contents):
        calls = [p["functionCall"]["name"] for p in content["parts"] if "functionCall" in p]
        answers = [
            p["functionResponse"]["name"] for p in content["parts"] if "functionResponse" in p
        ]
        if answers:
            before = contents[i - 1]["parts"]
            assert [p["functionCall"]["name"] for p in before if "functionCall" in p] == answers
        if calls:
            after = contents[i + 1]["parts"]
            assert [
                p["functionResponse"]["name"] for p in after if "functionResponse" in p
            ] == calls


@dataclass
class WindowedModel:
    """The fake model's server. `kind`: openai, llama.cpp (OpenAI-compatible wire, llama.cpp
    errors), anthropic or gemini."""

    kind: str
    window: int
    bodies: list[dict[str, Any]] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    summaries: int = 0
    overflows: int = 0
    port: int = 0
    _prompts: int = 0
    _task_group: anyio.abc.TaskGroup | None = None
    _listener: Any = None

    @property
    def base_url(self) -> str:
        root = f"http://127.0.0.1:{self.port}"
        return f"{root}/v1beta" if self.kind == "gemini" else root

    async def __aenter__(self) -> Self:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(listener.serve, self._serve)
        self._listener = listener
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._task_group is not None
        self._task_group.cancel_scope.cancel()
        await self._task_group.__aexit__(et, e, tb)
        await self._listener.aclose()

    async def _serve(self, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            reader = BufferedByteReceiveStream(stream)
            head = await reader.receive_until(b"\r\n\r\n", 65536)
            lines = head.decode("latin-1").split("\r\n")
            headers = {
                k.strip().lower(): v.strip() for k, v in (x.split(":", 1) for x in lines[1:])
            }
            body = await reader.receive_exactly(int(headers.get("content-length", "0")))
            status, content_type, payload = self._answer(body)
            self.statuses.append(status)
            await stream.send(
                f"HTTP/1.1 {status} {'OK' if status == 200 else 'Bad Request'}\r\n"
                f"content-type: {content_type}\r\ncontent-length: {len(payload)}\r\n"
                "connection: close\r\n\r\n".encode()
                + payload
            )

    def _answer(self, raw: bytes) -> tuple[int, str, bytes]:
        body = json.loads(raw)
        self.bodies.append(body)
        tokens = len(raw) // 4
        if tokens > self.window:
            self.overflows += 1
            error = overflow_error(self.kind, tokens, self.window)
            return 400, "application/json", json.dumps(error).encode()
        if "You write the summary" in system_text(self.kind, body):
            self.summaries += 1
            text = f"Summary {self.summaries}: the user asked questions about notes.txt; "
            text += "the agent read it and answered each one. Nothing is left to do."
            return 200, "text/event-stream", self._stream(tokens, text, None)
        answered_a_call = self._last_is_tool_result(body)
        self._prompts += 0 if answered_a_call else 1
        call = None if answered_a_call or self._prompts % 2 else {"path": "notes.txt"}
        return 200, "text/event-stream", self._stream(tokens, ANSWER, call)

    def _last_is_tool_result(self, body: dict[str, Any]) -> bool:
        if self.kind in ("openai", "llama.cpp"):
            return bool(body["messages"][-1]["role"] == "tool")
        if self.kind == "anthropic":
            content = body["messages"][-1]["content"]
            return isinstance(content, list) and any(
                b.get("type") == "tool_result" for b in content
            )
        return any("functionResponse" in p for p in body["contents"][-1]["parts"])

    def _stream(self, tokens: int, text: str, call: dict[str, Any] | None) -> bytes:
        out = 40
        events: list[str] = []
        if self.kind in ("openai", "llama.cpp"):

            def chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> str:
                choices = (
                    [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
                )
                return _sse({"id": "c1", "model": "m", "choices": choices, **extra})

            events.append(chunk({"role": "assistant", "content": text}))
            if call is not None:
                function = {"name": "read_file", "arguments": json.dumps(call)}
                events.append(
                    chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": f"call_{len(self.bodies)}",
                                    "type": "function",
                                    "function": function,
                                }
                            ]
                        }
                    )
                )
            events.append(chunk({}, "tool_calls" if call else "stop"))
            usage = {
                "prompt_tokens": tokens,
                "completion_tokens": out,
                "total_tokens": tokens + out,
            }
            events.append(chunk(None, usage=usage))
            events.append("data: [DONE]\n\n")
        elif self.kind == "anthropic":
            message = {
                "id": "msg",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [],
                "usage": {"input_tokens": tokens, "output_tokens": 1},
            }
            events.append(_sse({"type": "message_start", "message": message}, "message_start"))
            events.append(
                _sse(
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                    "content_block_start",
                )
            )
            events.append(
                _sse(
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": text},
                    },
                    "content_block_delta",
                )
            )
            events.append(_sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
            if call is not None:
                block = {
                    "type": "tool_use",
                    "id": f"toolu_{len(self.bodies)}",
                    "name": "read_file",
                    "input": {},
                }
                events.append(
                    _sse(
                        {"type": "content_block_start", "index": 1, "content_block": block},
                        "content_block_start",
                    )
                )
                delta = {"type": "input_json_delta", "partial_json": json.dumps(call)}
                events.append(
                    _sse(
                        {"type": "content_block_delta", "index": 1, "delta": delta},
                        "content_block_delta",
                    )
                )
                events.append(
                    _sse({"type": "content_block_stop", "index": 1}, "content_block_stop")
                )
            stop = {"stop_reason": "tool_use" if call else "end_turn", "stop_sequence": None}
            events.append(
                _sse(
                    {"type": "message_delta", "delta": stop, "usage": {"output_tokens": out}},
                    "message_delta",
                )
            )
            events.append(_sse({"type": "message_stop"}, "message_stop"))
        else:
            parts: list[dict[str, Any]] = [{"text": text}]
            if call is not None:
                parts.append({"functionCall": {"name": "read_file", "args": call}})
            usage = {
                "promptTokenCount": tokens,
                "candidatesTokenCount": out,
                "totalTokenCount": tokens + out,
            }
            candidate = {
                "content": {"parts": parts, "role": "model"},
                "finishReason": "STOP",
                "index": 0,
            }
            events.append(
                _sse({"candidates": [candidate], "usageMetadata": usage, "modelVersion": "m"})
            )
        return "".join(events).encode()


def _sse(data: Any, event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n"
