"""One step of a script attempt, checked: text, thought, tool call, usage, finish or a fault.

A tool call's arguments are cut into fragments here (`split_evenly`) unless the script
spells the fragments out; `BREAK_KINDS` are the faults a `break` step may name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from acp_bridge._json import JsonObject
from acp_bridge.providers._errors import FaultKind
from acp_bridge.providers._events import FinishReason
from acp_bridge.providers.scripted._checks import (
    Where,
    check_count,
    check_delay,
    check_keys,
    check_object,
    check_optional_text,
    check_retry_after,
    check_string,
    check_text,
    is_int,
)
from acp_bridge.providers.scripted._model import (
    BreakStep,
    EofStep,
    FinishStep,
    HttpErrorStep,
    RefuseConnectionStep,
    ScriptStep,
    TextStep,
    ThoughtStep,
    ToolCallStep,
    UsageStep,
)

__all__ = ["BREAK_KINDS", "DEFAULT_ARGUMENT_FRAGMENTS", "parse_step", "split_evenly"]

DEFAULT_ARGUMENT_FRAGMENTS = 4

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


def parse_step(data: object, where: Where) -> ScriptStep:
    obj = check_object(data, 'a step must be an object such as {"text": "Hello"}', where)
    kinds = [key for key in obj if key in _STEP_OPTIONS]
    if len(kinds) != 1:
        found = ", ".join(kinds) if kinds else "none"
        where.fail(f"a step needs exactly one of {', '.join(_STEP_OPTIONS)}; found {found}")
    kind = kinds[0]
    check_keys(obj, _STEP_OPTIONS[kind] | _COMMON_STEP_KEYS | {kind}, f"{kind!r} step", where)
    if "comment" in obj:
        check_string(obj["comment"], "'comment'", where)
    delay = check_delay(obj.get("delay_ms"), where)
    value = obj[kind]
    if kind in ("text", "thought"):
        text, fragments = _fragments(value, kind, where)
        if kind == "text":
            return TextStep(text=text, fragments=fragments, delay_ms=delay)
        signature = obj.get("signature")
        if signature is not None:
            signature = check_text(signature, "'signature'", where)
        return ThoughtStep(text=text, fragments=fragments, signature=signature, delay_ms=delay)
    if kind == "tool_call":
        return _tool_call(obj, delay, where)
    if kind == "usage":
        usage = check_object(value, "'usage' must be an object of token counts", where)
        check_keys(usage, frozenset(_USAGE_KEYS), "'usage'", where)
        counts = {key: check_count(usage.get(key, 0), f"'{key}'", where) for key in _USAGE_KEYS}
        return UsageStep(**counts, delay_ms=delay)
    if kind == "finish":
        return _finish(value, obj.get("raw_reason"), delay, where)
    if kind == "break":
        return _break(obj, delay, where)
    if kind == "http_error":
        status = value
        if not is_int(status) or not 400 <= status <= 599:
            where.fail(f"'http_error' must be an HTTP error status (400-599); got {status!r}")
        return HttpErrorStep(
            status=status,
            retry_after=check_retry_after(obj.get("retry_after"), where),
            message=check_optional_text(obj.get("message"), "'message'", where),
            delay_ms=delay,
        )
    if value is not True:
        where.fail(f"{kind!r} takes the value true; got {value!r}")
    if kind == "eof":
        return EofStep(delay_ms=delay)
    return RefuseConnectionStep(
        message=check_optional_text(obj.get("message"), "'message'", where), delay_ms=delay
    )


def _fragments(value: object, kind: str, where: Where) -> tuple[str, tuple[str, ...] | None]:
    if isinstance(value, str):
        return check_text(value, f"{kind!r}", where), None
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        fragments = tuple(str(v) for v in value)
        return "".join(fragments), fragments
    return where.fail(
        f"{kind!r} must be a non-empty string or a non-empty list of non-empty strings"
    )


def _tool_call(obj: JsonObject, delay: int | None, where: Where) -> ToolCallStep:
    name = check_text(obj["tool_call"], "'tool_call' (the tool name)", where)
    call_id = check_optional_text(obj.get("id"), "'id'", where)
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
    if not is_int(split) or split < 1:
        where.fail(f"'fragments' must be a count of at least 1 or a list; got {split!r}")
    raw = json.dumps(arguments, ensure_ascii=False)
    return ToolCallStep(name, arguments, raw, split_evenly(raw, split), call_id, delay)


def _finish(value: object, raw_reason: object, delay: int | None, where: Where) -> FinishStep:
    reasons = [reason.value for reason in FinishReason]
    if value == "auto":
        reason = None
    elif isinstance(value, str) and value in reasons:
        reason = FinishReason(value)
    else:
        where.fail(f"'finish' must be 'auto' or one of {', '.join(reasons)}; got {value!r}")
    return FinishStep(reason, check_optional_text(raw_reason, "'raw_reason'", where), delay)


def _break(obj: JsonObject, delay: int | None, where: Where) -> BreakStep:
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
        message=check_optional_text(obj.get("message"), "'message'", where),
        retry_after=check_retry_after(obj.get("retry_after"), where),
        delay_ms=delay,
    )
