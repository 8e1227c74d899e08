"""Error classification and server-directed waits, without any I/O."""

from __future__ import annotations

import email.utils

import pytest

import acp_bridge.providers.http as http
from acp_bridge.providers import FaultKind, Phase
from acp_bridge.providers.http import (
    error_from_payload,
    error_from_status,
    parse_duration,
    parse_retry_after,
    redact_headers,
)


@pytest.mark.requirement("PROV-STATUS-002")
def test_parse_retry_after() -> None:
    assert parse_retry_after({"Retry-After-Ms": "1500", "Retry-After": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "2.5"}) == 2.5
    assert parse_retry_after({"retry-after": "86400"}) == 86400.0  # uncapped: policy caps
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=now) == 30.0
    assert parse_retry_after({"retry-after": email.utils.formatdate(now - 5)}, now=now) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"retry-after-ms": "-1"}) is None
    assert parse_retry_after({}) is None


def test_parse_duration() -> None:
    assert parse_duration("34.4s") == 34.4
    assert parse_duration("0s") == 0.0
    assert parse_duration("34.4") is None
    assert parse_duration(3) is None


@pytest.mark.requirement("PROV-STATUS-001")
@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [
        (400, FaultKind.BAD_REQUEST, False),
        (401, FaultKind.AUTH_FAILED, False),
        (402, FaultKind.QUOTA_EXHAUSTED, False),
        (403, FaultKind.AUTH_FAILED, False),
        (404, FaultKind.NOT_FOUND, False),
        (408, FaultKind.SERVER_ERROR, True),
        (413, FaultKind.BAD_REQUEST, False),
        (418, FaultKind.PROVIDER_ERROR, False),
        (422, FaultKind.BAD_REQUEST, False),
        (429, FaultKind.RATE_LIMITED, True),
        (499, FaultKind.SERVER_ERROR, True),
        (500, FaultKind.SERVER_ERROR, True),
        (502, FaultKind.SERVER_ERROR, True),
        (503, FaultKind.OVERLOADED, True),
        (504, FaultKind.SERVER_ERROR, True),
        (529, FaultKind.OVERLOADED, True),
    ],
)
def test_status_classification(status: int, kind: FaultKind, retryable: bool) -> None:
    error = error_from_status("openai", status, {}, b"")
    assert (error.kind, error.retryable, error.status, error.phase) == (
        kind,
        retryable,
        status,
        Phase.CONNECT,
    )


def test_status_overrides_and_bodies() -> None:
    billing = error_from_status(
        "anthropic", 400, {}, b'{"type":"error","error":{"type":"billing_error","message":"pay"}}'
    )
    assert (billing.kind, billing.retryable, billing.provider_code) == (
        FaultKind.QUOTA_EXHAUSTED,
        False,
        "billing_error",
    )
    forced = error_from_status("openai", 500, {"x-should-retry": "false"}, b"")
    assert forced.retryable is False
    html = error_from_status("openai", 502, {}, b"<html>\n  Bad   gateway\n</html>")
    assert html.message == "openai answered HTTP 502: <html> Bad gateway </html>"


@pytest.mark.requirement("PROV-SECRET-001")
def test_secrets_are_scrubbed_from_messages() -> None:
    error = error_from_status(
        "openai", 401, {}, b'{"error":{"message":"bad key sk-XYZ"}}', secret="sk-XYZ"
    )
    assert "sk-XYZ" not in error.message
    assert "[redacted]" in error.message
    assert redact_headers(
        {
            "Authorization": "Bearer x",
            "x-api-key": "k",
            "x-goog-api-key": "g",
            "accept": "text/event-stream",
        }
    ) == {
        "Authorization": "[redacted]",
        "x-api-key": "[redacted]",
        "x-goog-api-key": "[redacted]",
        "accept": "text/event-stream",
    }


@pytest.mark.requirement("PROV-INBAND-001")
@pytest.mark.parametrize(
    ("payload", "kind", "retryable", "status"),
    [
        (
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            FaultKind.OVERLOADED,
            True,
            None,
        ),
        (
            {"error": {"code": 503, "status": "UNAVAILABLE", "message": "x"}},
            FaultKind.OVERLOADED,
            True,
            503,
        ),
        (
            {
                "error": {
                    "code": 429,
                    "status": "RESOURCE_EXHAUSTED",
                    "message": "x",
                    "details": [
                        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}
                    ],
                }
            },
            FaultKind.RATE_LIMITED,
            True,
            429,
        ),
        ({"error": {"code": 502, "message": "bad gateway"}}, FaultKind.SERVER_ERROR, True, 502),
        ({"error": "something odd"}, FaultKind.SERVER_ERROR, True, None),
        ({"error": {"type": "insufficient_quota"}}, FaultKind.QUOTA_EXHAUSTED, False, None),
    ],
)
def test_in_band_classification(
    payload: object, kind: FaultKind, retryable: bool, status: int | None
) -> None:
    error = error_from_payload("p", payload)
    assert (error.kind, error.retryable, error.status, error.phase) == (
        kind,
        retryable,
        status,
        Phase.STREAM,
    )


def test_gemini_retry_info_in_band() -> None:
    error = error_from_payload(
        "gemini",
        {
            "error": {
                "code": 429,
                "status": "RESOURCE_EXHAUSTED",
                "details": [
                    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}
                ],
            }
        },
    )
    assert error.retry_after == 2.0


def test_public_surface_is_exact_and_sorted() -> None:
    assert http.__all__ == sorted(http.__all__)
    public = {name for name in dir(http) if not name.startswith("_")}
    assert set(http.__all__) == public
