"""Request bodies from cached per-message JSON (issue 15.2), at a real loopback server.

Each provider sends the bytes `json.dumps` made of its rendered dict before the cache existed
(`render_*`, compact separators, non-ASCII kept), while encoding every history message once:
a later request with the same messages encodes only the new ones, and a history rewritten
with new message objects (compaction, repair) is encoded afresh.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from typing import Any

import pytest
from loopback_http import LoopbackServer, Reply, drain, sse, sse_reply

from acp_bridge._json import JsonObject
from acp_bridge.providers import (
    AssistantTurn,
    ImagePart,
    Message,
    ModelRequest,
    Thought,
    ToolCall,
    ToolResult,
    ToolResults,
    ToolSpec,
    UserTurn,
)
from acp_bridge.providers.http import (
    AnthropicProvider,
    GeminiProvider,
    HttpModelProvider,
    HttpProviderOptions,
    OpenAIProvider,
)
from acp_bridge.providers.http._anthropic import render_messages
from acp_bridge.providers.http._gemini import render_generate_content
from acp_bridge.providers.http._openai import render_chat_completions

pytestmark = pytest.mark.anyio

IMAGE = ImagePart("image/png", "iVBORw0KGgo=")
TOOLS = (
    ToolSpec("read_file", "Reads a file — «quoted»", {"type": "object", "properties": {}}),
    ToolSpec("run", "Runs", {"type": "object", "required": ["cmd"]}),
)


def rich_history() -> list[Message]:
    """Every message shape the adapters render: images, thoughts with signatures and
    redacted data, parallel calls with provider metadata (a synthesized Gemini id), error
    results, an empty text part, non-ASCII text, merged roles."""
    return [
        UserTurn(('héllo ✓ \u2028 "quoted"', ""), (IMAGE,)),
        AssistantTurn(
            "Let me look.",
            thoughts=(
                Thought("thinking…", signature="sig-1"),
                Thought("", redacted_data="REDACTED"),
                Thought("", signature="trailing-sig"),
            ),
            tool_calls=(
                ToolCall("call_1", "read_file", {"path": "a.txt"}, {"thought_signature": "ts"}),
                ToolCall(
                    "g-2", "run", {"cmd": "ls -l", "n": [1, 2.5, None]}, {"synthesized_id": True}
                ),
            ),
        ),
        ToolResults(
            (
                ToolResult("call_1", "read_file", "contents ü"),
                ToolResult("g-2", "run", "exit 1", is_error=True),
            )
        ),
        UserTurn(("and then?",)),
        UserTurn(("a second user message in a row",)),
        AssistantTurn(""),
        AssistantTurn("Done."),
    ]


def _reply(provider: str) -> Reply:
    if provider == "openai":
        return sse_reply(
            sse(
                {
                    "id": "c",
                    "model": "m",
                    "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}],
                }
            ),
            "data: [DONE]\n\n",
        )
    if provider == "anthropic":

        def event(kind: str, **fields: Any) -> str:
            return sse({"type": kind, **fields}, event=kind)

        message = {
            "id": "msg",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [],
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        return sse_reply(
            event("message_start", message=message),
            event("content_block_start", index=0, content_block={"type": "text", "text": ""}),
            event("content_block_delta", index=0, delta={"type": "text_delta", "text": "ok"}),
            event("content_block_stop", index=0),
            event("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 1}),
            event("message_stop"),
        )
    return sse_reply(
        sse(
            {
                "candidates": [
                    {
                        "content": {"parts": [{"text": "ok"}], "role": "model"},
                        "finishReason": "STOP",
                    }
                ],
                "responseId": "r",
            }
        )
    )


PROVIDERS: dict[str, tuple[type[HttpModelProvider], str, Callable[..., JsonObject]]] = {
    "openai": (OpenAIProvider, "/v1", lambda r, o: render_chat_completions(r, "m", o)),
    "anthropic": (AnthropicProvider, "", lambda r, o: render_messages(r, "m", o)),
    "gemini": (GeminiProvider, "/v1beta", render_generate_content),
}


def _before(request: ModelRequest, provider: str, options: HttpProviderOptions) -> bytes:
    """What the transport sent before the cache: the rendered dict, `json.dumps`-ed."""
    body = PROVIDERS[provider][2](request, options)
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


async def _send(
    provider: str, requests: list[ModelRequest], **options: Any
) -> tuple[list[bytes], HttpModelProvider, HttpProviderOptions]:
    cls, path, _ = PROVIDERS[provider]
    async with LoopbackServer([_reply(provider)] * len(requests)) as server:
        opts = HttpProviderOptions(
            model="m", base_url=server.base_url + path, api_key="k", **options
        )
        adapter = cls(opts)
        async with adapter:
            for request in requests:
                events, error = await drain(adapter.stream(request))
                assert error is None
                assert events
        return [r.body for r in server.requests], adapter, opts


@pytest.mark.requirement("PERTURN-001")
@pytest.mark.parametrize("provider", list(PROVIDERS))
@pytest.mark.parametrize("variant", ["plain", "system+tools+options"])
async def test_request_bodies_are_the_bytes_json_dumps_made_of_the_rendered_dict(
    provider: str, variant: str
) -> None:
    history = rich_history()
    extra: dict[str, Any] = {}
    kwargs: dict[str, Any] = {}
    if variant != "plain":
        extra = {"system": "You are terse — ✓.", "tools": TOOLS, "reasoning": "high"}
        kwargs = {"max_tokens": 333}
    first = ModelRequest("m", tuple(history), **extra)
    history += [AssistantTurn("joins the last run"), ToolResults(()), UserTurn(("one more ✓",))]
    second = ModelRequest("m", tuple(history), **extra)
    sent, _, options = await _send(provider, [first, second], **kwargs)
    assert sent == [_before(first, provider, options), _before(second, provider, options)]


@pytest.mark.requirement("PERTURN-001")
@pytest.mark.parametrize("provider", list(PROVIDERS))
async def test_each_history_message_is_encoded_once_per_provider(provider: str) -> None:
    history = rich_history()
    requests = []
    for turn in range(5):
        history += [UserTurn((f"prompt {turn}",)), AssistantTurn(f"answer {turn}")]
        requests.append(ModelRequest("m", tuple(history), system="sys", tools=TOOLS))
    sent, adapter, options = await _send(provider, requests)
    assert sent == [_before(r, provider, options) for r in requests]
    assert adapter.fragments.encoded == len(history)  # not 5 x the history


@pytest.mark.requirement("PERTURN-002")
@pytest.mark.parametrize("provider", list(PROVIDERS))
async def test_a_rewritten_history_is_encoded_afresh_and_old_entries_go_with_it(
    provider: str,
) -> None:
    history = rich_history()
    first = ModelRequest("m", tuple(history))
    # Compaction-like: the same content as new objects, plus a changed summary at the front.
    rewritten: list[Message] = [UserTurn(("summary of what came before",))]
    rewritten += [
        m.__class__(*(getattr(m, f) for f in m.__dataclass_fields__))  # type: ignore[misc]
        for m in history
    ]
    second = ModelRequest("m", tuple(rewritten))
    sent, adapter, options = await _send(provider, [first, second])
    assert sent == [_before(first, provider, options), _before(second, provider, options)]
    assert adapter.fragments.encoded == len(history) + len(rewritten)
    del first, history
    gc.collect()
    assert len(adapter.fragments) == len(rewritten)  # the old messages' entries are gone


@pytest.mark.requirement("PERTURN-002")
async def test_a_gemini_function_response_follows_what_its_call_became() -> None:
    """A function response names its call's id only when the call had one of Gemini's: the
    same `ToolResults` object renders differently when its call is gone, and is re-encoded."""
    call = ToolCall("c-1", "run", {}, {})
    results = ToolResults((ToolResult("c-1", "run", "ok"),))
    prompt = UserTurn(("go",))
    with_call = ModelRequest("m", (prompt, AssistantTurn("", tool_calls=(call,)), results))
    without_call = ModelRequest("m", (prompt, results))
    sent, adapter, options = await _send("gemini", [with_call, without_call])
    assert sent == [_before(with_call, "gemini", options), _before(without_call, "gemini", options)]
    assert b'"id":"c-1"' in sent[0].split(b"functionResponse")[1]
    assert b'"id"' not in sent[1]
    assert adapter.fragments.encoded == 4
