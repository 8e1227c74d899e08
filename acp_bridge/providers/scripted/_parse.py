"""Script files: JSON in, a validated `Script` out, or a `ScriptError` that says where.

Validation happens once, here; the player trusts what it gets. Every error names the file,
the 1-based call, attempt and step, and what is wrong (SCRIPT-051). Unknown keys are errors:
a typo in a fault must not silently turn into a clean stream. The script, its calls and
attempts are read here, each step by `_steps`, every value with `_checks`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

from acp_bridge.providers.scripted._checks import (
    ScriptError,
    Where,
    check_delay,
    check_keys,
    check_object,
    check_string,
    check_text,
)
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
)
from acp_bridge.providers.scripted._steps import parse_step

__all__ = ["load_script", "loads_script", "parse_script"]

SCRIPT_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
_SCRIPT_KEYS = frozenset({"name", "description", "calls", "input_hint", "delay_ms", "comment"})
_SCRIPT_KEYS_ALL = _SCRIPT_KEYS | {"version"}
_CALL_KEYS = frozenset({"attempts", "comment", "when_tool_failed"})
_TERMINAL = (FinishStep, BreakStep, RefuseConnectionStep, HttpErrorStep, EofStep)
_CONNECT_FAULTS = (RefuseConnectionStep, HttpErrorStep)


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
    where = Where(source)
    obj = check_object(data, "a script must be a JSON object", where)
    check_keys(obj, _SCRIPT_KEYS_ALL, "script", where)
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
    description = check_text(obj["description"], "'description'", where)
    hint = obj.get("input_hint")
    input_hint = None if hint is None else check_text(hint, "'input_hint'", where)
    if "comment" in obj:
        check_string(obj["comment"], "'comment'", where)
    delay = check_delay(obj.get("delay_ms"), where)
    raw_calls = obj["calls"]
    if not isinstance(raw_calls, list) or not raw_calls:
        where.fail("'calls' must be a non-empty list of model calls")
    calls = tuple(
        _call(raw, Where(source, call=index)) for index, raw in enumerate(raw_calls, start=1)
    )
    return Script(
        name=name,
        description=description,
        calls=calls,
        input_hint=input_hint,
        delay_ms=0 if delay is None else delay,
        source=source,
    )


def _call(data: object, where: Where) -> ScriptCall:
    obj = check_object(data, 'a call must be an object: {"attempts": [...]}', where)
    check_keys(obj, _CALL_KEYS, "call", where)
    if "comment" in obj:
        check_string(obj["comment"], "'comment'", where)
    attempts = _attempts(obj.get("attempts"), "attempts", where)
    failed = (
        ()
        if "when_tool_failed" not in obj
        else _attempts(obj["when_tool_failed"], "when_tool_failed", where)
    )
    return ScriptCall(attempts=attempts, when_tool_failed=failed)


def _attempts(raw_attempts: object, key: str, where: Where) -> tuple[ScriptAttempt, ...]:
    if not isinstance(raw_attempts, list) or not raw_attempts:
        where.fail(f"'{key}' must be a non-empty list of attempts (each a list of steps)")
    attempts = []
    for number, raw in enumerate(raw_attempts, start=1):
        here = Where(where.source, call=where.call, attempt=number)
        if not isinstance(raw, list) or not raw:
            here.fail("an attempt must be a non-empty list of steps")
        attempts.append(_attempt(raw, here))
    return tuple(attempts)


def _attempt(raw: Sequence[object], where: Where) -> ScriptAttempt:
    steps: list[ScriptStep] = []
    for number, item in enumerate(raw, start=1):
        here = Where(where.source, where.call, where.attempt, number)
        step = parse_step(item, here)
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
