"""A `--base-url` with a query or userinfo: joined right, never shown unredacted (issue 11.6)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from loopback_http import LoopbackServer, drain, sse, sse_reply

from acp_bridge.providers import ModelRequest, UserTurn
from acp_bridge.providers.http import (
    AnthropicProvider,
    GeminiProvider,
    HttpProviderOptions,
    OpenAIProvider,
)
from acp_bridge.providers.http._urls import endpoint, redact_url

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(model="", messages=[UserTurn(("hi",))])
OPENAI_DONE = (
    sse({"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": "ok"}}]}),
    sse({"id": "c", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    "data: [DONE]\n\n",
)


@pytest.mark.requirement("ROBUST-URL-001")
def test_the_endpoint_path_is_joined_before_the_query() -> None:
    assert endpoint("http://h/v1?api_key=X", "/chat/completions") == (
        "http://h/v1/chat/completions?api_key=X"
    )
    assert endpoint("http://h/v1/?v=1", "/models/m:stream", {"alt": "sse"}) == (
        "http://h/v1/models/m:stream?v=1&alt=sse"
    )


@pytest.mark.requirement("ROBUST-URL-001")
@pytest.mark.parametrize(
    ("provider", "path"),
    [
        (OpenAIProvider, "/v1/chat/completions"),
        (AnthropicProvider, "/v1/v1/messages"),
        (GeminiProvider, "/v1/models/m:streamGenerateContent"),
    ],
)
async def test_each_provider_keeps_the_base_query_on_the_wire(provider: Any, path: str) -> None:
    async with LoopbackServer([sse_reply(*OPENAI_DONE)]) as server:
        base = f"{server.base_url}/v1?api-version=2024-06-01&key=SECRET123"
        async with provider(HttpProviderOptions("m", base_url=base)) as model:
            await drain(model.stream(REQUEST))
    (received,) = server.requests
    target, _, query = received.path.partition("?")
    assert target == path
    assert "api-version=2024-06-01" in query
    assert "key=SECRET123" in query


@pytest.mark.requirement("ROBUST-URL-002")
def test_urls_are_shown_without_userinfo_or_query_values() -> None:
    shown = redact_url("http://user:pass@h:8/v1/chat/completions?api_key=X&b=2&b=3")
    assert shown == "http://h:8/v1/chat/completions?api_key=[redacted]&b=[redacted]"
    assert redact_url("http://h/v1") == "http://h/v1"


@pytest.mark.requirement("ROBUST-URL-002")
async def test_trace_and_log_never_show_the_query_secret_or_the_password(
    caplog: pytest.LogCaptureFixture,
) -> None:
    records: list[dict[str, Any]] = []
    caplog.set_level(logging.DEBUG)
    async with LoopbackServer([sse_reply(*OPENAI_DONE)]) as server:
        base = server.base_url.replace("http://", "http://alice:hunter2@") + "/v1?api_key=SECRET123"
        options = HttpProviderOptions("m", base_url=base, trace=records.append)
        async with OpenAIProvider(options) as model:
            await drain(model.stream(REQUEST))
    (request,) = [r for r in records if r["type"] == "provider_request"]
    assert request["url"].endswith("/v1/chat/completions?api_key=[redacted]")
    shown = caplog.text + repr(records)
    assert "SECRET123" not in shown
    assert "hunter2" not in shown
    assert "alice" not in shown
    assert "HTTP Request" in caplog.text  # httpx's own INFO line is there, redacted
