"""The retry policy (sans-IO) and the error a turn ends with when retrying cannot help.

`RetryPolicy.decide` classifies a `ModelStreamError` and computes the back-off: exponential
with full jitter, the server's Retry-After honoured as a floor but capped (a longer wait is a
"try later" failure, not a sleep), at most `max_attempts` per model call and
`max_retries_per_turn` per turn (TURN-009..TURN-012). `TurnFailed` carries the reason on the
wire in `data`, never a bare "Internal error".
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from acp_bridge._json import JsonValue
from acp_bridge.errors import INTERNAL_ERROR, InternalError
from acp_bridge.providers import FaultKind, ModelStreamError

__all__ = ["GiveUp", "RetryDecision", "RetryPolicy", "TurnFailed"]

# HTTP statuses worth another attempt (spec/reset-extension.md#turn-009).
_RETRYABLE_STATUSES = frozenset({408, 429, 499, 500, 502, 503, 504, 529})


class GiveUp(enum.StrEnum):
    """Why the policy stopped retrying."""

    NOT_RETRYABLE = "not_retryable"
    ATTEMPTS_EXHAUSTED = "attempts_exhausted"
    TURN_BUDGET_EXHAUSTED = "turn_budget_exhausted"
    RETRY_AFTER_TOO_LONG = "retry_after_too_long"
    MAX_WAIT_EXCEEDED = "max_wait_exceeded"


@dataclass(frozen=True, slots=True)
class RetryDecision:
    """Retry after `delay` seconds, or give up for the reason in `give_up`."""

    retry: bool
    delay: float = 0.0
    give_up: GiveUp | None = None


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How the bridge retries a failed model call. Every field has a safe interactive default.

    Attributes:
        max_attempts: attempts per model call, the first included.
        max_retries_per_turn: retries across all model calls of one turn.
        base_delay / max_delay: full-jitter back-off ``uniform(0, min(max, base * 2**(n-1)))``
            for the n-th retry of a model call.
        max_retry_after: the longest server-requested wait the bridge sleeps; above it the turn
            fails with ``retryableLater`` and ``retryAfterSeconds``.
        content_filter_retries: how often a content-filter / refusal finish is retried (off).
        max_wait: the longest a model call waits without progress, back-offs and retries
            included, before the turn fails (None: no cap; WAIT-003).
        stall_notice_after: after this long without data the user is told the stream is
            stalled, before any timeout fires (None: never; WAIT-002).
    """

    max_attempts: int = 4
    max_retries_per_turn: int = 8
    base_delay: float = 1.0
    max_delay: float = 8.0
    max_retry_after: float = 30.0
    content_filter_retries: int = 0
    max_wait: float | None = 180.0
    stall_notice_after: float | None = 15.0

    def is_retryable(self, error: ModelStreamError) -> bool:
        """TURN-009: the adapter's classification, with 4xx client errors never retried."""
        status = error.status
        if status is not None and 400 <= status < 500 and status not in _RETRYABLE_STATUSES:
            return False
        # A 429 can still be final (quota exhausted): the adapter's `retryable` says so.
        return error.retryable

    def backoff(self, retry_number: int, random: Callable[[], float]) -> float:
        """Full jitter for the `retry_number`-th retry (1-based) of one model call."""
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** max(retry_number - 1, 0))
        return random() * ceiling

    def decide(
        self,
        error: ModelStreamError,
        *,
        attempt: int,
        retries_in_turn: int,
        random: Callable[[], float],
    ) -> RetryDecision:
        """Whether attempt `attempt` (1-based) of a model call, which failed with `error`,
        is retried; `retries_in_turn` counts the retries already made in this turn."""
        if not self.is_retryable(error):
            return RetryDecision(False, give_up=GiveUp.NOT_RETRYABLE)
        if error.retry_after is not None and error.retry_after > self.max_retry_after:
            return RetryDecision(False, give_up=GiveUp.RETRY_AFTER_TOO_LONG)
        if attempt >= self.max_attempts:
            return RetryDecision(False, give_up=GiveUp.ATTEMPTS_EXHAUSTED)
        if retries_in_turn >= self.max_retries_per_turn:
            return RetryDecision(False, give_up=GiveUp.TURN_BUDGET_EXHAUSTED)
        delay = self.backoff(attempt, random)
        if error.retry_after is not None:
            delay = max(delay, error.retry_after)  # the server's wait is a floor (TURN-011)
        return RetryDecision(True, delay=delay)


class TurnFailed(InternalError):
    """A prompt turn failed because the model could not be reached or kept failing.

    JSON-RPC code -32603 (ACP has no narrower code for a failed model call); `data` says why:
    ``{"reason", "attempts", "retryableLater", "modelCall", "giveUp", "retryAfterSeconds"?,
    "status"?, "providerCode"?}`` (TURN-012).
    """

    code = INTERNAL_ERROR

    def __init__(self, message: str, data: dict[str, JsonValue]) -> None:
        super().__init__(message, data)
        self.details = data

    @classmethod
    def from_error(
        cls,
        error: ModelStreamError,
        give_up: GiveUp,
        *,
        attempts: int,
        model_call: int,
        policy: RetryPolicy,
    ) -> TurnFailed:
        retryable_later = give_up is not GiveUp.NOT_RETRYABLE
        data: dict[str, JsonValue] = {
            "reason": error.kind.value,
            "attempts": attempts,
            "retryableLater": retryable_later,
            "modelCall": model_call,
            "giveUp": give_up.value,
        }
        if error.retry_after is not None:
            data["retryAfterSeconds"] = error.retry_after
        if error.status is not None:
            data["status"] = error.status
        if error.provider_code is not None:
            data["providerCode"] = error.provider_code
        what = f"{error.kind.value}" + (f", HTTP {error.status}" if error.status else "")
        if give_up is GiveUp.MAX_WAIT_EXCEEDED:
            message = error.message
        elif give_up is GiveUp.RETRY_AFTER_TOO_LONG:
            message = (
                f"The model provider asked to wait {error.retry_after:g} s before retrying "
                f"({what}), longer than the {policy.max_retry_after:g} s the bridge waits. "
                "Try again later."
            )
        elif error.kind is FaultKind.CONTEXT_LENGTH_EXCEEDED:  # COMPACT-002: not compactable
            message = (
                f"The request does not fit the model's context window ({what}): "
                f"{_sentence(error.message)} Compacting the conversation could not make it "
                "fit; send a shorter prompt, or switch to a model with a larger window."
            )
        elif error.kind is FaultKind.UNPARSED_OUTPUT:  # UNPARSED-001: final, never as is
            message = (
                f"The model's output could not be parsed as a tool call or an answer by the "
                f"model server ({what}): {_sentence(error.message)} Asked again once with the "
                "format spelled out, and the same request gets the same output, so it was not "
                "sent again. Try asking again in other words (one step at a time helps small "
                "models), or use a model or chat template whose tool calls the server can "
                "parse."
            )
        elif give_up is GiveUp.NOT_RETRYABLE:
            message = (
                f"The model request failed ({what}): {_sentence(error.message)} "
                "Retrying will not help until the cause is fixed."
            )
        else:
            limit = "attempts" if give_up is GiveUp.ATTEMPTS_EXHAUSTED else "retries this turn"
            # A server that cannot be reached is fixed by what the message names, not by time.
            after = (
                "fix what the message names, then send the prompt again"
                if error.kind is FaultKind.CONNECTION_FAILED
                else "trying again later may help"
            )
            message = (
                f"The model call failed {attempts} time(s) in a row ({what}): "
                f"{_sentence(error.message)} Gave up after the maximum {limit}; {after}."
            )
        return cls(message, data)


def _sentence(text: str) -> str:
    """`text` ended as a sentence: a shortened message keeps its "…" alone, never "…."."""
    text = text.rstrip()
    return text if text.endswith((".", "…", "!", "?")) else f"{text}."
