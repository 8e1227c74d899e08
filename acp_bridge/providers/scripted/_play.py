"""Playing one attempt of a script: steps in, normalized stream events out (sans-IO).

`play_attempt` is a plain generator. It yields `StreamEvent`s, and `Pause`s where the script
asks for a delay, and raises `ModelStreamError` at a fault after everything before it was
yielded (SCRIPT-030..033). The provider turns pauses into `anyio.sleep`. The events look
like a real adapter's: `StreamStart` first, a tool call as start, argument fragments and
complete at the end of its block, `Finish(tool_calls)` when the attempt made calls.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from acp_bridge.providers._errors import FaultKind, ModelStreamError, Phase, kind_for_status
from acp_bridge.providers._events import (
    Finish,
    FinishReason,
    StreamEvent,
    StreamStart,
    TextDelta,
    ThoughtDelta,
    ToolCallComplete,
    ToolCallDelta,
    ToolCallStart,
    Usage,
)
from acp_bridge.providers.scripted._model import (
    BreakStep,
    EofStep,
    FinishStep,
    HttpErrorStep,
    RefuseConnectionStep,
    ScriptAttempt,
    ScriptStep,
    TextStep,
    ThoughtStep,
    ToolCallStep,
    UsageStep,
)

__all__ = [
    "PROMPT_PLACEHOLDER",
    "Pause",
    "PlayContext",
    "play_attempt",
    "play_epilogue",
    "split_words",
]

PROMPT_PLACEHOLDER = "${prompt}"
TOOL_RESULT_PLACEHOLDER = "${tool_result}"

_WORD = re.compile(r"\s*\S+\s*")

_BREAK_MESSAGES = {
    FaultKind.STREAM_INTERRUPTED: "the connection was reset mid-stream",
    FaultKind.INCOMPLETE_STREAM: "the stream ended without a finish",
    FaultKind.IDLE_TIMEOUT: "the stream went silent",
    FaultKind.MALFORMED_TOOL_CALL: "the model produced a malformed tool call",
    FaultKind.SERVER_ERROR: "the server reported an error mid-stream",
    FaultKind.OVERLOADED: "the server is overloaded",
    FaultKind.RATE_LIMITED: "rate limited mid-stream",
    FaultKind.PROVIDER_ERROR: "the provider reported an error mid-stream",
}


@dataclass(frozen=True, slots=True)
class Pause:
    """Wait this long before the next event (a script's `delay_ms`)."""

    seconds: float


@dataclass(frozen=True, slots=True)
class PlayContext:
    """Where in the turn this attempt plays; used for ids, messages and `${prompt}`.

    `delay_ms` is the script's default pause; `pace_ms`, when set, replaces every pause.
    """

    script: str
    provider: str
    model: str
    turn: int
    call: int
    attempt: int
    prompt: str = ""
    delay_ms: int = 0
    pace_ms: int | None = None
    tool_result: str = ""

    def where(self, step: int) -> str:
        return f"script {self.script!r}, call {self.call}, attempt {self.attempt}, step {step}"


def split_words(text: str) -> tuple[str, ...]:
    """One fragment per word, each carrying the whitespace around it (SCRIPT-021)."""
    words = _WORD.findall(text)
    if not words:
        return (text,)
    # Whitespace before the first word is kept by the pattern; nothing is lost.
    return tuple(words)


def play_attempt(attempt: ScriptAttempt, ctx: PlayContext) -> Iterator[StreamEvent | Pause]:
    """Yield the attempt's events; raise `ModelStreamError` where the script has a fault."""
    started = False
    tool_calls = 0
    for number, step in enumerate(attempt.steps, start=1):
        pause = _pause_ms(step, number, ctx)
        if pause:
            yield Pause(pause / 1000)
        if isinstance(step, RefuseConnectionStep):
            # SCRIPT-031: nothing was received, not even the start of the stream.
            message = step.message or "connection refused"
            raise ModelStreamError(
                FaultKind.CONNECTION_FAILED,
                f"{message} ({ctx.where(number)})",
                phase=Phase.CONNECT,
            )
        if isinstance(step, HttpErrorStep):
            raise _http_error(step, ctx, number)
        if not started:
            started = True
            yield StreamStart(ctx.provider, ctx.model, _request_id(ctx))
        if isinstance(step, TextStep):
            for fragment in _deliver(step.text, step.fragments, ctx):
                yield TextDelta(fragment)
        elif isinstance(step, ThoughtStep):
            fragments = _deliver(step.text, step.fragments, ctx)
            for index, fragment in enumerate(fragments, start=1):
                last = index == len(fragments)
                yield ThoughtDelta(fragment, signature=step.signature if last else None)
        elif isinstance(step, ToolCallStep):
            yield from _tool_call(step, tool_calls, ctx)
            tool_calls += 1
        elif isinstance(step, UsageStep):
            yield Usage(
                step.input_tokens,
                step.output_tokens,
                step.cached_input_tokens,
                step.reasoning_tokens,
            )
        elif isinstance(step, FinishStep):
            auto = FinishReason.TOOL_CALLS if tool_calls else FinishReason.STOP
            yield Finish(step.reason or auto, step.raw_reason)
            return
        elif isinstance(step, BreakStep):
            # SCRIPT-030: everything before the break was yielded; the stream ends here.
            message = step.message or _BREAK_MESSAGES[step.kind]
            raise ModelStreamError(
                step.kind, f"{message} ({ctx.where(number)})", retry_after=step.retry_after
            )
        else:
            assert isinstance(step, EofStep)
            # SCRIPT-033: a clean end without a terminal marker is never a finish.
            raise ModelStreamError(
                FaultKind.INCOMPLETE_STREAM,
                f"the stream ended cleanly without a finish ({ctx.where(number)})",
            )


def play_epilogue(ctx: PlayContext) -> Iterator[StreamEvent]:
    """SCRIPT-012: a model call past the script's last one ends the turn politely."""
    yield StreamStart(ctx.provider, ctx.model, _request_id(ctx))
    text = f"That is all: the script {ctx.script} has no model call {ctx.call}."
    for fragment in split_words(text):
        yield TextDelta(fragment)
    yield Finish(FinishReason.STOP)


def _pause_ms(step: ScriptStep, number: int, ctx: PlayContext) -> int:
    # SCRIPT-034: a step's own delay always applies; the default only between steps.
    if ctx.pace_ms is not None:
        return ctx.pace_ms if number > 1 else 0
    if step.delay_ms is not None:
        return step.delay_ms
    return ctx.delay_ms if number > 1 else 0


def _expand(text: str, ctx: PlayContext) -> str:
    # SCRIPT-040, SCRIPT-015: the placeholders, expanded before word splitting.
    text = text.replace(PROMPT_PLACEHOLDER, ctx.prompt)
    return text.replace(TOOL_RESULT_PLACEHOLDER, ctx.tool_result)


def _deliver(text: str, fragments: tuple[str, ...] | None, ctx: PlayContext) -> tuple[str, ...]:
    if fragments is not None:
        return tuple(_expand(piece, ctx) for piece in fragments)
    return split_words(_expand(text, ctx))


def _tool_call(step: ToolCallStep, index: int, ctx: PlayContext) -> Iterator[StreamEvent]:
    # SCRIPT-023: without an explicit id, each turn, call and attempt gets a fresh one,
    # as real providers assign ids per generation.
    call_id = step.call_id or f"scripted-{ctx.turn}.{ctx.call}.{ctx.attempt}.{index}"
    yield ToolCallStart(call_id, step.name, index)
    for fragment in step.fragments:
        yield ToolCallDelta(call_id, index, fragment)
    # A fresh dict per play: consumers may keep or change what they receive.
    arguments = json.loads(step.raw_arguments)
    yield ToolCallComplete(call_id, step.name, arguments, step.raw_arguments)


def _http_error(step: HttpErrorStep, ctx: PlayContext, number: int) -> ModelStreamError:
    kind, retryable = kind_for_status(step.status)  # SCRIPT-032
    import http  # HTTPStatus is a large enum: built when a script plays an error (cold start)

    try:
        phrase = http.HTTPStatus(step.status).phrase
    except ValueError:
        phrase = "Error"
    message = step.message or f"HTTP {step.status} {phrase}"
    return ModelStreamError(
        kind,
        f"{message} ({ctx.where(number)})",
        phase=Phase.CONNECT,
        retryable=retryable,
        status=step.status,
        retry_after=step.retry_after,
    )


def _request_id(ctx: PlayContext) -> str:
    return f"{ctx.script}/{ctx.turn}.{ctx.call}.{ctx.attempt}"
