"""Which timeout bounds a read (14.6): until the first token the first-token timeout, after
it the idle timeout. Real loopback servers that go silent after their headers."""

from __future__ import annotations

import anyio
import pytest
from loopback_http import Pause, WaitFor, assert_fault, sse, sse_reply, stream_at

from acp_bridge.providers import (
    FaultKind,
    Finish,
    FinishReason,
    ModelRequest,
    StreamStart,
    TextDelta,
    UserTurn,
)
from acp_bridge.providers.http import OpenAIProvider

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(model="", messages=[UserTurn(("hi",))])
IDLE = 0.2
# Five idle timeouts of silence: far past the idle timeout, far below the first-token one.
PROCESSING = Pause(5 * IDLE)


def delta(content: str | None = None, finish: str | None = None) -> str:
    body = {} if content is None else {"content": content}
    choice = {"index": 0, "delta": body, "finish_reason": finish}
    return sse({"id": "c", "model": "m", "choices": [choice]})


START = StreamStart(provider="openai", model="m", request_id="c")
ROLE = sse({"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant"}}]})


@pytest.mark.requirement("TIMEOUT-001")
async def test_silence_before_the_first_token_longer_than_the_idle_timeout_is_waited_out() -> None:
    reply = sse_reply(ROLE, PROCESSING, delta("Hello."), delta(finish="stop"), sse("[DONE]"))
    events, error, server = await stream_at(
        OpenAIProvider,
        "/v1",
        [reply],
        REQUEST,
        model="m",
        idle_timeout=IDLE,
        first_token_timeout=30.0,
    )
    assert error is None  # before the fix: IDLE_TIMEOUT after 0.2 s, "no data from ..."
    assert events[0] == START
    assert TextDelta("Hello.") in events
    assert isinstance(events[-1], Finish)
    assert events[-1].reason is FinishReason.STOP
    assert len(server.requests) == 1


@pytest.mark.requirement("TIMEOUT-001")
async def test_after_the_first_token_the_idle_timeout_bounds_each_read() -> None:
    release = anyio.Event()
    reply = sse_reply(ROLE, PROCESSING, delta("Hel"), WaitFor(release))
    try:
        events, error, _ = await stream_at(
            OpenAIProvider,
            "/v1",
            [reply],
            REQUEST,
            model="m",
            idle_timeout=IDLE,
            first_token_timeout=30.0,
        )
    finally:
        release.set()
    assert events[1:] == [TextDelta("Hel")]
    assert_fault(error, FaultKind.IDLE_TIMEOUT)
    assert error is not None
    assert "no data from 127.0.0.1:" in error.message
    assert error.message.endswith(f"for {IDLE:g} s")


@pytest.mark.requirement("TIMEOUT-001")
async def test_a_first_token_timeout_below_the_idle_timeout_still_fires_first() -> None:
    release = anyio.Event()
    try:
        events, error, _ = await stream_at(
            OpenAIProvider,
            "/v1",
            [sse_reply(ROLE, WaitFor(release))],
            REQUEST,
            model="m",
            idle_timeout=30.0,
            first_token_timeout=0.5,
        )
    finally:
        release.set()
    assert events == [START]
    assert_fault(error, FaultKind.FIRST_TOKEN_TIMEOUT)


@pytest.mark.requirement("TIMEOUT-001")
async def test_without_a_first_token_timeout_the_idle_timeout_bounds_the_wait() -> None:
    release = anyio.Event()
    try:
        events, error, _ = await stream_at(
            OpenAIProvider,
            "/v1",
            [sse_reply(ROLE, WaitFor(release))],
            REQUEST,
            model="m",
            idle_timeout=IDLE,
            first_token_timeout=None,
        )
    finally:
        release.set()
    assert events == [START]
    assert_fault(error, FaultKind.IDLE_TIMEOUT)
