"""Which timeout bounds a read (14.6): until the first token the first-token timeout, after
it the idle timeout. Real loopback servers that go silent after their headers."""

from __future__ import annotations

import math
from typing import Any

import anyio
import pytest
from loopback_http import Pause, Step, WaitFor, assert_fault, sse, sse_reply, stream_at

from acp_bridge.providers import (
    FaultKind,
    Finish,
    FinishReason,
    ModelRequest,
    StreamEvent,
    StreamStart,
    TextDelta,
    UserTurn,
)
from acp_bridge.providers.http import OpenAIProvider
from acp_bridge.providers.http._read_timeout import SwitchedReadTimeout

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


async def stalled(*steps: Step, **timeouts: float | None) -> tuple[list[StreamEvent], Any]:
    """One OpenAI-compatible request at a server that plays `steps` and then says nothing
    until the client gives up: its events and its error."""
    release = anyio.Event()
    reply = sse_reply(ROLE, *steps, WaitFor(release))
    try:
        events, error, _ = await stream_at(
            OpenAIProvider, "/v1", [reply], REQUEST, model="m", **timeouts
        )
    finally:
        release.set()
    return events, error


@pytest.mark.requirement("TIMEOUT-001")
async def test_after_the_first_token_the_idle_timeout_bounds_each_read() -> None:
    events, error = await stalled(
        PROCESSING, delta("Hel"), idle_timeout=IDLE, first_token_timeout=30.0
    )
    assert events[1:] == [TextDelta("Hel")]
    assert_fault(error, FaultKind.IDLE_TIMEOUT)
    assert "no data from 127.0.0.1:" in error.message
    assert error.message.endswith(f"for {IDLE:g} s")


@pytest.mark.requirement("TIMEOUT-001")
@pytest.mark.parametrize(
    ("timeouts", "kind"),
    [
        # A first-token timeout below the idle timeout still fires first.
        ({"idle_timeout": 30.0, "first_token_timeout": 0.5}, FaultKind.FIRST_TOKEN_TIMEOUT),
        # Without a first-token timeout, the idle timeout bounds the wait for the first token.
        ({"idle_timeout": IDLE, "first_token_timeout": None}, FaultKind.IDLE_TIMEOUT),
    ],
)
async def test_the_wait_for_the_first_token_ends_with(
    timeouts: dict[str, float | None], kind: FaultKind
) -> None:
    events, error = await stalled(**timeouts)
    assert events == [START]
    assert_fault(error, kind)


@pytest.mark.requirement("TIMEOUT-001")
def test_the_read_timeout_counts_only_after_the_first_token() -> None:
    timeout = SwitchedReadTimeout(IDLE)
    assert float(timeout) == IDLE  # a plain use of the number: the idle timeout
    assert 100.0 + timeout == math.inf  # httpcore's deadline: `current_time() + timeout`
    assert timeout + 100.0 == math.inf
    timeout.first_token()
    assert 100.0 + timeout == 100.0 + IDLE
    assert timeout + 100.0 == 100.0 + IDLE
