"""The parsed form of a script: what the scripted model will stream, call by call.

A `Script` is a list of model calls (the tool loop); a `ScriptCall` is a list of attempts
(the turn engine's retries); a `ScriptAttempt` is a list of steps. Steps are plain frozen
records: the player (`_play.py`) turns them into stream events, the parser (`_parse.py`)
builds them from JSON. See spec/scripted-stream.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from acp_bridge._json import JsonObject
from acp_bridge.providers._errors import FaultKind
from acp_bridge.providers._events import FinishReason

__all__ = [
    "BreakStep",
    "EofStep",
    "FinishStep",
    "HttpErrorStep",
    "RefuseConnectionStep",
    "Script",
    "ScriptAttempt",
    "ScriptCall",
    "ScriptStep",
    "TextStep",
    "ThoughtStep",
    "ToolCallStep",
    "UsageStep",
]


@dataclass(frozen=True, slots=True)
class TextStep:
    """Answer text. `fragments` None: split into one delta per word at play time (SCRIPT-021)."""

    text: str
    fragments: tuple[str, ...] | None = None
    delay_ms: int | None = None


@dataclass(frozen=True, slots=True)
class ThoughtStep:
    """Visible reasoning; the signature rides on the last thought delta (SCRIPT-022)."""

    text: str
    fragments: tuple[str, ...] | None = None
    signature: str | None = None
    delay_ms: int | None = None


@dataclass(frozen=True, slots=True)
class ToolCallStep:
    """A whole tool call: start, argument fragments, complete (SCRIPT-023).

    `fragments` always joins to `raw_arguments`, which parses to `arguments`.
    `call_id` None: the player synthesizes one that differs per turn, call and attempt.
    """

    name: str
    arguments: JsonObject
    raw_arguments: str
    fragments: tuple[str, ...]
    call_id: str | None = None
    delay_ms: int | None = None


@dataclass(frozen=True, slots=True)
class UsageStep:
    """A usage report, as the model's stream carries one."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    reasoning_tokens: int = 0
    delay_ms: int | None = None


@dataclass(frozen=True, slots=True)
class FinishStep:
    """The terminal marker. `reason` None means auto: tool_calls if the attempt made any."""

    reason: FinishReason | None = None
    raw_reason: str | None = None
    delay_ms: int | None = None


@dataclass(frozen=True, slots=True)
class BreakStep:
    """The stream breaks here, mid-body (phase stream)."""

    kind: FaultKind = FaultKind.STREAM_INTERRUPTED
    message: str | None = None
    retry_after: float | None = None
    delay_ms: int | None = None


@dataclass(frozen=True, slots=True)
class RefuseConnectionStep:
    """The connection is refused before any byte arrives (phase connect)."""

    message: str | None = None
    delay_ms: int | None = None


@dataclass(frozen=True, slots=True)
class HttpErrorStep:
    """The server answers with an HTTP error status instead of a stream (phase connect)."""

    status: int
    retry_after: float | None = None
    message: str | None = None
    delay_ms: int | None = None


@dataclass(frozen=True, slots=True)
class EofStep:
    """The body ends cleanly without a finish: an incomplete stream."""

    delay_ms: int | None = None


ScriptStep: TypeAlias = (
    TextStep
    | ThoughtStep
    | ToolCallStep
    | UsageStep
    | FinishStep
    | BreakStep
    | RefuseConnectionStep
    | HttpErrorStep
    | EofStep
)


@dataclass(frozen=True, slots=True)
class ScriptAttempt:
    """One attempt of a model call; it ends with a finish or with a fault (SCRIPT-005)."""

    steps: tuple[ScriptStep, ...]


@dataclass(frozen=True, slots=True)
class ScriptCall:
    """One model call of the tool loop: the attempts the model makes, in order.

    `when_tool_failed`: the attempts played instead when a tool result of the previous round
    is an error, so the scripted model reads the tool result as a real one would (SCRIPT-015).
    """

    attempts: tuple[ScriptAttempt, ...]
    when_tool_failed: tuple[ScriptAttempt, ...] = ()

    def attempt(self, number: int, *, tool_failed: bool = False) -> ScriptAttempt:
        """The attempt played for 1-based `number`; past the end the last one repeats."""
        attempts = self.when_tool_failed if tool_failed and self.when_tool_failed else self.attempts
        # SCRIPT-011: more attempts than listed replay the last attempt.
        index = min(max(number, 1), len(attempts)) - 1
        return attempts[index]


@dataclass(frozen=True, slots=True)
class Script:
    """A named model stream: the description is what an editor shows for `/name`."""

    name: str
    description: str
    calls: tuple[ScriptCall, ...]
    input_hint: str | None = None
    delay_ms: int = 0
    source: str = "<memory>"

    def call(self, number: int) -> ScriptCall | None:
        """The 1-based model call `number`, or None when the script has no such call."""
        if 1 <= number <= len(self.calls):
            return self.calls[number - 1]
        return None
