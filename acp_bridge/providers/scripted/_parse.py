"""Script files: JSON in, a validated `Script` out, or a `ScriptError` that says where.

Validation happens once, here; the player trusts what it gets. Every error names the file,
the 1-based call, attempt and step, and what is wrong (SCRIPT-051). Unknown keys are errors:
a typo in a fault must not silently turn into a clean stream.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, TypeGuard

from acp_bridge._json import JsonObject
from acp_bridge.errors import AcpBridgeError
from acp_bridge.providers._errors import FaultKind
from acp_bridge.providers._events import FinishReason
from acp_bridge.providers.scripted._model import (
    BreakStep,
    EofStep,
    FinishStep,
    HttpErrorStep,
    RefuseConnectionStep,
    Script,
    ScriptAttempt,
    ScriptCall,
    ScriptStep,
    TextStep,
    ThoughtStep,
    ToolCallStep,
    UsageStep,
)

__all__ = [
    "BREAK_KINDS",
    "DEFAULT_ARGUMENT_FRAGMENTS",
    "ScriptError",
    "load_script",
    "loads_script",
    "parse_script",
    "split_evenly",
]

SCRIPT_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
DEFAULT_ARGUMENT_FRAGMENTS = 4
MAX_DELAY_MS = 60_000

BREAK_KINDS = frozenset(
    {
        FaultKind.STREAM_INTERRUPTED,
        FaultKind.INCOMPLETE_STREAM,
        FaultKind.IDLE_TIMEOUT,
        FaultKind.MALFORMED_TOOL_CALL,
        FaultKind.SERVER_ERROR,
        FaultKind.OVERLOADED,
        FaultKind.RATE_LIMITED,
        FaultKind.PROVIDER_ERROR,
    }
)

_SCRIPT_KEYS = frozenset({"name", "description", "calls", "input_hint", "delay_ms", "comment"})
_SCRIPT_KEYS_ALL = _SCRIPT_KEYS | {"version"}
_CALL_KEYS = frozenset({"attempts", "comment", "when_tool_failed"})
_COMMON_STEP_KEYS = frozenset({"delay_ms", "comment"})
_STEP_OPTIONS: Mapping[str, frozenset[str]] = {
    "text": frozenset(),
    "thought": frozenset({"signature"}),
    "tool_call": frozenset({"arguments", "id", "fragments"}),
    "usage": frozenset(),
    "finish": frozenset({"raw_reason"}),
    "break": frozenset({"message", "retry_after"}),
    "refuse_connection": frozenset({"message"}),
    "http_error": frozenset({"retry_after", "message"}),
    "eof": frozenset(),
}
_USAGE_KEYS = ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens")
_TERMINAL = (FinishStep, BreakStep, RefuseConnectionStep, HttpErrorStep, EofStep)
_CONNECT_FAULTS = (RefuseConnectionStep, HttpErrorStep)


class ScriptError(AcpBridgeError):
    """A script file is not valid. `call`, `attempt` and `step` are 1-based, None if n/a."""

    def __init__(
        self,
        source: str,
        problem: str,
        *,
        call: int | None = None,
        attempt: int | None = None,
        step: int | None = None,
    ) -> None:
        where = ", ".join(
            f"{label} {number}"
            for label, number in (("call", call), ("attempt", attempt), ("step", step))
            if number is not None
        )
        super().__init__(f"{source}: {where}: {problem}" if where else f"{source}: {problem}")
        self.source = source
        self.problem = problem
        self.call = call
        self.attempt = attempt
        self.step = step


@dataclass(frozen=True, slots=True)
class _Where:
    source: str
    call: int | None = None
    attempt: int | None = None
    step: int | None = None

    def fail(self, problem: str) -> NoReturn:
        raise ScriptError(
            self.source, problem, call=self.call, attempt=self.attempt, step=self.step
        )


def load_script(path: str | os.PathLike[str]) -> Script:
    """Read and validate one script file (UTF-8 JSON)."""
    source = os.fspath(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScriptError(source, f"cannot read the script file: {exc}") from exc
    return loads_script(text, source=source)


def loads_script(text: str, *, source: str = "<memory>") -> Script:
    """Validate a script given as JSON text; `source` names it in errors."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScriptError(
            source, f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from exc
    return parse_script(data, source=source)


def parse_script(data: object, *, source: str = "<memory>") -> Script:
    """Validate a decoded JSON value as a script (SCRIPT-001..005)."""
    where = _Where(source)
    obj = _object(data, "a script must be a JSON object", where)
    _check_keys(obj, _SCRIPT_KEYS_ALL, "script", where)
    for key in ("name", "description", "calls"):
        if key not in obj:
            where.fail(f"missing required key {key!r}")
    if "version" in obj and (obj["version"] != 1 or isinstance(obj["version"], bool)):
        where.fail("'version' must be 1 (the only format version)")
    name = obj["name"]
    if not isinstance(name, str) or SCRIPT_NAME.fullmatch(name) is None:
        where.fail(
            "'name' must be 1-64 characters of a-z, 0-9 and '-', starting with a letter or "
            f"digit (it becomes a slash command); got {name!r}"
        )
    description = _text(obj["description"], "'description'", where)
    hint = obj.get("input_hint")
    input_hint = None if hint is None else _text(hint, "'input_hint'", where)
    if "comment" in obj:
        _string(obj["comment"], "'comment'", where)
    delay = _delay(obj.get("delay_ms"), where)
    raw_calls = obj["calls"]
    if not isinstance(raw_calls, list) or not raw_calls:
        where.fail("'calls' must be a non-empty list of model calls")
    calls = tuple(
        _call(raw, _Where(source, call=index)) for index, raw in enumerate(raw_calls, start=1)
    )
    return Script(
        name=name,
        description=description,
        calls=calls,
        input_hint=input_hint,
        delay_ms=0 if delay is None else delay,
        source=source,
    )


def split_evenly(text: str, count: int) -> tuple[str, ...]:
    """Cut `text` into `count` contiguous pieces of near-equal length (fewer if it is short)."""
    count = max(1, min(count, len(text)))
    size, extra = divmod(len(text), count)
    pieces: list[str] = []
    start = 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        pieces.append(text[start:end])
        start = end
    return tuple(pieces)


def _call(data: object, where: _Where) -> ScriptCall:
    obj = _object(data, 'a call must be an object: {"attempts": [...]}', where)
    _check_keys(obj, _CALL_KEYS, "call", where)
    if "comment" in obj:
        _string(obj["comment"], "'comment'", where)
    attempts = _attempts(obj.get("attempts"), "attempts", where)
    failed = (
        ()
        if "when_tool_failed" not in obj
        else _attempts(obj["when_tool_failed"], "when_tool_failed", where)
    )
    return ScriptCall(attempts=attempts, when_tool_failed=failed)


def _attempts(raw_attempts: object, key: str, where: _Where) -> tuple[ScriptAttempt, ...]:
    if not isinstance(raw_attempts, list) or not raw_attempts:
        where.fail(f"'{key}' must be a non-empty list of attempts (each a list of steps)")
    attempts = []
    for number, raw in enumerate(raw_attempts, start=1):
        here = _Where(where.source, call=where.call, attempt=number)
        if not isinstance(raw, list) or not raw:
            here.fail("an attempt must be a non-empty list of steps")
        attempts.append(_attempt(raw, here))
    return tuple(attempts)


def _attempt(raw: Sequence[object], where: _Where) -> ScriptAttempt:
    steps: list[ScriptStep] = []
    for number, item in enumerate(raw, start=1):
        here = _Where(where.source, where.call, where.attempt, number)
        step = _step(item, here)
        last = number == len(raw)
        # SCRIPT-005: a finish or a fault ends the attempt, and every attempt has one.
        if isinstance(step, _TERMINAL) and not last:
            here.fail("a finish or a fault must be the last step of its attempt")
        if isinstance(step, _CONNECT_FAULTS) and number != 1:
            kind = "refuse_connection" if isinstance(step, RefuseConnectionStep) else "http_error"
            here.fail(f"{kind} must be the only step of its attempt: nothing streams before it")
        if last and not isinstance(step, _TERMINAL):
            here.fail(
                "an attempt must end with 'finish' or a fault "
                "('break', 'eof', 'refuse_connection', 'http_error')"
            )
        steps.append(step)
    return ScriptAttempt(steps=tuple(steps))


def _step(data: object, where: _Where) -> ScriptStep:
    obj = _object(data, 'a step must be an object such as {"text": "Hello"}', where)
    kinds = [key for key in obj if key in _STEP_OPTIONS]
    if len(kinds) != 1:
        found = ", ".join(kinds) if kinds else "none"
        where.fail(f"a step needs exactly one of {', '.join(_STEP_OPTIONS)}; found {found}")
    kind = kinds[0]
    _check_keys(obj, _STEP_OPTIONS[kind] | _COMMON_STEP_KEYS | {kind}, f"{kind!r} step", where)
    if "comment" in obj:
        _string(obj["comment"], "'comment'", where)
    delay = _delay(obj.get("delay_ms"), where)
    value = obj[kind]
    if kind in ("text", "thought"):
        text, fragments = _fragments(value, kind, where)
        if kind == "text":
            return TextStep(text=text, fragments=fragments, delay_ms=delay)
        signature = obj.get("signature")
        if signature is not None:
            signature = _text(signature, "'signature'", where)
        return ThoughtStep(text=text, fragments=fragments, signature=signature, delay_ms=delay)
    if kind == "tool_call":
        return _tool_call(obj, delay, where)
    if kind == "usage":
        usage = _object(value, "'usage' must be an object of token counts", where)
        _check_keys(usage, frozenset(_USAGE_KEYS), "'usage'", where)
        counts = {key: _count(usage.get(key, 0), f"'{key}'", where) for key in _USAGE_KEYS}
        return UsageStep(**counts, delay_ms=delay)
    if kind == "finish":
        return _finish(value, obj.get("raw_reason"), delay, where)
    if kind == "break":
        return _break(obj, delay, where)
    if kind == "http_error":
        status = value
        if not _is_int(status) or not 400 <= status <= 599:
            where.fail(f"'http_error' must be an HTTP error status (400-599); got {status!r}")
        return HttpErrorStep(
            status=status,
            retry_after=_retry_after(obj.get("retry_after"), where),
            message=_optional_text(obj.get("message"), "'message'", where),
            delay_ms=delay,
        )
    if value is not True:
        where.fail(f"{kind!r} takes the value true; got {value!r}")
    if kind == "eof":
        return EofStep(delay_ms=delay)
    return RefuseConnectionStep(
        message=_optional_text(obj.get("message"), "'message'", where), delay_ms=delay
    )


def _fragments(value: object, kind: str, where: _Where) -> tuple[str, tuple[str, ...] | None]:
    if isinstance(value, str):
        return _text(value, f"{kind!r}", where), None
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        fragments = tuple(str(v) for v in value)
        return "".join(fragments), fragments
    return where.fail(
        f"{kind!r} must be a non-empty string or a non-empty list of non-empty strings"
    )


def _tool_call(obj: JsonObject, delay: int | None, where: _Where) -> ToolCallStep:
    name = _text(obj["tool_call"], "'tool_call' (the tool name)", where)
    call_id = _optional_text(obj.get("id"), "'id'", where)
    arguments = obj.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        where.fail("'arguments' must be a JSON object")
    split = obj.get("fragments", DEFAULT_ARGUMENT_FRAGMENTS)
    if isinstance(split, list):
        if not all(isinstance(piece, str) for piece in split) or not split:
            where.fail("'fragments' must be a count or a non-empty list of strings")
        fragments = tuple(str(piece) for piece in split)
        raw = "".join(fragments)
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError as exc:
            where.fail(f"the 'fragments' do not join to valid JSON: {exc.msg}")
        if not isinstance(parsed, dict):
            where.fail("the 'fragments' must join to a JSON object")
        if arguments is not None and parsed != arguments:
            where.fail("the 'fragments' join to different arguments than 'arguments'")
        return ToolCallStep(name, parsed, raw, fragments, call_id, delay)
    if arguments is None:
        where.fail("a tool_call needs 'arguments' (an object) or a list of 'fragments'")
    if not _is_int(split) or split < 1:
        where.fail(f"'fragments' must be a count of at least 1 or a list; got {split!r}")
    raw = json.dumps(arguments, ensure_ascii=False)
    return ToolCallStep(name, arguments, raw, split_evenly(raw, split), call_id, delay)


def _finish(value: object, raw_reason: object, delay: int | None, where: _Where) -> FinishStep:
    reasons = [reason.value for reason in FinishReason]
    if value == "auto":
        reason = None
    elif isinstance(value, str) and value in reasons:
        reason = FinishReason(value)
    else:
        where.fail(f"'finish' must be 'auto' or one of {', '.join(reasons)}; got {value!r}")
    return FinishStep(reason, _optional_text(raw_reason, "'raw_reason'", where), delay)


def _break(obj: JsonObject, delay: int | None, where: _Where) -> BreakStep:
    value = obj["break"]
    allowed = sorted(kind.value for kind in BREAK_KINDS)
    if value is True:
        kind = FaultKind.STREAM_INTERRUPTED
    elif isinstance(value, str) and value in allowed:
        kind = FaultKind(value)
    else:
        where.fail(f"'break' must be true or one of {', '.join(allowed)}; got {value!r}")
    return BreakStep(
        kind=kind,
        message=_optional_text(obj.get("message"), "'message'", where),
        retry_after=_retry_after(obj.get("retry_after"), where),
        delay_ms=delay,
    )


def _object(value: object, problem: str, where: _Where) -> JsonObject:
    if not isinstance(value, dict):
        where.fail(problem)
    return value


def _check_keys(obj: JsonObject, allowed: frozenset[str], what: str, where: _Where) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        where.fail(f"unknown key {unknown[0]!r} in {what} (allowed: {', '.join(sorted(allowed))})")


def _string(value: object, what: str, where: _Where) -> str:
    if not isinstance(value, str):
        where.fail(f"{what} must be a string")
    return value


def _text(value: object, what: str, where: _Where) -> str:
    if not isinstance(value, str) or not value:
        where.fail(f"{what} must be a non-empty string")
    return value


def _optional_text(value: object, what: str, where: _Where) -> str | None:
    return None if value is None else _text(value, what, where)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(value: object, what: str, where: _Where) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        where.fail(f"{what} must be a whole number >= 0")
    return value


def _delay(value: object, where: _Where) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_DELAY_MS:
        where.fail(f"'delay_ms' must be a whole number of milliseconds, 0-{MAX_DELAY_MS}")
    return value


def _retry_after(value: object, where: _Where) -> float | None:
    if value is None:
        return None
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value < 0
    ):
        where.fail("'retry_after' must be a number of seconds >= 0")
    return float(value)
