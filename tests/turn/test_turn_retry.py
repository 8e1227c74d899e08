"""The retry policy, the errors a turn fails with, and the non-fault stop reasons."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
from turn.turnkit import (
    FakeProvider,
    IssueRefund,
    RecordingSink,
    RecordingSleep,
    broken,
    finish,
    make_request,
    start,
    text,
    tool_call,
)

from acp_bridge.errors import INTERNAL_ERROR, JsonRpcError, PeerGone
from acp_bridge.providers import (
    AssistantTurn,
    FaultKind,
    FinishReason,
    ModelRequest,
    ModelStreamError,
    Phase,
    StreamEvent,
    TextDelta,
)
from acp_bridge.turn import (
    GiveUp,
    RetryDecision,
    RetryPolicy,
    StopReason,
    TurnFailed,
    run_turn,
)

POLICY = RetryPolicy()


def decide(error: ModelStreamError, attempt: int = 1, retries: int = 0) -> RetryDecision:
    return POLICY.decide(error, attempt=attempt, retries_in_turn=retries, random=lambda: 1.0)


@pytest.mark.requirement("TURN-009")
@pytest.mark.parametrize(
    "kind",
    [
        FaultKind.CONNECTION_FAILED,
        FaultKind.STREAM_INTERRUPTED,
        FaultKind.INCOMPLETE_STREAM,
        FaultKind.MALFORMED_TOOL_CALL,
        FaultKind.OVERLOADED,
        FaultKind.SERVER_ERROR,
        FaultKind.RATE_LIMITED,
        FaultKind.IDLE_TIMEOUT,
    ],
)
def test_transient_faults_are_retried(kind: FaultKind) -> None:
    assert decide(ModelStreamError(kind, "x")).retry


@pytest.mark.requirement("TURN-009")
@pytest.mark.parametrize("status", [408, 429, 499, 500, 502, 503, 504, 529])
def test_transient_statuses_are_retried(status: int) -> None:
    error = ModelStreamError(FaultKind.SERVER_ERROR, "x", status=status, phase=Phase.CONNECT)
    assert decide(error).retry


@pytest.mark.requirement("TURN-009")
@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
def test_client_errors_are_not_retried_even_if_marked_retryable(status: int) -> None:
    error = ModelStreamError(FaultKind.SERVER_ERROR, "x", status=status, retryable=True)
    assert decide(error) == RetryDecision(False, give_up=GiveUp.NOT_RETRYABLE)


@pytest.mark.requirement("TURN-009")
def test_the_adapters_final_verdict_wins_for_quota() -> None:
    error = ModelStreamError(FaultKind.QUOTA_EXHAUSTED, "quota", status=429)
    assert not decide(error).retry
    assert not decide(ModelStreamError(FaultKind.AUTH_FAILED, "key")).retry


@pytest.mark.requirement("TURN-010")
def test_full_jitter_back_off_and_caps() -> None:
    ceilings = [POLICY.backoff(n, lambda: 1.0) for n in range(1, 7)]
    assert ceilings == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert POLICY.backoff(3, lambda: 0.25) == 1.0
    assert POLICY.backoff(1, lambda: 0.0) == 0.0
    error = broken()
    assert decide(error, attempt=3).retry
    assert decide(error, attempt=4) == RetryDecision(False, give_up=GiveUp.ATTEMPTS_EXHAUSTED)
    assert decide(error, retries=8) == RetryDecision(False, give_up=GiveUp.TURN_BUDGET_EXHAUSTED)


@pytest.mark.requirement("TURN-011")
def test_retry_after_is_a_floor_up_to_the_cap() -> None:
    assert decide(broken(FaultKind.RATE_LIMITED, retry_after=5.0)).delay == 5.0
    assert decide(broken(FaultKind.RATE_LIMITED, retry_after=0.1)).delay == 1.0
    assert decide(broken(FaultKind.RATE_LIMITED, retry_after=30.0)).retry
    assert decide(broken(FaultKind.RATE_LIMITED, retry_after=30.5)) == RetryDecision(
        False, give_up=GiveUp.RETRY_AFTER_TOO_LONG
    )


@pytest.mark.anyio
@pytest.mark.requirement("TURN-012")
@pytest.mark.requirement("TURN-013")
@pytest.mark.requirement("RESET-010")
async def test_exhausted_retries_fail_the_turn_with_data() -> None:
    sleep = RecordingSleep()
    provider = FakeProvider(
        *[[start(), *text("par"), broken(FaultKind.SERVER_ERROR, status=503)] for _ in range(4)]
    )
    sink = RecordingSink()
    request = make_request(provider, sink, sleep=sleep)
    with pytest.raises(TurnFailed) as caught:
        await run_turn(request)
    failure = caught.value
    assert isinstance(failure, JsonRpcError)
    assert failure.code == INTERNAL_ERROR == -32603
    assert failure.data == {
        "reason": "server_error",
        "attempts": 4,
        "retryableLater": True,
        "modelCall": 1,
        "giveUp": "attempts_exhausted",
        "status": 503,
    }
    assert "4 time(s)" in failure.message
    assert "later may help" in failure.message
    assert failure.message != "Internal error"
    assert len(provider.requests) == 4
    assert len(sleep.delays) == 3
    # RESET-010: the last marker (reason gave_up) discards attempt 4's text before the error.
    assert [(m.attempt, m.reason) for m in sink.resets()] == [
        (2, "server_error"),
        (3, "server_error"),
        (4, "server_error"),
        (4, "gave_up"),
    ]
    assert request.history == [request.prompt]  # nothing of the failed call is kept


@pytest.mark.anyio
@pytest.mark.requirement("TURN-011")
@pytest.mark.requirement("TURN-012")
async def test_a_long_retry_after_fails_at_once_as_try_later() -> None:
    sleep = RecordingSleep()
    provider = FakeProvider(
        [
            broken(
                FaultKind.RATE_LIMITED,
                status=429,
                retry_after=120.0,
                phase=Phase.CONNECT,
                provider_code="rate_limit_error",
            )
        ]
    )
    with pytest.raises(TurnFailed) as caught:
        await run_turn(make_request(provider, RecordingSink(), sleep=sleep))
    assert caught.value.data == {
        "reason": "rate_limited",
        "attempts": 1,
        "retryableLater": True,
        "modelCall": 1,
        "giveUp": "retry_after_too_long",
        "retryAfterSeconds": 120.0,
        "status": 429,
        "providerCode": "rate_limit_error",
    }
    assert "Try again later" in caught.value.message
    assert sleep.delays == []


@pytest.mark.anyio
@pytest.mark.requirement("TURN-012")
async def test_a_client_error_fails_at_once_and_says_retrying_will_not_help() -> None:
    provider = FakeProvider([broken(FaultKind.AUTH_FAILED, status=401, phase=Phase.CONNECT)])
    with pytest.raises(TurnFailed) as caught:
        await run_turn(make_request(provider, RecordingSink()))
    assert caught.value.data["retryableLater"] is False  # type: ignore[index,call-overload]
    assert caught.value.data["giveUp"] == "not_retryable"  # type: ignore[index,call-overload]
    assert "will not help" in caught.value.message


@pytest.mark.anyio
@pytest.mark.requirement("TURN-010")
async def test_the_per_turn_retry_budget_spans_model_calls() -> None:
    policy = RetryPolicy(max_retries_per_turn=2)
    refund = IssueRefund()
    provider = FakeProvider(
        [start(), *text("a"), broken()],
        [
            start(),
            *tool_call("c1", "issue_refund", {"order_id": "A"}),
            finish(FinishReason.TOOL_CALLS),
        ],
        [start(), *text("b"), broken()],
        [start(), *text("b"), broken()],
    )
    with pytest.raises(TurnFailed) as caught:
        await run_turn(make_request(provider, RecordingSink(), [refund], policy=policy))
    assert caught.value.data["giveUp"] == "turn_budget_exhausted"  # type: ignore[index,call-overload]
    assert caught.value.data["modelCall"] == 2  # type: ignore[index,call-overload]
    assert len(refund.executions) == 1


@pytest.mark.anyio
@pytest.mark.requirement("TURN-009")
async def test_a_content_filter_finish_is_surfaced_not_retried() -> None:
    refund = IssueRefund()
    provider = FakeProvider(
        [
            start(),
            *text("I can't"),
            *tool_call("c1", "issue_refund", {"order_id": "A"}),
            finish(FinishReason.CONTENT_FILTER),
        ]
    )
    request = make_request(provider, RecordingSink(), [refund])
    result = await run_turn(request)
    assert result.stop_reason is StopReason.REFUSAL
    assert refund.executions == []
    assert len(provider.requests) == 1
    assert request.history[-1] == AssistantTurn("I can't")  # no unpaired call kept


@pytest.mark.anyio
@pytest.mark.requirement("TURN-009")
async def test_a_content_filter_finish_is_retried_when_configured() -> None:
    provider = FakeProvider(
        [start(), *text("I can't"), finish(FinishReason.REFUSAL)],
        [start(), *text("Here it is."), finish()],
    )
    sink = RecordingSink()
    result = await run_turn(
        make_request(provider, sink, policy=RetryPolicy(content_filter_retries=1))
    )
    assert result.stop_reason is StopReason.END_TURN
    assert [(m.attempt, m.reason) for m in sink.resets()] == [(2, "content_filtered")]
    assert result.attempts[0].reason == "content_filtered"


@pytest.mark.anyio
async def test_max_tokens_ends_the_turn_without_running_calls() -> None:
    refund = IssueRefund()
    provider = FakeProvider(
        [
            start(),
            *text("Long"),
            *tool_call("c1", "issue_refund", {"order_id": "A"}),
            finish(FinishReason.LENGTH),
        ]
    )
    request = make_request(provider, RecordingSink(), [refund])
    result = await run_turn(request)
    assert result.stop_reason is StopReason.MAX_TOKENS
    assert refund.executions == []
    assert request.history[-1] == AssistantTurn("Long")


@pytest.mark.anyio
@pytest.mark.requirement("TURN-016")
async def test_the_tool_loop_stops_at_max_model_calls() -> None:
    refund = IssueRefund()
    provider = FakeProvider(
        *[
            [
                start(),
                *tool_call(f"c{n}", "issue_refund", {"order_id": str(n)}),
                finish(FinishReason.TOOL_CALLS),
            ]
            for n in range(2)
        ]
    )
    sink = RecordingSink(["allow-always"])
    request = make_request(provider, sink, [refund], max_model_calls=2)
    result = await run_turn(request)
    assert result.stop_reason is StopReason.MAX_TURN_REQUESTS
    assert result.model_calls == 2
    assert len(refund.executions) == 2


class LeakyProvider:
    """An adapter that breaks its contract by leaking a raw exception."""

    name = "leaky"
    model = "m"

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        yield TextDelta("x")
        raise OSError("socket went away")


@pytest.mark.anyio
@pytest.mark.requirement("TURN-012")
async def test_a_provider_bug_becomes_a_clear_failure() -> None:
    request = replace(make_request(FakeProvider(), RecordingSink()), provider=LeakyProvider())
    with pytest.raises(TurnFailed) as caught:
        await run_turn(request)
    assert caught.value.data["reason"] == "provider_error"  # type: ignore[index,call-overload]
    assert "OSError" in caught.value.message


class GoneSink(RecordingSink):
    async def send_update(self, update: object) -> None:
        raise PeerGone()


@pytest.mark.anyio
async def test_a_failing_sink_is_not_mistaken_for_a_provider_fault() -> None:
    provider = FakeProvider([start(), *text("Hi"), finish()])
    with pytest.raises(PeerGone):
        await run_turn(make_request(provider, GoneSink()))
    assert len(provider.requests) == 1  # no retry either
