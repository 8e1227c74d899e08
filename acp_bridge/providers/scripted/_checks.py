"""What every part of a script is checked with: `ScriptError`, the place it names, the values.

A `Where` is the 1-based call, attempt and step being read; its `fail` raises the
`ScriptError` that names them (SCRIPT-051). The value checks fail through it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NoReturn, TypeGuard

from acp_bridge._json import JsonObject
from acp_bridge.errors import AcpBridgeError

__all__ = [
    "MAX_DELAY_MS",
    "ScriptError",
    "Where",
    "check_count",
    "check_delay",
    "check_keys",
    "check_object",
    "check_optional_text",
    "check_retry_after",
    "check_string",
    "check_text",
    "is_int",
]

MAX_DELAY_MS = 60_000


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
class Where:
    """Where in a script a value is read: the file and the 1-based call, attempt, step."""

    source: str
    call: int | None = None
    attempt: int | None = None
    step: int | None = None

    def fail(self, problem: str) -> NoReturn:
        raise ScriptError(
            self.source, problem, call=self.call, attempt=self.attempt, step=self.step
        )


def check_object(value: object, problem: str, where: Where) -> JsonObject:
    if not isinstance(value, dict):
        where.fail(problem)
    return value


def check_keys(obj: JsonObject, allowed: frozenset[str], what: str, where: Where) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        where.fail(f"unknown key {unknown[0]!r} in {what} (allowed: {', '.join(sorted(allowed))})")


def check_string(value: object, what: str, where: Where) -> str:
    if not isinstance(value, str):
        where.fail(f"{what} must be a string")
    return value


def check_text(value: object, what: str, where: Where) -> str:
    if not isinstance(value, str) or not value:
        where.fail(f"{what} must be a non-empty string")
    return value


def check_optional_text(value: object, what: str, where: Where) -> str | None:
    return None if value is None else check_text(value, what, where)


def is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def check_count(value: object, what: str, where: Where) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        where.fail(f"{what} must be a whole number >= 0")
    return value


def check_delay(value: object, where: Where) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_DELAY_MS:
        where.fail(f"'delay_ms' must be a whole number of milliseconds, 0-{MAX_DELAY_MS}")
    return value


def check_retry_after(value: object, where: Where) -> float | None:
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
