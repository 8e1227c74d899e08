"""How each HTTP provider classifies an HTTP error status (PROV-STATUS-001/002, PROV-RETRY-001).

One parametrized test for the three wire formats: the provider at a loopback server that
answers the request with an error status and that provider's error body; the stream fails
before any event with the kind, retryability and Retry-After the status and body say, and the
transport does not retry on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from loopback_http import Reply, assert_fault, json_reply, stream_at

from acp_bridge.providers import FaultKind, ModelRequest, Phase, UserTurn
from acp_bridge.providers.http import (
    AnthropicProvider,
    GeminiProvider,
    HttpProviderOptions,
    OpenAIProvider,
)

REQUEST = ModelRequest(model="", messages=[UserTurn(("hi",))])

# provider -> (its class, the base path it is served under, a model id)
PROVIDERS: dict[str, tuple[Callable[[HttpProviderOptions], Any], str, str]] = {
    "openai": (OpenAIProvider, "/v1", "gpt-test"),
    "anthropic": (AnthropicProvider, "", "claude-test"),
    "gemini": (GeminiProvider, "/v1beta", "gemini-test"),
}

Case = tuple[Reply, FaultKind, bool, float | None]  # reply, kind, retryable, retry_after

OPENAI: list[Case] = [
    (
        json_reply(
            429,
            {"error": {"message": "slow down", "type": "requests"}},
            [("retry-after-ms", "250"), ("retry-after", "1")],
        ),
        FaultKind.RATE_LIMITED,
        True,
        0.25,
    ),
    (
        json_reply(
            429,
            {
                "error": {
                    "message": "quota",
                    "type": "insufficient_quota",
                    "code": "insufficient_quota",
                }
            },
        ),
        FaultKind.QUOTA_EXHAUSTED,
        False,
        None,
    ),
    (
        json_reply(503, "upstream down", [("retry-after", "3600")]),
        FaultKind.OVERLOADED,
        True,
        3600.0,
    ),
    (
        json_reply(400, {"error": {"message": "bad", "type": "invalid_request_error"}}),
        FaultKind.BAD_REQUEST,
        False,
        None,
    ),
    (
        json_reply(404, {"error": {"message": "no such model"}}),
        FaultKind.NOT_FOUND,
        False,
        None,
    ),
]

ANTHROPIC: list[Case] = [
    (
        json_reply(
            529,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            [("retry-after", "7")],
        ),
        FaultKind.OVERLOADED,
        True,
        7.0,
    ),
    (
        json_reply(
            429,
            {"type": "error", "error": {"type": "rate_limit_error", "message": "x"}},
            [("retry-after-ms", "1500")],
        ),
        FaultKind.RATE_LIMITED,
        True,
        1.5,
    ),
    (
        json_reply(
            500,
            {"type": "error", "error": {"type": "api_error", "message": "x"}},
            [("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")],
        ),
        FaultKind.SERVER_ERROR,
        True,
        0.0,
    ),
    (
        json_reply(
            400,
            {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": "prefill not supported"},
            },
        ),
        FaultKind.BAD_REQUEST,
        False,
        None,
    ),
    (
        json_reply(403, {"type": "error", "error": {"type": "permission_error", "message": "x"}}),
        FaultKind.AUTH_FAILED,
        False,
        None,
    ),
]

GEMINI: list[Case] = [
    (
        json_reply(
            429,
            {
                "error": {
                    "code": 429,
                    "message": "You exceeded your current quota",
                    "status": "RESOURCE_EXHAUSTED",
                    "details": [
                        {
                            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                            "violations": [
                                {"quotaId": "GenerateRequestsPerMinutePerProject-FreeTier"}
                            ],
                        },
                        {
                            "@type": "type.googleapis.com/google.rpc.RetryInfo",
                            "retryDelay": "34.4s",
                        },
                    ],
                }
            },
        ),
        FaultKind.RATE_LIMITED,
        True,
        34.4,
    ),
    (
        json_reply(
            429,
            {
                "error": {
                    "code": 429,
                    "message": "daily",
                    "status": "RESOURCE_EXHAUSTED",
                    "details": [
                        {
                            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                            "violations": [{"quotaId": "GenerateRequestsPerDayPerProject"}],
                        }
                    ],
                }
            },
        ),
        FaultKind.QUOTA_EXHAUSTED,
        False,
        None,
    ),
    (
        json_reply(
            499,
            [
                {
                    "error": {
                        "code": 499,
                        "message": "The operation was cancelled.",
                        "status": "CANCELLED",
                    }
                }
            ],
        ),
        FaultKind.SERVER_ERROR,
        True,
        None,
    ),
    (
        json_reply(
            503, {"error": {"code": 503, "message": "high demand", "status": "UNAVAILABLE"}}
        ),
        FaultKind.OVERLOADED,
        True,
        None,
    ),
    (
        json_reply(400, {"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}}),
        FaultKind.BAD_REQUEST,
        False,
        None,
    ),
]


def _cases() -> list[Any]:
    tables = {"openai": OPENAI, "anthropic": ANTHROPIC, "gemini": GEMINI}
    return [
        pytest.param(name, *case, id=f"{name}-{case[0].status}-{case[1].value}")
        for name, table in tables.items()
        for case in table
    ]


@pytest.mark.anyio
@pytest.mark.requirement("PROV-STATUS-001")
@pytest.mark.requirement("PROV-STATUS-002")
@pytest.mark.requirement("PROV-RETRY-001")
@pytest.mark.parametrize(("provider", "reply", "kind", "retryable", "retry_after"), _cases())
async def test_http_status_classification(
    provider: str, reply: Reply, kind: FaultKind, retryable: bool, retry_after: float | None
) -> None:
    provider_type, base_path, model = PROVIDERS[provider]
    events, error, server = await stream_at(provider_type, base_path, [reply], REQUEST, model=model)
    assert events == []
    assert_fault(
        error,
        kind,
        phase=Phase.CONNECT,
        retryable=retryable,
        status=reply.status,
        retry_after=retry_after,
    )
    assert len(server.requests) == 1  # no transport-level retry
