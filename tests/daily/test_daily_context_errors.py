"""Each provider's own "context length exceeded" answer, classified (COMPACT-001).

The bodies are the providers' real formats (OpenAI, vLLM, DeepSeek, OpenRouter, llama.cpp's
server old and new, Anthropic, Gemini), first without I/O, then through each adapter at a
real loopback HTTP server, before the stream and inside it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from loopback_http import LoopbackServer, drain, json_reply, sse, sse_reply

from acp_bridge.providers import FaultKind, ModelRequest, ModelStreamError, UserTurn
from acp_bridge.providers.http import (
    AnthropicProvider,
    GeminiProvider,
    HttpProviderOptions,
    OpenAIProvider,
    error_from_payload,
    error_from_status,
)
from acp_bridge.turn import RetryPolicy

OPENAI = {
    "error": {
        "message": "This model's maximum context length is 8192 tokens. However, your messages "
        "resulted in 8227 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
VLLM = {
    "object": "error",
    "message": "This model's maximum context length is 8192 tokens. However, you requested "
    "8203 tokens (7691 in the messages, 512 in the completion). Please reduce the length of "
    "the messages or completion.",
    "type": "BadRequestError",
    "param": None,
    "code": 400,
}
DEEPSEEK = {
    "error": {
        "message": "This model's maximum context length is 131072 tokens. However, you "
        "requested 131134 tokens (122942 in the messages, 8192 in the completion). Please "
        "reduce the length of the messages or completion.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_request_error",
    }
}
OPENROUTER = {
    "error": {
        "message": "This endpoint's maximum context length is 4096 tokens. However, you "
        "requested about 5000 tokens (5000 of text input). Please reduce the length of either "
        'one, or use the "middle-out" transform to compress your prompt automatically.',
        "code": 400,
    }
}
LLAMA_CPP = {
    "error": {
        "code": 400,
        "message": "the request exceeds the available context size. try increasing the "
        "context size or enable context shift",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 14429,
        "n_ctx": 8192,
    }
}
LLAMA_CPP_NEWER = {
    "error": {
        "code": 400,
        "message": "request (4390 tokens) exceeds the available context size (4096 tokens), "
        "try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 4390,
        "n_ctx": 4096,
    }
}
LLAMA_CPP_OLD = {
    "error": {"code": 500, "message": "Context size has been exceeded.", "type": "server_error"}
}
ANTHROPIC = {
    "type": "error",
    "error": {
        "type": "invalid_request_error",
        "message": "prompt is too long: 208656 tokens > 200000 maximum",
    },
}
GEMINI = {
    "error": {
        "code": 400,
        "message": "The input token count (1200293) exceeds the maximum number of tokens "
        "allowed (1048576).",
        "errors": [
            {
                "message": "The input token count (1200293) exceeds the maximum number of "
                "tokens allowed (1048576).",
                "domain": "global",
                "reason": "badRequest",
            }
        ],
        "status": "INVALID_ARGUMENT",
    }
}


@pytest.mark.requirement("COMPACT-001")
@pytest.mark.parametrize(
    ("provider", "status", "body", "figures"),
    [
        ("openai", 400, OPENAI, (8227, 8192)),
        ("openai", 400, VLLM, (8203, 8192)),
        ("openai", 400, DEEPSEEK, (131134, 131072)),
        ("openai", 400, OPENROUTER, (5000, 4096)),
        ("openai", 400, LLAMA_CPP, (14429, 8192)),
        ("openai", 400, LLAMA_CPP_NEWER, (4390, 4096)),
        ("openai", 500, LLAMA_CPP_OLD, (None, None)),
        ("anthropic", 400, ANTHROPIC, (208656, 200000)),
        ("gemini", 400, GEMINI, (1200293, 1048576)),
        ("gemini", 400, [GEMINI], (1200293, 1048576)),
    ],
)
def test_each_providers_overflow_is_its_own_final_kind(
    provider: str, status: int, body: Any, figures: tuple[int | None, int | None]
) -> None:
    error = error_from_status(
        provider, status, {"x-should-retry": "true"}, json.dumps(body).encode()
    )
    assert (error.kind, error.retryable, error.status) == (
        FaultKind.CONTEXT_LENGTH_EXCEEDED,
        False,
        status,
    )
    assert error.context == figures
    # Never retried as it is, whatever the server's hints (TURN-009 gives up at once).
    decision = RetryPolicy().decide(error, attempt=1, retries_in_turn=0, random=lambda: 0.5)
    assert (decision.retry, decision.give_up and decision.give_up.value) == (False, "not_retryable")
    # The same object inside a 200 stream means the same.
    in_band = error_from_payload(provider, body)
    assert (in_band.kind, in_band.retryable, in_band.context) == (
        FaultKind.CONTEXT_LENGTH_EXCEEDED,
        False,
        figures,
    )


@pytest.mark.requirement("COMPACT-001")
@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, {"error": {"message": "bad", "type": "invalid_request_error"}}),
        (400, {"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}}),
        (
            429,
            {"error": {"message": "prompt is too long for the rate limit"}},
        ),  # not a 4xx/500 it uses
        (503, {"error": {"message": "Context size has been exceeded."}}),
    ],
)
def test_other_errors_are_not_taken_for_an_overflow(status: int, body: Any) -> None:
    error = error_from_status("openai", status, {}, json.dumps(body).encode())
    assert error.kind is not FaultKind.CONTEXT_LENGTH_EXCEEDED
    assert error.context is None


def _provider(kind: str, base_url: str) -> Any:
    options = HttpProviderOptions(base_url=base_url, model="m", api_key="k", idle_timeout=5.0)
    if kind == "openai":
        return OpenAIProvider(options)
    if kind == "anthropic":
        return AnthropicProvider(options)
    return GeminiProvider(
        HttpProviderOptions(base_url=f"{base_url}/v1beta", model="m", api_key="k", idle_timeout=5.0)
    )


@pytest.mark.anyio
@pytest.mark.requirement("COMPACT-001")
@pytest.mark.parametrize(
    ("kind", "body"),
    [("openai", OPENAI), ("openai", LLAMA_CPP), ("anthropic", ANTHROPIC), ("gemini", [GEMINI])],
)
async def test_adapters_at_a_loopback_server_raise_the_overflow(kind: str, body: Any) -> None:
    request = ModelRequest(model="m", messages=[UserTurn(("hi",))])
    async with LoopbackServer([json_reply(400, body)]) as server:
        provider = _provider(kind, server.base_url)
        async with provider:
            events, error = await drain(provider.stream(request))
    assert isinstance(error, ModelStreamError)
    assert (error.kind, error.retryable, error.status) == (
        FaultKind.CONTEXT_LENGTH_EXCEEDED,
        False,
        400,
    )
    assert error.context is not None
    assert error.context[1] is not None
    assert events == []


@pytest.mark.anyio
@pytest.mark.requirement("COMPACT-001")
async def test_an_overflow_inside_an_anthropic_stream() -> None:
    request = ModelRequest(model="m", messages=[UserTurn(("hi",))])
    async with LoopbackServer([sse_reply(sse(ANTHROPIC, event="error"))]) as server:
        provider = _provider("anthropic", server.base_url)
        async with provider:
            _, error = await drain(provider.stream(request))
    assert isinstance(error, ModelStreamError)
    assert (error.kind, error.context) == (FaultKind.CONTEXT_LENGTH_EXCEEDED, (208656, 200000))
